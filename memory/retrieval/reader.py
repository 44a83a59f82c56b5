"""What the retrieval stages read: one store, its index and the token counter.

:class:`Reader` is the context every stage of ``suggest`` and ``recall`` receives
(:mod:`memory.retrieval.suggest`, :mod:`memory.retrieval.recall`, the levers in
:mod:`memory.retrieval.stages`): searches over the index (brought up to date first), the
notes as they are on disk, token counts, whether a message names a note, and the levers that
are on. It knows nothing of the rungs that use it (no back-reference to the
:class:`memory.retrieval.ladder.Ladder` façade). The semantic and coverage levers' models and
caches are made here on first use, so that they live as long as the store's reader.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from memory.errors import IndexUnavailable
from memory.index import Found, ParsedQuery, PartKind, SearchIndex, StoredNote, StoredPart
from memory.retrieval.context import blended_search, names
from memory.retrieval.levers import DEFAULT, Levers
from memory.state.store import LoadedNote, Store
from memory.state.tokens import TokenCounter

if TYPE_CHECKING:
    from pathlib import Path

    from memory.retrieval.blocks import Reads
    from memory.retrieval.coverage import LineCoverage
    from memory.retrieval.dense import DenseReader
    from memory.retrieval.semantic import SemanticRouter


class Reader:
    """One store's notes, index and counter as the stages read them; ``levers``: the
    optional stages that are on (:mod:`memory.retrieval.stages`)."""

    def __init__(self, store: Store, index: SearchIndex, counter: TokenCounter,
                 levers: Levers = DEFAULT, steady: bool = False,
                 vectors: Path | None = None) -> None:
        self.store, self.index, self.counter = store, index, counter
        self.levers = levers
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
        self._reads: Reads | None = None

    @property
    def reads(self) -> Reads:
        """The last notes' reads as ``recall`` ranks their blocks
        (:mod:`memory.retrieval.blocks`)."""
        if self._reads is None:
            from memory.retrieval.blocks import Reads

            self._reads = Reads()
        return self._reads

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

    def search_notes(self, parsed: ParsedQuery, limit: int | None) -> Found[StoredNote]:
        """Notes by BM25F for ``parsed`` as it is (no context blended in), best first."""
        return self.index.run_search(lambda searcher: searcher.search_notes(parsed, limit))

    def load(self, note_id: str) -> LoadedNote:
        return self.store.load(note_id)

    def count(self, text: str, remember: bool = True) -> int:
        return self.counter.count(text, remember=remember)

    def names(self, note_id: str, words: list[str],
              test: Callable[[list[str], str, str], bool] = names,
              titles: Mapping[str, str] | None = None) -> bool:
        """Whether the message's exact terms name the note (its title or file name; or
        what ``test`` asks of them). The title is the one a hit of this search holds
        (``titles``) or the index's, which ``suggest`` has just refreshed: reading the
        note's file for it cost a parse on the hook's path. A note the index no longer
        holds is named by nothing."""
        title = (titles or {}).get(note_id)
        if title is None:
            stored = self.note_fields(note_id)
            if stored is None:
                return False
            title = stored.title
        return test(words, title, note_id)

    def note_fields(self, note_id: str) -> StoredNote | None:
        """What ``suggest`` shows of a note that matched no word: what the index holds of
        it, as for a hit (None if the note is gone). Read from the index, which suggest has
        just refreshed; parsing the file instead cost ~7 ms a note on every vague query."""
        return self.index.run_search(lambda searcher: searcher.stored_note(note_id))

    # -- the levers' models and caches, made on first use ----------------------------------
    def router(self) -> SemanticRouter:
        """The semantic lever's model and vectors (the model loads on the first query it
        embeds); raises ConfigError when the extra is not installed."""
        if self._router is None:
            from memory.retrieval.semantic import SemanticRouter

            folder = self._vectors or self.store.config.state_dir / "vectors"
            self._router = SemanticRouter(self.store, folder, self.index.notify,
                                          prune=self._vectors is None)
        return self._router

    def dense(self) -> DenseReader:
        """The semantic lever's vectors read block by block (:mod:`memory.retrieval.dense`)."""
        if self._dense is None:
            from memory.retrieval.dense import DenseReader

            self._dense = DenseReader(self.router())
        return self._dense

    def line_coverage(self) -> LineCoverage:
        """The coverage lever's re-rank, with the line terms it keeps."""
        if self._coverage is None:
            from memory.retrieval.coverage import LINES_FILE, LineCoverage

            self._coverage = LineCoverage(self.index.stem_terms, self.index.stemming(),
                                          self.store.config.state_dir / LINES_FILE)
        return self._coverage

    def close(self) -> None:
        """Write what the levers learned and close their files."""
        if self._coverage is not None:
            self._coverage.close()
