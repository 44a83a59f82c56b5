"""The retrieval ladder: suggest notes, map a note's sections with their cost, read one;
and ``recall``, the budgeted rung.

A thin façade over one :class:`memory.retrieval.reader.Reader`: each rung is a pipeline in
its own module (:mod:`memory.retrieval.suggest`, :mod:`memory.retrieval.mapping`,
:mod:`memory.retrieval.reading`, :mod:`memory.retrieval.recall`) and the levers are stages
registered by name (:mod:`memory.retrieval.stages`). Each rung returns a typed result
(:mod:`memory.retrieval.results`); the CLI and the MCP server only render them. Every rung
reads the notes as they are on disk now: ``suggest`` refreshes the index first (re-indexing
only notes whose files changed), and ``section_map``/``read_section`` parse the file itself.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from memory.index import Found, ParsedQuery, PartKind, SearchIndex, StoredPart
from memory.retrieval.levers import DEFAULT, Levers
from memory.retrieval.reader import Reader
from memory.retrieval.results import (
    MapRow,
    Omitted,
    SectionMap,
    SectionText,
    SuggestHit,
    Suggestions,
)
from memory.retrieval.stages import acting
from memory.retrieval.suggest import MAX_LIMIT, check_limit, suggest
from memory.state.store import LoadedNote, Store
from memory.state.tokens import TokenCounter

# The maps' and reads' modules are imported by the rungs that use them, and the parser when a
# note is read, so that a process that only suggests (the prompt hook) does not load them.
if TYPE_CHECKING:
    from pathlib import Path

    from memory.retrieval.coverage import LineCoverage
    from memory.retrieval.dense import DenseReader
    from memory.retrieval.recall import Gathered, Recalled
    from memory.retrieval.semantic import SemanticRouter

__all__ = ["MAX_LIMIT", "Ladder", "MapRow", "Omitted", "SectionMap", "SectionText",
           "SuggestHit", "Suggestions", "check_limit"]


class Ladder:
    """The rungs over one store and its index (``reader``: what they read)."""

    def __init__(self, store: Store, index: SearchIndex, counter: TokenCounter,
                 levers: Levers = DEFAULT, steady: bool = False,
                 vectors: Path | None = None) -> None:
        self.reader = Reader(store, index, counter, levers, steady, vectors)
        self.store, self.index, self.counter = store, index, counter

    @property
    def levers(self) -> Levers:
        """The optional stages that are on (settable: the next call uses the new ones)."""
        return self.reader.levers

    @levers.setter
    def levers(self, levers: Levers) -> None:
        self.reader.levers = levers

    @property
    def steady(self) -> bool:
        return self.reader.steady

    def freshen(self) -> None:
        self.reader.freshen()

    def suggest(self, query: str, limit: int = 5, context: str | None = None,
                prior: dict[str, float] | None = None,
                today: dt.date | None = None, by_blocks: bool = True) -> Suggestions:
        """Rung 1: the notes for ``query`` (:func:`memory.retrieval.suggest.suggest`)."""
        return suggest(self.reader, query, limit, context, prior, today, by_blocks)

    def section_map(self, note_id: str, query: str | None = None,
                    today: dt.date | None = None, context: str | None = None) -> SectionMap:
        """Rung 2: the note's sections (:func:`memory.retrieval.mapping.section_map`)."""
        from memory.retrieval.mapping import section_map

        return section_map(self.reader, note_id, query, today, context)

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

    def recall(self, query: str, budget: int, context: str | None = None,
               today: dt.date | None = None, prior: dict[str, float] | None = None
               ) -> Recalled:
        """The budgeted rung: the best evidence for ``query`` within ``budget`` tokens,
        across the top notes (:mod:`memory.retrieval.recall`)."""
        from memory.retrieval.recall import recall

        return recall(self.reader, query, budget, context, today, prior)

    def gather(self, query: str, context: str | None = None, today: dt.date | None = None,
               prior: dict[str, float] | None = None, hierarchy: bool = True) -> Gathered:
        """``recall``'s ranking before any budget (:func:`memory.retrieval.recall.gather`)."""
        from memory.retrieval.recall import gather

        return gather(self.reader, query, context, today, prior, hierarchy)

    def fill(self, gathered: Gathered, budget: int) -> Recalled:
        """``recall``'s answer within ``budget`` (:func:`memory.retrieval.recall.fill`)."""
        from memory.retrieval.recall import fill

        return fill(self.reader, gathered, budget)

    def router(self) -> SemanticRouter:
        return self.reader.router()

    def dense(self) -> DenseReader:
        return self.reader.dense()

    def line_coverage(self) -> LineCoverage:
        return self.reader.line_coverage()

    def indexed(self, loaded: list[LoadedNote]) -> None:
        """The index has just read these notes: the stages that learn from them do now
        (the coverage lever makes their line terms), not the first suggest that ranks them."""
        for stage in acting(self.levers.chosen(), "indexed"):
            stage.indexed(self.reader, loaded)

    def close(self) -> None:
        """Write what the levers learned and close their files."""
        self.reader.close()

    # -- what the rungs read (the bench and the hook read through these too) ---------------
    def search(self, parsed: ParsedQuery, kind: PartKind, limit: int | None,
               note_id: str | None = None, about: float | None = None) -> Found[StoredPart]:
        return self.reader.search(parsed, kind, limit, note_id, about)

    def load(self, note_id: str) -> LoadedNote:
        return self.reader.load(note_id)

    def count(self, text: str, remember: bool = True) -> int:
        return self.reader.count(text, remember)

    def names_note(self, note_id: str, words: list[str]) -> bool:
        """Whether the message's exact terms name the note."""
        return self.reader.names(note_id, words)
