"""Where each imported note came from, kept in the state folder (docs/import.md).

``<state>/imports.json`` holds, by source path: the note it was imported as, the SHA-256,
size and modification time of the version imported last, the day, and whether the source
is followed live (Claude Code's memory: re-read by `notes watch` and the prompt hook when
it changes); and the Claude Code memory folders imported, so that a file Claude Code adds
there comes in too. ``<state>/imports/<sha256>.md`` keeps the bytes of each version imported
last, which the next import compares with (what changed at the source since).

The record is the only provenance (notes carry none; those older imports left with
``imported_from``/``imported_sha256``/``imported_on`` move them here on their next import or
sync). A record lost or unreadable is rebuilt by the next import as far as the notes tell: a
source whose note is at the id it would get and holds every line of it, or of a version kept
here, is found again (unchanged, or merged as changed since that version). A record written by
two processes at once keeps the last (merging is idempotent).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import NotesError
from memory.state.safe_files import write_atomic
from memory.state.sqlite_files import move_aside

RECORD = "imports.json"
VERSIONS = "imports"
CHECKED = "imports.checked"  # its mtime: when the live sources were last looked at
FORMAT = 1


@dataclass
class Imported:
    note: str
    sha256: str
    size: int
    mtime_ns: int
    on: str
    live: bool = False
    title: str = ""  # the title it was composed with when the file gives none
    project: str = ""  # the project key of the note it was imported as


@dataclass
class Folder:
    """A Claude Code memory folder imported: where its new files go and their project."""

    base: str
    project: str = ""


@dataclass
class ImportRecord:
    sources: dict[str, Imported] = field(default_factory=dict)
    folders: dict[str, Folder] = field(default_factory=dict)
    unreadable: bool = False  # the file was there but could not be read
    set_aside: Path | None = None  # where saving moved that file

    @classmethod
    def load(cls, state_dir: Path) -> ImportRecord:
        """The record; empty when there is none or it cannot be opened. One that is there
        but unreadable (damaged, or of another format) is never overwritten: saving moves it
        aside first (``set_aside`` says where), and the import rebuilds the record from the
        notes."""
        path = state_dir / RECORD
        try:
            data = json.loads(path.read_bytes().decode("utf-8"))
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}")
            return cls({str(k): Imported(**v) for k, v in data["sources"].items()},
                       {str(k): Folder(**v) for k, v in data.get("folders", {}).items()})
        except OSError:
            return cls()
        except (ValueError, TypeError, KeyError, AttributeError):
            return cls(unreadable=True)

    def save(self, state_dir: Path) -> None:
        """Best effort: provenance that cannot be written is rebuilt by the next import."""
        data: dict[str, Any] = {"format": FORMAT,
                                "sources": {k: asdict(v) for k, v in self.sources.items()},
                                "folders": {k: asdict(v) for k, v in self.folders.items()}}
        if self.unreadable and self.set_aside is None:
            self.set_aside = _set_aside(state_dir / RECORD)
            if self.set_aside is None:
                return  # it could not be moved: left as it is rather than overwritten
        with contextlib.suppress(OSError, NotesError):
            write_atomic(state_dir / RECORD, json.dumps(data, ensure_ascii=False, indent=1))

    def renamed(self, old: str, new: str) -> bool:
        """Sources imported as note ``old`` now go to ``new`` (`notes move`)."""
        hit = [s for s in self.sources.values() if s.note == old]
        for source in hit:
            source.note = new
        return bool(hit)


def _set_aside(path: Path) -> Path | None:
    """Move an unreadable record aside (``imports.json.corrupt-<time>``, as the damaged
    SQLite files of the state folder; None: it could not be moved)."""
    try:
        return move_aside(path)
    except OSError:
        return None


def keep_version(state_dir: Path, digest: str, raw: bytes) -> None:
    """The bytes of a version imported (best effort, as the record)."""
    with contextlib.suppress(OSError, NotesError):
        path = state_dir / VERSIONS / f"{digest}.md"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, raw)


def version_text(state_dir: Path, digest: str) -> str | None:
    try:
        return (state_dir / VERSIONS / f"{digest}.md").read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def kept_versions(state_dir: Path) -> Iterator[tuple[str, str]]:
    """Every version kept (its SHA-256 and text): what a lost record is rebuilt from."""
    with contextlib.suppress(OSError):
        for path in sorted((state_dir / VERSIONS).glob("*.md")):
            text = version_text(state_dir, path.stem)
            if text is not None:
                yield path.stem, text


def due(state_dir: Path, every: float = 60.0) -> bool:
    """True at most once every ``every`` seconds (the stamp file's mtime), and only where
    something is followed live: one stat when it is not due."""
    stamp = state_dir / CHECKED
    try:
        if time.time() - stamp.stat().st_mtime < every:
            return False
    except FileNotFoundError:
        if not (state_dir / RECORD).is_file():
            return False
    except OSError:
        return False
    with contextlib.suppress(OSError):
        stamp.touch()
        os.utime(stamp)
    return True
