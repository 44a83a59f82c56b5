"""The retrieval ladder: suggest notes, map a note's sections with their cost, read one.

Each rung returns a typed result; the CLI and the MCP server only render them. Every rung
reads the notes as they are on disk now: ``suggest`` refreshes the index first (re-indexing
only notes whose files changed), and ``section_map``/``read_section`` parse the file itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .backends.base import SearchIndex
from .errors import AmbiguousSection, InvalidArgument, SectionNotFound
from .note import Section
from .search import parse_query, search
from .store import LoadedNote, Store
from .tokens import TokenCounter

MAX_LIMIT = 50
NOT_PICKED = ("header", "history")  # metadata, and the container of every entry


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
    query_words: tuple[str, ...] = ()  # the query's own words (not the context's)

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


@dataclass(frozen=True)
class SectionMap:
    note: str
    title: str
    tokens: int
    rows: tuple[MapRow, ...]
    query: str | None = None
    best: tuple[str, ...] = field(default_factory=tuple)


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

    def __init__(self, store: Store, index: SearchIndex, counter: TokenCounter) -> None:
        self.store, self.index, self.counter = store, index, counter

    def suggest(self, query: str, limit: int = 5, context: str | None = None) -> Suggestions:
        """Rung 1: notes ranked by BM25F over title, tags, state and body; ``context`` (recent
        conversation) counts with a low weight."""
        check_limit(limit)
        parsed = parse_query(query, context)
        self.index.refresh()
        hits, total = self.index.run_search(
            lambda searcher: search(searcher, parsed, "note", limit))
        return Suggestions(query, tuple(_suggest_hit(h.fields, h.score, h.matched)
                                        for h in hits), total, tuple(parsed.query_words))

    def section_map(self, note_id: str, query: str | None = None) -> SectionMap:
        """Rung 2: every section with its id, kind, date and tokens (and match, with a query)."""
        loaded = self.store.load(note_id)
        scores: dict[str, float] = {}
        if query is not None:
            scores = self._section_scores(loaded.note_id, query)
        rows = tuple(self._row(pos, s, scores, query is not None)
                     for pos, s in enumerate(loaded.note.sections, start=1))
        pickable = {s.id for s in loaded.note.sections if s.kind not in NOT_PICKED}
        ranked = sorted((k for k in scores if k in pickable), key=lambda k: -scores[k])[:2]
        return SectionMap(loaded.note_id, loaded.note.title, self.counter.count(loaded.note.text),
                          rows, query, tuple(ranked))

    def read_section(self, note_id: str, section: str) -> SectionText:
        """Rung 3: the text of one section, by id, unique prefix or map position ``#N``."""
        loaded = self.store.load(note_id)
        found = resolve_section(loaded, section, self.counter)
        return SectionText(loaded.note_id, found.id, found.kind, found.title, found.date,
                           self.counter.count(found.text), found.text)

    def read_note(self, note_id: str) -> SectionText:
        """The whole note, with its cost."""
        loaded = self.store.load(note_id)
        text = loaded.note.text
        return SectionText(loaded.note_id, "", "note", loaded.note.title, None,
                           self.counter.count(text), text)

    def _section_scores(self, note_id: str, query: str) -> dict[str, float]:
        parsed = parse_query(query)
        self.index.refresh()
        hits, _ = self.index.run_search(
            lambda searcher: search(searcher, parsed, "section", None, note_id=note_id))
        return {str(h.fields["section"]): round(h.score, 2) for h in hits}

    def _row(self, pos: int, section: Section, scores: dict[str, float],
             with_query: bool) -> MapRow:
        score = scores.get(section.id, 0.0) if with_query else None
        return MapRow(pos, section.id, section.kind, section.title, section.date,
                      self.counter.count(section.text), section.parent, score)


def check_limit(limit: int) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}, got {limit!r}")


def resolve_section(loaded: LoadedNote, wanted: str, counter: TokenCounter) -> Section:
    """Find a section by exact id, ``#N`` map position, or unique prefix of id or date."""
    sections = list(loaded.note.sections)
    key = (wanted or "").strip()
    if not key:
        raise InvalidArgument("the section is empty; " + _section_list(loaded, counter))
    exact = next((s for s in sections if s.id == key), None)
    if exact is not None:
        return exact
    position = re.fullmatch(r"#?(\d+)", key)
    if position and key.startswith("#"):
        number = int(position[1])
        if 1 <= number <= len(sections):
            return sections[number - 1]
        raise SectionNotFound(f"no section #{number} in {loaded.note_id!r} (it has "
                              f"{len(sections)}); " + _section_list(loaded, counter))
    matches = [s for s in sections if s.id.startswith(key.casefold())]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AmbiguousSection(f"section {key!r} matches {len(matches)} sections in "
                               f"{loaded.note_id!r}: {', '.join(s.id for s in matches[:10])}; "
                               "give more of the id")
    raise SectionNotFound(f"no section {key!r} in {loaded.note_id!r}; "
                          + _section_list(loaded, counter))


def _section_list(loaded: LoadedNote, counter: TokenCounter, limit: int = 20) -> str:
    sections = loaded.note.sections
    shown = ", ".join(f"{s.id} ({counter.count(s.text)} tokens)" for s in sections[:limit])
    more = f", … {len(sections) - limit} more (run `notes map {loaded.note_id}`)" \
        if len(sections) > limit else ""
    return f"sections are: {shown}{more}"


def _suggest_hit(fields: dict[str, object], score: float, matched: tuple[str, ...]) -> SuggestHit:
    return SuggestHit(str(fields["note_id"]), str(fields.get("title") or ""), round(score, 2),
                      int(str(fields.get("state_tokens") or 0)),
                      int(str(fields.get("tokens") or 0)), matched)
