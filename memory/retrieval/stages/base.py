"""What a lever is: a :class:`Stage`, named, that acts at some of the named points of the
``suggest`` and ``recall`` pipelines.

Each pipeline runs its own steps in order and, at each point below, calls the stages that
are on and act there, in the registry's order (:data:`memory.retrieval.stages.REGISTRY`).
A stage acts at a point by overriding its method; the base methods leave everything as it
is, so a stage says only what it changes. Every method receives the
:class:`memory.retrieval.reader.Reader` (searches, notes, counts), never the ladder.

``suggest`` (:mod:`memory.retrieval.suggest`): ``pool`` (how many notes to rank), then,
for each part of the blended search, ``expand`` (the part's query) and ``route`` (its
notes); ``lift`` before the session prior, ``rerank`` after it.
``recall`` (:mod:`memory.retrieval.recall`): ``routes`` (how many notes weigh their
blocks), ``rank`` (the blocks' ranking), ``weigh`` (one block's own score), ``widen`` (more
blocks), ``shares`` (the blocks around a ranked one), ``spreads`` (the budget's second half
spread across sections). The section map: ``evidence``. The index: ``indexed``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from memory.index import SearchHit, StoredNote

if TYPE_CHECKING:
    from memory.index import Found, ParsedQuery, StoredPart
    from memory.retrieval.blocks import Seen
    from memory.retrieval.filling import Unit
    from memory.retrieval.reader import Reader
    from memory.retrieval.section_scores import Evidence
    from memory.state.store import LoadedNote

NoteHits = list[SearchHit[StoredNote]]

POINTS = {  # the points a stage can act at, in the order the pipelines reach them
    "pool": "suggest: how many notes it ranks",
    "expand": "suggest: the words each search asks",
    "route": "suggest: the message's notes",
    "lift": "suggest: the notes, before the session prior",
    "rerank": "suggest: the notes, after the session prior",
    "routes": "recall: how many routed notes weigh their blocks",
    "rank": "recall: how the blocks are ranked",
    "weigh": "recall: one block's own score",
    "widen": "recall: blocks added to the ranking",
    "shares": "recall: the blocks around a ranked one",
    "spreads": "recall: the budget's second half across sections",
    "evidence": "map: the sections' evidence",
    "indexed": "index: notes just read",
}


@dataclass(frozen=True)
class Ask:
    """One ``suggest`` call as its stages see it: the message parsed with its context,
    how many notes it shows, the session prior, the question's date, and whether the
    stages that score a note by its best block or line run (``by_blocks``: not in
    ``recall``'s routing nor the hook's)."""

    query: str
    parsed: ParsedQuery
    limit: int
    prior: Mapping[str, float]
    today: dt.date
    by_blocks: bool


class Stage:
    """A lever. ``name`` is what ``NOTES_LEVERS`` and ``--levers`` call it, ``summary`` one
    line for ``--levers list``, ``default`` whether it is on when nothing is chosen."""

    name: ClassVar[str]
    summary: ClassVar[str]
    default: ClassVar[bool] = False

    def points(self) -> tuple[str, ...]:
        """The points this stage acts at (the methods it overrides)."""
        return tuple(p for p in POINTS if getattr(type(self), p) is not getattr(Stage, p))

    # -- suggest ---------------------------------------------------------------------------
    def pool(self, reader: Reader, ask: Ask) -> int:
        """The notes ``suggest`` should rank before the stages re-order them (0: no need)."""
        return 0

    def expand(self, reader: Reader, parsed: ParsedQuery) -> ParsedQuery:
        """The query one search of the notes asks (the message's, or its context's)."""
        return parsed

    def route(self, reader: Reader, ask: Ask, part: ParsedQuery,
              pool: int) -> Found[StoredNote] | None:
        """The notes for one part of the query, or None to leave it to the next stage (and
        at last to the index's BM25F)."""
        return None

    def lift(self, reader: Reader, ask: Ask, hits: NoteHits) -> NoteHits:
        return hits

    def rerank(self, reader: Reader, ask: Ask, hits: NoteHits) -> NoteHits:
        return hits

    # -- recall ----------------------------------------------------------------------------
    def routes(self, query: str, routes: int) -> int:
        return routes

    def rank(self, reader: Reader, parsed: ParsedQuery, routed: list[str], today: dt.date,
             seen: Seen) -> list[Unit] | None:
        """The blocks ranked, best first, or None to rank them the usual way."""
        return None

    def weigh(self, reader: Reader, hit: SearchHit[StoredPart], seen: Seen,
              own: float) -> float:
        """A matching block's own score (its BM25 score over the best block's)."""
        return own

    def widen(self, reader: Reader, query: str, units: list[Unit],
              note_scores: dict[str, float], seen: Seen) -> list[Unit]:
        return units

    def shares(self, unit: Unit) -> dict[int, float]:
        """Block numbers of ``unit``'s section that take a share of its score (the highest
        share any stage gives wins)."""
        return {}

    def spreads(self, query: str) -> bool:
        """Whether the budget's second half spreads across sections for this query."""
        return False

    # -- the section map, the index --------------------------------------------------------
    def evidence(self, reader: Reader, loaded: LoadedNote, query: str,
                 evidence: Evidence) -> Evidence:
        return evidence

    def indexed(self, reader: Reader, loaded: list[LoadedNote]) -> None:
        """The index has just read these notes."""
