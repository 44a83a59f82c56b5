"""The history ledger: every history entry's text as the store first saw it.

History is append-only: tools never edit past entries, but people and other programs can.
The ledger (``<state>/ledger.sqlite``) records each entry (note id, entry id, content hash,
text) the first time the store indexes or writes it, and never overwrites that record. `notes
check` compares it with the notes and reports entries changed or removed since;
``--restore`` puts the recorded text back; ``--accept`` records the current text as the
truth (a deliberate correction) and forgets entries removed on purpose.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .note import Note

SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    note TEXT NOT NULL,
    entry TEXT NOT NULL,
    hash TEXT NOT NULL,
    text TEXT NOT NULL,
    date TEXT NOT NULL DEFAULT '',
    seen REAL NOT NULL,
    PRIMARY KEY (note, entry)
);
"""


@dataclass(frozen=True)
class Recorded:
    note: str
    entry: str
    hash: str
    text: str
    date: str
    seen: float


@dataclass(frozen=True)
class Drift:
    """A recorded entry that is no longer as recorded."""

    note: str
    entry: str
    kind: str  # "changed" or "removed" (entry gone) or "note-removed"
    line: int  # 1-based line of the entry now (or of the history heading / 1)
    detail: str
    recorded: Recorded


def entry_hash(text: str) -> str:
    return hashlib.sha256(normalized(text).encode("utf-8")).hexdigest()


def normalized(text: str) -> str:
    """An entry's text without the blank lines that separate it from the next one."""
    return text.rstrip() + "\n"


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
            self._db = db
        return self._db

    def observe(self, notes: Iterable[tuple[str, Note]]) -> None:
        """Record entries not seen before; existing records are never overwritten."""
        rows = [(note_id, e.id, entry_hash(e.text), normalized(e.text), e.date or "",
                 time.time()) for note_id, note in notes for e in note.entries]
        if not rows:
            return
        with self._lock:
            db = self._connect()
            with db:
                db.executemany("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?, ?, ?)", rows)

    def recorded(self, note_id: str | None = None) -> list[Recorded]:
        with self._lock:
            db = self._connect()
            sql = "SELECT note, entry, hash, text, date, seen FROM entries"
            args: tuple[str, ...] = ()
            if note_id is not None:
                sql, args = sql + " WHERE note = ?", (note_id,)
            rows = db.execute(sql + " ORDER BY note, seen, rowid", args).fetchall()
        return [Recorded(*row) for row in rows]

    def accept(self, drift: Drift, current: str | None) -> None:
        """Take the current text as the record (or forget a removed entry)."""
        with self._lock:
            db = self._connect()
            with db:
                if current is None:
                    db.execute("DELETE FROM entries WHERE note = ? AND entry = ?",
                               (drift.note, drift.entry))
                else:
                    db.execute("UPDATE entries SET hash = ?, text = ? WHERE note = ? AND "
                               "entry = ?", (entry_hash(current), normalized(current),
                                             drift.note, drift.entry))

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def drifts(records: list[Recorded], current: dict[str, Note | None]) -> list[Drift]:
    """Compare the records of some notes with those notes as they are now."""
    out: list[Drift] = []
    for record in records:
        note = current.get(record.note)
        if note is None:
            out.append(Drift(record.note, record.entry, "note-removed", 1,
                             "the note's file is gone", record))
            continue
        entry = note.section(record.entry)
        if entry is None:
            out.append(Drift(record.note, record.entry, "removed",
                             (note.history.start + 1) if note.history else 1,
                             "the entry is no longer in the history", record))
        elif entry_hash(entry.text) != record.hash:
            out.append(Drift(record.note, record.entry, "changed", entry.start + 1,
                             first_difference(record.text, normalized(entry.text)), record))
    return out


def first_difference(before: str, after: str) -> str:
    old, new = before.splitlines(), after.splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"line {number} of the entry was {a[:60]!r}, now {b[:60]!r}"
    if len(old) > len(new):
        return f"{len(old) - len(new)} line(s) removed at the end, from {old[len(new)][:60]!r}"
    return f"{len(new) - len(old)} line(s) added at the end: {new[len(old)][:60]!r}"


def restored_text(note: Note, drift: Drift) -> str:
    """The note's text with one drifted entry put back as recorded."""
    from .text import split_lines

    lines = split_lines(note.text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    recorded = drift.recorded.text.rstrip("\n")
    entry = note.section(drift.entry)
    if entry is not None:  # changed: replace its lines, keeping the blank lines after it
        trail = entry.text[len(entry.text.rstrip()):]
        trail = trail if trail.strip("\n") == "" and trail else "\n"
        return "".join(lines[:entry.start]) + recorded + trail + "".join(lines[entry.end:])
    return _inserted(note, lines, recorded, drift.recorded.date)


def _inserted(note: Note, lines: list[str], recorded: str, date: str) -> str:
    """Insert a removed entry back into the history, in date order."""
    history = note.history
    if history is None:
        sep = "\n" if lines and lines[-1].strip() else ""
        return "".join(lines) + f"{sep}## History\n{recorded}\n"
    later = next((e for e in note.entries if date and (e.date or "") > date), None)
    if later is not None:
        at = later.start
        return "".join(lines[:at]) + recorded + "\n\n" + "".join(lines[at:])
    at = history.end
    before = "" if at == 0 or not lines[at - 1].strip() or at - 1 == history.start else "\n"
    after = "\n" if at < len(lines) else ""
    return "".join(lines[:at]) + before + recorded + "\n" + after + "".join(lines[at:])


def recreated_text(note_id: str, records: list[Recorded]) -> str:
    """A minimal note holding the recorded entries of a note whose file is gone."""
    title = note_id.split("/")[-1]
    entries = "\n".join(r.text.rstrip("\n") + "\n" for r in records)
    return (f"---\ntitle: {title}\n---\n# {title}\n\n## Current state\n- (restored by "
            f"`notes check --restore`: only the history was recorded)\n\n## History\n{entries}")
