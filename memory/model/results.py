"""Result types of the use cases that are not ladder rungs (those live in ladder.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class NoteSummary:
    note: str
    title: str
    tokens: int
    entries: int
    last_entry: str | None
    project: str = ""  # "": a note of no project


@dataclass(frozen=True)
class WriteResult:
    note: str
    section: str
    tokens: int
    path: Path
    created: bool = False
    warnings: tuple[str, ...] = ()  # the note is written; something derived lags behind


@dataclass(frozen=True)
class Managed:
    """What `notes delete` or `notes move` did."""

    note: str  # the note's id (its new id after a move)
    action: str  # "deleted", "restored", "moved"
    path: str  # where its file is now
    detail: str = ""
