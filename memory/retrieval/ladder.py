"""The retrieval ladder: suggest notes, map a note's sections with their cost, read one.

Each rung returns a typed result; the CLI and the MCP server only render them. Every rung
reads the notes as they are on disk now: ``suggest`` refreshes the index first (re-indexing
only notes whose files changed), and ``section_map``/``read_section`` parse the file itself.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory.errors import (
    IndexUnavailable,
    InvalidArgument,
)
from memory.index import (
    Found,
    ParsedQuery,
    PartKind,
    SearchIndex,
    StoredNote,
    StoredPart,
    parse_query,
)
from memory.retrieval.context import (
    aboutness,
    blended_search,
    keep_ahead,
    keep_named_first,
    mentions,
    names,
    settled_note,
    with_prior,
)
from memory.retrieval.levers import DEFAULT, Levers
from memory.retrieval.routing import DATE_NOTES, date_ranges, route_notes, with_dates
from memory.state.store import LoadedNote, Store
from memory.state.tokens import TokenCounter

# The maps' and reads' modules are imported by the rungs that use them, and the parser when a
# note is read, so that a process that only suggests (the prompt hook) does not load them.
if TYPE_CHECKING:
    from pathlib import Path

    from memory.model.note import Section
    from memory.retrieval.coverage import LineCoverage
    from memory.retrieval.dense import DenseReader
    from memory.retrieval.recall import Recalled
    from memory.retrieval.section_scores import Evidence
    from memory.retrieval.semantic import SemanticRouter
    from memory.retrieval.zoom import Window

MAX_LIMIT = 50
NOT_PICKED = ("header", "history")  # metadata, and the container of every entry
MAP_ENTRIES = 8  # with a query, a map shows at most this many entries (the best ones)


@dataclass(frozen=True)
class SuggestHit:
    note: str
    title: str
    score: float
    state_tokens: int
    tokens: int
    matched: tuple[str, ...]


@dataclass(frozen=True)
class Suggestions:
    query: str
    hits: tuple[SuggestHit, ...]
    total: int  # notes that matched at all
    query_words: tuple[str, ...] = ()  # the query's own words in its order (not the context's)
    settled: str | None = None  # the note the message settles on despite its context

    @property
    def hidden(self) -> int:
        return max(0, self.total - len(self.hits))


@dataclass(frozen=True)
class MapRow:
    pos: int
    id: str
    kind: str
    title: str
    date: str | None
    tokens: int
    parent: str | None
    score: float | None = None
    zoom: tuple[Window, ...] = ()  # matching block ranges of a long section


@dataclass(frozen=True)
class Omitted:
    """Entries a map with a query leaves out: how many, their dates and their cost."""

    entries: int
    first: str | None
    last: str | None
    tokens: int


@dataclass(frozen=True)
class SectionMap:
    note: str
    title: str
    tokens: int
    rows: tuple[MapRow, ...]
    query: str | None = None
    best: tuple[str, ...] = field(default_factory=tuple)
    clear: bool = True  # the best section wins clearly over the second
    dates: tuple[str, ...] = ()  # time expressions understood, as "phrase=start..end"
    omitted: Omitted | None = None


@dataclass(frozen=True)
class SectionText:
    note: str
    section: str
    kind: str
    title: str
    date: str | None
    tokens: int
    text: str


class Ladder:
    """The three rungs over one store and its index."""

    def __init__(self, store: Store, index: SearchIndex, counter: TokenCounter,
                 levers: Levers = DEFAULT, steady: bool = False,
                 vectors: Path | None = None) -> None:
        self.store, self.index, self.counter = store, index, counter
        self.levers = levers  # the optional routing and evidence steps that are on
        # True for notes that do not change while it reads them (a bench): the index is
        # brought up to date before the first search only
        self.steady, self._fresh = steady, False
        self._stale_noted = False
        # the semantic lever's vector files: the store's own (pruned of gone notes), or a
        # folder that several benches share (content-addressed, never pruned)
        self._vectors = vectors
        self._router: SemanticRouter | None = None
        self._dense: DenseReader | None = None
        self._coverage: LineCoverage | None = None  # the coverage lever's line terms

    def freshen(self) -> None:
        """Bring the index up to date before a search. When it cannot be written (a full
        disk, say) the index as it is still answers, with one notice; with no index at all
        the search itself raises IndexUnavailable."""
        if self.steady and self._fresh:
            return
        try:
            self.index.refresh()
            self._fresh = True
        except IndexUnavailable as exc:
            built = self.index.dir.is_dir() and any(self.index.dir.iterdir())
            if not built:
                raise
            if not self._stale_noted:
                self._stale_noted = True
                self.index.notify(f"notes: {exc}; answering from the index as it is")

    def suggest(self, query: str, limit: int = 5, context: str | None = None,
                prior: dict[str, float] | None = None,
                today: dt.date | None = None, by_blocks: bool = True) -> Suggestions:
        """Rung 1: notes ranked by BM25F over title, tags, state and body; ``context`` (recent
        conversation) helps a vague message and never outranks what the message names
        (:mod:`memory.retrieval.context`), and ``prior`` (notes this session has been
        reading, 1.0 for the latest) lifts those notes by a share of the best score. With
        the dates lever on, the message's time expressions (resolved at ``today``) lift
        the notes written then (:func:`memory.retrieval.routing.with_dates`).
        ``by_blocks=False`` leaves out the block-route and coverage levers: ``recall``
        scores every block itself (a note's best block would count twice), and the hook has
        no time for block-route's two store-wide searches nor for reading its candidates."""
        check_limit(limit)
        parsed = parse_query(query, context)
        self.freshen()
        ranges = date_ranges(self, parsed, today)
        pool = limit + len(prior or {})
        if ranges:
            pool = max(pool, DATE_NOTES)
        if self.levers.coverage and by_blocks:
            from memory.retrieval.coverage import POOL as COVERAGE_POOL

            pool = max(pool, COVERAGE_POOL)
        if self.levers.semantic:
            from memory.retrieval.semantic import POOL as SEMANTIC_POOL

            pool = max(pool, SEMANTIC_POOL)
        # each part (the message, its context) routed as route_notes does: a plain search
        # with the levers off, the levers' routing when one is on; block-route for the
        # message alone, so the context's clearest paragraph does not lift its note
        found = blended_search(lambda part, size: route_notes(
            self, part, size or pool, by_blocks and part.words == parsed.words), parsed, pool,
            keep_own=True)
        words = [w[1] for w in parsed.words]
        titles = {hit.doc.note_id: hit.doc.title for hit in found.hits}
        hits, total = keep_named_first(found.hits, found.message, lambda note: self._names(
            note, words, titles=titles), limit), found.total
        ranked = with_prior(with_dates(self, parsed, hits, ranges),
                            prior or {}, len(parsed.words), self._note_fields)
        if self.levers.coverage and by_blocks:
            ranked = self.line_coverage().rerank(self, parsed, ranked)
        if self.levers.semantic:
            ranked = self.router().rerank(query, ranked)
        settled = settled_note(found.message, lambda note: self._names(
            note, words, mentions, titles)) if parsed.context or prior else None
        if settled is not None:
            ranked = keep_ahead(ranked, found.message, {settled})
        total += len(ranked) - len(hits)  # notes the prior added count among the candidates
        return Suggestions(query, tuple(_suggest_hit(h.doc, h.score, h.matched)
                                        for h in ranked[:limit]), total,
                           tuple(dict.fromkeys(w[0] for w in parsed.words)), settled)

    def recall(self, query: str, budget: int, context: str | None = None,
               today: dt.date | None = None, prior: dict[str, float] | None = None
               ) -> Recalled:
        """The budgeted rung: the best evidence for ``query`` within ``budget`` tokens,
        across the top notes (:mod:`memory.retrieval.recall`)."""
        from memory.retrieval.recall import recall

        return recall(self, query, budget, context, today, prior)

    def router(self) -> SemanticRouter:
        """The semantic lever's model and vectors, made on first use (the model loads on the
        first query it embeds); raises ConfigError when the extra is not installed."""
        if self._router is None:
            from memory.retrieval.semantic import SemanticRouter

            folder = self._vectors or self.store.config.state_dir / "vectors"
            self._router = SemanticRouter(self.store, folder, self.index.notify,
                                          prune=self._vectors is None)
        return self._router

    def dense(self) -> DenseReader:
        """The semantic lever's vectors read block by block (:mod:`memory.retrieval.dense`),
        made on first use."""
        if self._dense is None:
            from memory.retrieval.dense import DenseReader

            self._dense = DenseReader(self.router())
        return self._dense

    def line_coverage(self) -> LineCoverage:
        """The coverage lever's re-rank, with the line terms it keeps, made on first use."""
        if self._coverage is None:
            from memory.retrieval.coverage import LINES_FILE, LineCoverage

            self._coverage = LineCoverage(self.index.stem_terms, self.index.stemming(),
                                          self.store.config.state_dir / LINES_FILE)
        return self._coverage

    def indexed(self, loaded: list[LoadedNote]) -> None:
        """The index has just read these notes: with the coverage lever on, their line
        terms are made now (and kept), not by the first suggest that ranks them."""
        if self.levers.coverage:
            self.line_coverage().learn_all(loaded)

    def close(self) -> None:
        """Write what the levers learned and close their files."""
        if self._coverage is not None:
            self._coverage.close()

    # -- what the rungs read (recall and the bench read through these too) -----------------
    def search(self, parsed: ParsedQuery, kind: PartKind, limit: int | None,
               note_id: str | None = None, about: float | None = None) -> Found[StoredPart]:
        """Hits of sections or paragraphs (of the store, or of one note), best first; the
        query's context blended in as for ``suggest``, or, given ``about``, as inside one
        note (:mod:`memory.retrieval.context`)."""
        self.freshen()
        found = blended_search(lambda part, size: self.index.run_search(
            lambda searcher: searcher.search_parts(part, kind, size, note_id=note_id)),
            parsed, limit, about)
        return found.hits, found.total

    def load(self, note_id: str) -> LoadedNote:
        return self.store.load(note_id)

    def count(self, text: str, remember: bool = True) -> int:
        return self.counter.count(text, remember=remember)

    def names_note(self, note_id: str, words: list[str]) -> bool:
        """Whether the message's exact terms name the note (:func:`names`)."""
        return self._names(note_id, words)

    def _names(self, note_id: str, words: list[str],
               test: Callable[[list[str], str, str], bool] = names,
               titles: Mapping[str, str] | None = None) -> bool:
        """Whether the message's exact terms name the note (its title or file name; or
        what ``test`` asks of them). The title is the one a hit of this search holds
        (``titles``) or the index's, which ``suggest`` has just refreshed: reading the
        note's file for it cost a parse on the hook's path. A note the index no longer
        holds is named by nothing."""
        title = (titles or {}).get(note_id)
        if title is None:
            stored = self._note_fields(note_id)
            if stored is None:
                return False
            title = stored.title
        return test(words, title, note_id)

    def _note_fields(self, note_id: str) -> StoredNote | None:
        """What ``suggest`` shows of a note that matched no word: what the index holds of
        it, as for a hit (None if the note is gone). Read from the index, which suggest has
        just refreshed; parsing the file instead cost ~7 ms a note on every vague query."""
        return self.index.run_search(lambda searcher: searcher.stored_note(note_id))

    def section_map(self, note_id: str, query: str | None = None,
                    today: dt.date | None = None, context: str | None = None) -> SectionMap:
        """Rung 2: every section with its id, kind, date and tokens. With a query: match
        scores (text, hierarchy and the question's dates), the best entries only, and the
        matching block ranges of long sections; ``context`` (recent conversation) helps a
        vague query as in ``suggest``, and alone it scores the sections by itself."""
        loaded = self.store.load(note_id)
        sections = loaded.note.sections
        if query is None and context:
            query = ""
        if query is None:
            rows = tuple(self._row(pos, s) for pos, s in enumerate(sections, start=1))
            return SectionMap(loaded.note_id, loaded.note.title,
                              self.counter.count(loaded.note.text), rows)
        from memory.retrieval.section_scores import (
            clear_winner,
            ranked_ids,
            score_sections,
            when_boosted,
        )

        evidence = self._evidence(loaded.note_id, query, context)
        if self.levers.semantic and query.strip():  # the lines' vectors reach the map too
            evidence = self.dense().evidence(loaded, query, evidence)
        evidence = when_boosted(evidence, sections, query)
        scored = score_sections(sections, evidence, query, today or dt.date.today())
        pickable = {s.id for s in sections if s.kind not in NOT_PICKED
                    or s is loaded.note.lead}  # plain Markdown: its top part can be picked
        ranked = ranked_ids(scored, pickable)
        best = tuple(k for k, _ in ranked[:2])
        shown, omitted = self._shown_entries(sections, scored.scores)
        rows = tuple(self._row(pos, s, scored.scores.get(s.id, 0.0),
                               self._zoom(loaded, s, evidence) if s.id in best else ())
                     for pos, s in enumerate(sections, start=1) if s.kind != "entry"
                     or s.id in shown)
        dates = tuple(f"{r.phrase}={r.start}..{r.end}" for r in scored.ranges)
        return SectionMap(loaded.note_id, loaded.note.title,
                          self.counter.count(loaded.note.text), rows, query, best,
                          clear_winner(ranked), dates, omitted)

    def read_section(self, note_id: str, section: str) -> SectionText:
        """Rung 3: one section by id, unique prefix or map position ``#N``; a block range
        of it (``id:b3-5``); or the history entries of a date or range (``2026-11``,
        ``2026-11-01..2026-11-15``) (:mod:`memory.retrieval.reading`)."""
        from memory.retrieval.reading import read_section

        return read_section(self.store.load(note_id), section, self.counter)

    def read_note(self, note_id: str) -> SectionText:
        """The whole note, with its cost."""
        loaded = self.store.load(note_id)
        text = loaded.note.text
        return SectionText(loaded.note_id, "", "note", loaded.note.title, None,
                           self.counter.count(text), text)

    def _evidence(self, note_id: str, query: str, context: str | None = None) -> Evidence:
        from memory.retrieval.section_scores import Evidence

        parsed = parse_query(query, context)
        self.freshen()
        about = aboutness(note_id, parsed, lambda part, size: self.index.run_search(
            lambda searcher: searcher.search_notes(part, size)))
        sections, _ = self.search(parsed, "section", None, note_id, about)
        paragraphs, _ = self.search(parsed, "paragraph", None, note_id, about)
        return Evidence({h.doc.section: h.score for h in sections},
                        {(h.doc.section, h.doc.lines[0]): h.score for h in paragraphs})

    def _shown_entries(self, sections: tuple[Section, ...],
                       scores: dict[str, float]) -> tuple[set[str], Omitted | None]:
        entries = [s for s in sections if s.kind == "entry"]
        ranked = sorted(entries, key=lambda e: -scores.get(e.id, 0.0))
        shown = {e.id for e in ranked[:MAP_ENTRIES] if scores.get(e.id)}
        left = [e for e in entries if e.id not in shown]
        if not left:
            return shown, None
        dates = sorted(e.date for e in left if e.date)
        return shown, Omitted(len(left), dates[0] if dates else None,
                              dates[-1] if dates else None,
                              sum(self.counter.count(e.text) for e in left))

    def _zoom(self, loaded: LoadedNote, section: Section,
              evidence: Evidence) -> tuple[Window, ...]:
        from memory.retrieval.zoom import ZOOM_TOKENS, own_blocks, windows

        if self.counter.count(section.text) <= ZOOM_TOKENS:
            return ()
        blocks = own_blocks(section, loaded.note.sections)
        number = {b.start: n for n, b in enumerate(blocks, start=1)}
        block_scores = {number[line]: score for (sid, line), score in
                        evidence.paragraphs.items() if sid == section.id and line in number}
        return tuple(windows(blocks, block_scores, section.id, self.counter))

    def _row(self, pos: int, section: Section, score: float | None = None,
             zoom: tuple[Window, ...] = ()) -> MapRow:
        return MapRow(pos, section.id, section.kind, section.title, section.date,
                      self.counter.count(section.text), section.parent, score, zoom)


def check_limit(limit: int) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}, got {limit!r}")


def _suggest_hit(stored: StoredNote, score: float, matched: tuple[str, ...]) -> SuggestHit:
    return SuggestHit(stored.note_id, stored.title, round(score, 2), stored.state_tokens,
                      stored.tokens, matched)
