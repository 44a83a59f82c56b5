"""What the index gives back: its stored documents, typed, and scored hits.

Every backend stores the same values for the three document kinds
(:func:`memory.index.documents.note_documents`); a backend's searcher turns what it stored
into these types, so the ladder, the API and the bench never read a backend's records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeAlias, TypeVar

PartKind = Literal["section", "paragraph"]


@dataclass(frozen=True, slots=True)
class StoredNote:
    """What the index holds of a note: what ``suggest`` and ``list_notes`` show, the
    file's mtime, size and content hash as indexed (for the freshness check), and its
    project (what a project scope leaves out)."""

    note_id: str
    title: str
    tokens: int
    state_tokens: int
    entries: int
    date: str | None  # the latest entry's
    digest: str
    mtime_ns: int
    size: int
    project: str = ""  # the note's project key ("": a note of no project)

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> StoredNote:
        return cls(str(values["note_id"]), str(values.get("title") or ""),
                   int(values.get("tokens") or 0), int(values.get("state_tokens") or 0),
                   int(values.get("entries") or 0), _text(values.get("date")),
                   str(values.get("digest") or ""), int(values.get("mtime_ns") or 0),
                   int(values.get("size") or 0), str(values.get("project") or ""))


@dataclass(frozen=True, slots=True)
class StoredPart:
    """A section or a paragraph (one top-level block) as the index holds it."""

    id: str  # ``note#section`` (a section), ``note#section@N`` (its N-th block)
    note_id: str
    kind: PartKind
    section: str
    label: str  # the section's title
    date: str | None
    lines: tuple[int, int]  # 0-based, end excluded
    tokens: int  # a section's (0 for a paragraph)

    @property
    def block(self) -> int:
        """A paragraph's block number in its section (1-based); 0 for a section."""
        _, at, number = self.id.rpartition("@")
        return int(number) if at and self.kind == "paragraph" else 0

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> StoredPart:
        start, end = values.get("lines") or (0, 0)
        kind: PartKind = "section" if values.get("kind") == "section" else "paragraph"
        return cls(str(values["id"]), str(values["note_id"]), kind,
                   str(values.get("section") or ""), str(values.get("label") or ""),
                   _text(values.get("date")), (int(start), int(end)),
                   int(values.get("tokens") or 0))


Doc = TypeVar("Doc", StoredNote, StoredPart)


@dataclass(frozen=True, slots=True)
class SearchHit(Generic[Doc]):
    """One scored document and the query's words it holds (message words first)."""

    doc: Doc
    score: float
    matched: tuple[str, ...]


Found: TypeAlias = tuple[list[SearchHit[Doc]], int]  # best hits first; how many matched


def tie_key(fields: Mapping[str, Any]) -> tuple[str, int, str]:
    """The order of hits with equal scores: by note id, then by where they start in the
    note, then by id. A backend's own order among ties is the order its documents were
    written in, which a parallel build (one segment per worker) changes from one build to
    the next; with this key the same store gives the same hits however it was indexed."""
    start, _ = fields.get("lines") or (0, 0)
    return str(fields.get("note_id") or ""), int(start), str(fields.get("id") or "")


SCORE_DIGITS = 6  # a hit's score is rounded to this many decimals (see settle_ties)


def tied_reach(scores: Sequence[float], limit: int | None) -> int:
    """How many of the best scores (sorted best first) to load so that every hit tied
    with the last one kept is among them: ``limit``, and past it while the score (rounded
    as :func:`settle_ties` rounds it) equals the ``limit``-th."""
    if limit is None or limit >= len(scores):
        return len(scores)
    if limit <= 0:
        return 0
    last, reach = round(scores[limit - 1], SCORE_DIGITS), limit
    while reach < len(scores) and round(scores[reach], SCORE_DIGITS) >= last:
        reach += 1
    return reach


Fields = TypeVar("Fields", bound=Mapping[str, Any])  # a backend's stored fields of a hit


def settle_ties(hits: list[tuple[Fields, float, tuple[str, ...]]], limit: int | None
                ) -> list[tuple[Fields, float, tuple[str, ...]]]:
    """Hits best first with ties in :func:`tie_key` order, cut to ``limit``. Scores are
    rounded to ``SCORE_DIGITS`` decimals first: the same document's BM25 sum can differ in
    its last bits between two builds (a segment without one of the query's terms leaves
    that term out of its matcher tree, and the sum is taken in another order), which would
    make a tie look like an order."""
    rounded = [(fields, round(score, SCORE_DIGITS), words) for fields, score, words in hits]
    ordered = sorted(rounded, key=lambda hit: (-hit[1], tie_key(hit[0])))
    return ordered if limit is None else ordered[:limit]


def _text(value: object) -> str | None:
    return None if value is None else str(value)
