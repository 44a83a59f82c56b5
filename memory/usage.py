"""The usage log: one row per ladder call, for the promoter.

SQLite in WAL mode in the store's state folder (``usage.sqlite``), written by the CLI, the hook,
the MCP server and the watcher alike. A write waits up to a few seconds for a busy database;
a locked or corrupt log never fails the ladder call that logs: the problem is reported once per
process on stderr and logging goes on (a corrupt file is moved aside and a new one started).

A ``read_section`` row carries the question that led to it: the last query that session asked
(``suggest`` or ``section_map``), so the promoter can tell distinct questions apart.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    session TEXT NOT NULL,
    front TEXT NOT NULL,
    rung TEXT NOT NULL,
    query TEXT NOT NULL DEFAULT '',
    note TEXT NOT NULL DEFAULT '',
    section TEXT NOT NULL DEFAULT '',
    tokens INTEGER NOT NULL DEFAULT 0,
    ranked TEXT NOT NULL DEFAULT '[]',
    exact INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS calls_ts ON calls (ts);
CREATE INDEX IF NOT EXISTS calls_session ON calls (session, id);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
BUSY_TIMEOUT_S = 3.0
PRUNE_EVERY_S = 86_400.0
DAY_S = 86_400.0


@dataclass(frozen=True)
class Call:
    """One logged ladder call."""

    id: int
    ts: float
    session: str
    front: str
    rung: str
    query: str
    note: str
    section: str
    tokens: int
    ranked: tuple[str, ...]


Report = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


class UsageLog:
    """Appends ladder calls to ``<state>/usage.sqlite`` and reads them back."""

    def __init__(self, path: Path, retention_days: int = 180, report: Report = _stderr,
                 clock: Callable[[], float] = time.time) -> None:
        self.path, self.retention_days, self.report = path, retention_days, report
        self.clock = clock  # when a call happened; replaceable to replay old sessions
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._reported = False

    # -- writing -----------------------------------------------------------------------
    def record(self, session: str, front: str, rung: str, query: str = "", note: str = "",
               section: str = "", tokens: int = 0, ranked: tuple[str, ...] = (),
               exact: bool = True) -> None:
        """Log one call; never raises. ``exact`` is False when ``tokens`` is an estimate."""
        row = (session, front, rung, query, note, section, tokens, json.dumps(list(ranked)),
               int(exact))
        for attempt in (1, 2):
            try:
                with self._lock:
                    self._insert(row)
                return
            except sqlite3.DatabaseError as exc:
                if attempt == 1 and _is_corruption(exc):
                    self._reset(exc)  # move the damaged file aside, then try once more
                    continue
                self._problem(exc)
            except OSError as exc:
                self._problem(exc)
            return

    def _insert(self, row: tuple[str, str, str, str, str, str, int, str, int]) -> None:
        db = self._connect()
        session, _front, rung, query = row[:4]
        if rung == "read_section" and not query:
            row = (*row[:3], self._last_query(db, session), *row[4:])
        with db:
            db.execute("INSERT INTO calls (ts, session, front, rung, query, note, section, "
                       "tokens, ranked, exact) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (self.clock(), *row))
        self._maybe_prune(db)

    def _reset(self, exc: Exception) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            if self.path.exists():
                self._move_aside(exc)

    def _last_query(self, db: sqlite3.Connection, session: str) -> str:
        row = db.execute("SELECT query FROM calls WHERE session = ? AND query != '' "
                         "ORDER BY id DESC LIMIT 1", (session,)).fetchone()
        return str(row[0]) if row else ""

    def _maybe_prune(self, db: sqlite3.Connection) -> None:
        row = db.execute("SELECT value FROM meta WHERE key = 'pruned'").fetchone()
        now = self.clock()
        if row and abs(now - float(row[0])) < PRUNE_EVERY_S:
            return
        with db:
            db.execute("DELETE FROM calls WHERE ts < ?", (now - self.retention_days * DAY_S,))
            db.execute("INSERT OR REPLACE INTO meta VALUES ('pruned', ?)", (str(now),))

    # -- reading -----------------------------------------------------------------------
    def calls(self, since: float = 0.0) -> Iterator[Call]:
        """Logged calls at or after ``since`` (unix time), oldest first."""
        with self._lock:
            db = self._connect()
            rows = db.execute("SELECT id, ts, session, front, rung, query, note, section, "
                              "tokens, ranked FROM calls WHERE ts >= ? ORDER BY id",
                              (since,)).fetchall()
        for (call_id, ts, session, front, rung, query, note, section, tokens, ranked) in rows:
            yield Call(call_id, ts, session, front, rung, query, note, section, tokens,
                       tuple(json.loads(ranked or "[]")))

    def recent_notes(self, session: str, since: float, limit: int = 5) -> list[str]:
        """Notes this session mapped, read or recalled at or after ``since``, latest first,
        each once (the session prior of ``suggest``)."""
        with self._lock:
            rows = self._connect().execute(
                "SELECT note FROM calls WHERE session = ? AND ts >= ? AND note != '' AND "
                "rung != 'suggest' ORDER BY id DESC LIMIT 100", (session, since)).fetchall()
        return list(dict.fromkeys(str(r[0]) for r in rows))[:limit]

    def count(self) -> int:
        with self._lock:
            return int(self._connect().execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    # -- connection --------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.DatabaseError as exc:
            if not _is_corruption(exc):
                raise
            self._move_aside(exc)
            self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(SCHEMA)
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _move_aside(self, exc: Exception) -> None:
        aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
        self.path.replace(aside)
        for suffix in ("-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self.report(f"notes: the usage log was unreadable ({exc}); moved it to {aside} and "
                    "started a new one")

    def _problem(self, exc: Exception) -> None:
        if not self._reported:
            self._reported = True
            self.report(f"notes: could not write the usage log {self.path} ({exc}); the call "
                        "itself succeeded. Check the file, or set NOTES_USAGE_LOG=0")

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _is_corruption(exc: Exception) -> bool:
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text or "file is encrypted" in text
