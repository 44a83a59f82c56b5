"""A derived key → value SQLite file in the state folder: what the token cache
(``tokens.sqlite``) and the coverage lever's line terms (``lines.sqlite``) share.

The file is only a cache and never fails its caller: a damaged one (found on open or while
reading a page) or one past its size limit is deleted and started anew; a value the caller
finds bad is its to work out again; a folder that cannot be written (full disk, read-only
file system, no permission, a file where the folder should be) leaves new values unwritten
while known ones are still read from the file, read-only (one notice through ``report``,
when given, saying what stays in memory).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memory.state import sqlite_files as files

TIMEOUT_S = 5.0


@dataclass(frozen=True)
class CacheShape:
    """What a cache file holds: its table, whose rows are ``(h TEXT PRIMARY KEY, <column>
    <sql_type> NOT NULL)``, and the words of its one notice (``label`` ``path`` cannot be
    used …; ``kept`` are kept in memory for this process)."""

    table: str
    column: str
    sql_type: str
    label: str
    kept: str


class KeyedCache:
    """One cache file, opened at once (never raising), written in batches by :meth:`flush`."""

    def __init__(self, path: Path, shape: CacheShape, max_bytes: int,
                 report: Callable[[str], None] | None = None) -> None:
        self.path, self.shape, self._max_bytes, self._report = path, shape, max_bytes, report
        self._lock = threading.Lock()
        self._pending: list[tuple[str, object]] = []
        self._restarted = False
        self._db, self._writable = self._open()

    @property
    def pending(self) -> int:
        return len(self._pending)

    def lookup(self, key: str) -> object | None:
        """The value kept for ``key`` (as SQLite returns it), or None."""
        with self._lock:
            if self._db is None:
                return None
            try:
                row = self._db.execute(
                    f"SELECT {self.shape.column} FROM {self.shape.table} WHERE h = ?",
                    (key,)).fetchone()
            except sqlite3.Error as exc:
                self._fault(exc, writing=False)
                return None
            return row[0] if row else None

    def add(self, key: str, value: object) -> None:
        """Keep ``value`` for ``key`` at the next :meth:`flush`."""
        with self._lock:
            self._pending.append((key, value))

    def flush(self) -> None:
        """Write the values added since the last flush (best effort)."""
        with self._lock:
            if self._db is None or not self._writable or not self._pending:
                self._pending.clear()
                return
            try:
                with self._db:
                    self._db.executemany(
                        f"INSERT OR IGNORE INTO {self.shape.table} VALUES (?, ?)",
                        self._pending)
            except sqlite3.Error as exc:
                self._fault(exc, writing=True)
            self._pending.clear()

    def close(self) -> None:
        self.flush()
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db, self._writable = None, False

    # -- the file ----------------------------------------------------------------------
    def _open(self) -> tuple[sqlite3.Connection | None, bool]:
        """The connection and whether it can be written; never raises."""
        failure: Exception
        try:
            if _too_big(self.path, self._max_bytes):
                _discard(self.path)
            return self._open_for_writing(), True
        except sqlite3.Error as exc:
            failure = exc
            if files.is_corruption(exc):
                try:
                    _discard(self.path)
                    return self._open_for_writing(), True
                except (sqlite3.Error, OSError) as again:
                    failure = again
        except OSError as exc:
            failure = exc
        self._notice(failure)
        try:
            return (files.open_read_only(self.path, TIMEOUT_S) if self.path.is_file() else None,
                    False)
        except (sqlite3.Error, OSError):
            return None, False

    def _open_for_writing(self) -> sqlite3.Connection:
        """Raises OSError or sqlite3.Error."""
        table, column = self.shape.table, self.shape.column
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, timeout=TIMEOUT_S, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL").fetchall()
            db.execute(f"CREATE TABLE IF NOT EXISTS {table} "
                       f"(h TEXT PRIMARY KEY, {column} {self.shape.sql_type} NOT NULL)")
            db.execute(f"SELECT h, {column} FROM {table} LIMIT 1").fetchall()
        except sqlite3.OperationalError as exc:
            db.close()
            if "no such column" in str(exc):
                raise files.Damaged(f"its {table} table has another shape ({exc})") from exc
            raise
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _fault(self, exc: sqlite3.Error, writing: bool) -> None:
        """A lookup or a flush failed (the lock is held): a damaged file is started anew once
        per process; a write refused (full disk, read-only) leaves new values in memory and
        the file for lookups; a busy file is left as it is."""
        if self._db is None or "locked" in str(exc).lower():
            return
        if writing and not files.is_corruption(exc):
            self._writable = False
            self._notice(exc)
            return
        self._db.close()
        self._db, self._writable = None, False
        if files.is_corruption(exc) and not self._restarted:
            self._restarted = True
            try:
                _discard(self.path)
            except OSError as failure:
                self._notice(failure)
                return
            self._db, self._writable = self._open()
        elif not files.is_corruption(exc):
            self._notice(exc)

    def _notice(self, exc: Exception) -> None:
        if self._report is not None:
            why = files.why_unwritable(self.path)
            self._report(f"notes: the {self.shape.label} {self.path} cannot be used ({exc}"
                         f"{'; ' + why if why else ''}); {self.shape.kept} are kept in memory "
                         f"for this process. To fix it, {files.next_step(why)}")
            self._report = None  # once


def _too_big(path: Path, limit: int) -> bool:
    parts = (path, Path(f"{path}-wal"))
    return sum(p.stat().st_size for p in parts if p.is_file()) > limit


def _discard(path: Path) -> None:
    for name in (f"{path}-wal", f"{path}-shm", str(path)):
        Path(name).unlink(missing_ok=True)
