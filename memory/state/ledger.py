"""The history ledger: what the store knows each note held, as it first saw it.

History is append-only: tools never edit past entries, but people and other programs can. The
ledger (``<state>/ledger.sqlite``) keeps, per note:

- every history entry, in order (``seq``), with its text as first seen (never overwritten)
  and the blank lines that followed it the last time the history was intact (``gap``);
- the history section's own lines (its heading and anything before the first entry) and the
  section it came after, as last seen intact, so a deleted or renamed history can be put back
  byte for byte;
- the note's shape as last seen whole: front matter, title line, its top-level sections. A
  tool write refuses a file that lost any of it (:mod:`memory.state.history_records`).

What to record and what counts as a change is decided in :mod:`memory.state.history_records`; this
module only stores and loads. `notes check` compares; ``--restore`` puts the record back;
``--accept`` takes the note as it is now.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memory.state.sqlite_files import (
    is_corruption,
    move_aside,
    next_step,
    open_read_only,
    why_unwritable,
)

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
CREATE TABLE IF NOT EXISTS histories (
    note TEXT PRIMARY KEY,
    heading TEXT NOT NULL,
    after TEXT NOT NULL DEFAULT '',
    seen REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS shapes (
    note TEXT PRIMARY KEY,
    front_matter INTEGER NOT NULL,
    title_line INTEGER NOT NULL,
    sections TEXT NOT NULL,
    seen REAL NOT NULL
);
"""
_ADDED_COLUMNS = (("seq", "INTEGER"), ("gap", "TEXT NOT NULL DEFAULT '\n'"))
_CHUNK = 500  # notes per query (SQLite limits the number of parameters)


@dataclass(frozen=True)
class Recorded:
    """One entry as first seen. ``text`` is the entry without the blank lines after it."""

    note: str
    entry: str
    seq: int
    hash: str
    text: str
    gap: str
    date: str
    seen: float


@dataclass(frozen=True)
class HistoryRecord:
    heading: str  # the history section's lines before its first entry, exactly
    after: str  # id of the top-level section the history came after ('' if it came first)


@dataclass(frozen=True)
class Shape:
    front_matter: bool
    title_line: bool  # the header holds an H1 title line
    sections: tuple[tuple[str, str], ...]  # (id, title) of each top-level section, in order


@dataclass
class NoteRecord:
    """All the ledger holds of one note."""

    note: str
    entries: list[Recorded] = field(default_factory=list)  # in seq order
    history: HistoryRecord | None = None
    shape: Shape | None = None

    @property
    def known(self) -> bool:
        return bool(self.entries) or self.history is not None or self.shape is not None


@dataclass
class Change:
    """What to write for one note: new entries, new gaps, history and shape records."""

    note: str
    new_entries: list[Recorded] = field(default_factory=list)
    gaps: dict[str, str] = field(default_factory=dict)
    history: HistoryRecord | None = None
    shape: Shape | None = None
    replace_all: bool = False  # forget every record of the note first (accept)

    @property
    def empty(self) -> bool:
        return not (self.new_entries or self.gaps or self.history or self.shape
                    or self.replace_all)


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self.read_only = False  # its folder cannot be written: records are read, not saved

    def _connect(self) -> sqlite3.Connection:
        """The ledger, opened for writing; where its folder cannot be written (full disk,
        read-only, no permission) the file is read as it is and every save fails with a
        sqlite3.Error that callers report; a damaged file is moved aside and started anew."""
        if self._db is None:
            try:
                self._db = self._open()
            except (sqlite3.Error, OSError) as exc:
                if is_corruption(exc) and self.path.exists():
                    move_aside(self.path)
                    self._db = self._open()
                elif self.path.exists():
                    self._db = open_read_only(self.path, timeout=10.0)
                    self.read_only = True
                else:
                    raise sqlite3.OperationalError(f"cannot create {self.path}: {exc}") \
                        from exc
        return self._db

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=10.0, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
            _migrate(db)
        except sqlite3.Error:
            db.close()
            raise
        return db

    def why_unwritable(self) -> str:
        """Why the ledger cannot be written, in a few words, and what to do."""
        reason = why_unwritable(self.path)
        return f"{reason or 'the file cannot be written'}; {next_step(reason)}"

    # -- reading ---------------------------------------------------------------------
    def load(self, note_ids: Iterable[str]) -> dict[str, NoteRecord]:
        """The records of these notes (an empty record for a note never seen)."""
        wanted = list(dict.fromkeys(note_ids))
        found = {n: NoteRecord(n) for n in wanted}
        with self._lock:
            db = self._connect()
            for start in range(0, len(wanted), _CHUNK):
                self._load_chunk(db, wanted[start:start + _CHUNK], found)
        return found

    def notes(self) -> list[str]:
        """Every note the ledger holds something of."""
        with self._lock:
            rows = self._connect().execute(
                "SELECT note FROM entries UNION SELECT note FROM histories "
                "UNION SELECT note FROM shapes ORDER BY 1").fetchall()
        return [str(r[0]) for r in rows]

    @staticmethod
    def _load_chunk(db: sqlite3.Connection, chunk: list[str],
                    found: dict[str, NoteRecord]) -> None:
        marks = ",".join("?" * len(chunk))
        for row in db.execute(f"SELECT note, entry, seq, hash, text, gap, date, seen FROM "
                              f"entries WHERE note IN ({marks}) ORDER BY note, seq", chunk):
            found[row[0]].entries.append(Recorded(*row))
        for note, heading, after in db.execute(
                f"SELECT note, heading, after FROM histories WHERE note IN ({marks})", chunk):
            found[note].history = HistoryRecord(heading, after)
        for note, front, title, sections in db.execute(
                f"SELECT note, front_matter, title_line, sections FROM shapes WHERE note IN "
                f"({marks})", chunk):
            found[note].shape = Shape(bool(front), bool(title),
                                      tuple((str(i), str(t)) for i, t in json.loads(sections)))

    # -- writing ---------------------------------------------------------------------
    def save(self, changes: Iterable[Change]) -> None:
        """Write the changes in one transaction; entries already recorded are kept."""
        todo = [c for c in changes if not c.empty]
        if not todo:
            return
        now = time.time()
        with self._lock:
            db = self._connect()
            with db:
                for change in todo:
                    _apply(db, change, now)

    def forget(self, note: str) -> None:
        """Expect nothing of ``note`` any more (`notes delete`)."""
        self.rename(note, None)

    def rename(self, old: str, new: str | None) -> None:
        """What was recorded of ``old`` is now of ``new`` (`notes move`; None: forgotten);
        anything recorded of ``new`` before is replaced."""
        with self._lock:
            db = self._connect()
            with db:
                for table in ("entries", "histories", "shapes"):
                    if new is not None:
                        db.execute(f"DELETE FROM {table} WHERE note = ?", (new,))
                        db.execute(f"UPDATE {table} SET note = ? WHERE note = ?", (new, old))
                    else:
                        db.execute(f"DELETE FROM {table} WHERE note = ?", (old,))

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _apply(db: sqlite3.Connection, change: Change, now: float) -> None:
    note = change.note
    if change.replace_all:
        for table in ("entries", "histories", "shapes"):
            db.execute(f"DELETE FROM {table} WHERE note = ?", (note,))
    db.executemany("INSERT OR IGNORE INTO entries (note, entry, seq, hash, text, gap, date, "
                   "seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [(note, r.entry, r.seq, r.hash, r.text, r.gap, r.date, now)
                    for r in change.new_entries])
    db.executemany("UPDATE entries SET gap = ? WHERE note = ? AND entry = ?",
                   [(gap, note, entry) for entry, gap in change.gaps.items()])
    if change.history is not None:
        db.execute("INSERT OR REPLACE INTO histories VALUES (?, ?, ?, ?)",
                   (note, change.history.heading, change.history.after, now))
    if change.shape is not None:
        shape = change.shape
        db.execute("INSERT OR REPLACE INTO shapes VALUES (?, ?, ?, ?, ?)",
                   (note, int(shape.front_matter), int(shape.title_line),
                    json.dumps([list(s) for s in shape.sections], ensure_ascii=False), now))


def _migrate(db: sqlite3.Connection) -> None:
    """Ledgers written before entries had an order: their insertion order is the order."""
    have = {row[1] for row in db.execute("PRAGMA table_info(entries)")}
    with db:
        for name, kind in _ADDED_COLUMNS:
            if name not in have:
                db.execute(f"ALTER TABLE entries ADD COLUMN {name} {kind}")
        if "seq" not in have:
            db.execute("UPDATE entries SET seq = rowid")
