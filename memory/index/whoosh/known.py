"""What the index holds of each note, kept beside it so a cold process need not read it.

The freshness check compares every note file with what the index holds of it (mtime, size,
digest): for Whoosh that means unpickling the stored fields of every note document, about a
tenth of a cold prompt hook at a million tokens. After reading them once, a process writes
them to ``known-notes.json`` in the index folder, stamped with the index's generation and the
folder's inode, and the next process reads that instead while both still match: any commit
(here or elsewhere) makes a new generation and a rebuild a new folder, so a stale copy is never
used, only read again and replaced. The file is a cache: written without fsync, and missing,
unreadable or foreign contents only mean reading the index.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any

from memory.errors import NotesError
from memory.index.stored import StoredNote
from memory.state.safe_files import write_atomic

KNOWN_FILE = "known-notes.json"
FORMAT = 1
Stamp = tuple[int, int]  # the index's generation, the inode of its folder
FIELDS = tuple(f.name for f in dataclasses.fields(StoredNote))


def load_known(folder: Path, stamp: Stamp) -> dict[str, StoredNote] | None:
    """The notes as kept for ``stamp``; None when the file is missing, stale or unusable."""
    try:
        data = json.loads((folder / KNOWN_FILE).read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("fields") != list(FIELDS) or \
                data.get("stamp") != list(stamp):
            return None
        notes = (StoredNote.of(_values(row)) for row in data["notes"])
        return {note.note_id: note for note in notes}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _values(row: Any) -> dict[str, Any]:
    """One note's row as the stored fields :meth:`StoredNote.of` reads (as it reads the
    index's own), which refuses a value of another type; a row of another length is refused
    here."""
    if not isinstance(row, list) or len(row) != len(FIELDS):
        raise ValueError("a row of another shape")
    return dict(zip(FIELDS, row, strict=True))


def save_known(folder: Path, stamp: Stamp, notes: dict[str, StoredNote]) -> None:
    """Keep ``notes`` for ``stamp`` (best effort: a folder that cannot be written is left)."""
    rows = [list(dataclasses.astuple(note)) for note in notes.values()]
    text = json.dumps({"format": FORMAT, "fields": list(FIELDS), "stamp": list(stamp),
                       "notes": rows}, ensure_ascii=False, separators=(",", ":"))
    with contextlib.suppress(OSError, NotesError):
        write_atomic(folder / KNOWN_FILE, text, durable=False)
