"""The rungs' result types: what ``suggest``, ``section_map`` and ``read_section`` return
(``recall``'s are in :mod:`memory.retrieval.filling`). The CLI and the MCP server only render
them. Kept apart from the modules that make them, so that any module can name them without
importing the pipelines (nor the :class:`memory.retrieval.ladder.Ladder` façade)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.retrieval.zoom import Window


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
