"""What the index gives back: its stored documents, typed, and scored hits.

Every backend stores the same values for the three document kinds
(:func:`memory.index.documents.note_documents`); a backend's searcher turns what it stored
into these types, so the ladder, the API and the bench never read a backend's records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeAlias, TypeVar

PartKind = Literal["section", "paragraph"]


@dataclass(frozen=True, slots=True)
class StoredNote:
    """What the index holds of a note: what ``suggest`` and ``list_notes`` show, and the
    file's mtime, size and content hash as indexed (for the freshness check)."""

    note_id: str
    title: str
    tokens: int
    state_tokens: int
    entries: int
    date: str | None  # the latest entry's
    digest: str
    mtime_ns: int
    size: int

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> StoredNote:
        return cls(str(values["note_id"]), str(values.get("title") or ""),
                   int(values.get("tokens") or 0), int(values.get("state_tokens") or 0),
                   int(values.get("entries") or 0), _text(values.get("date")),
                   str(values.get("digest") or ""), int(values.get("mtime_ns") or 0),
                   int(values.get("size") or 0))


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


def _text(value: object) -> str | None:
    return None if value is None else str(value)
