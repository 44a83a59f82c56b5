"""The usage log: one row per ladder call, for the promoter.

SQLite in WAL mode in the store's state folder (``usage.sqlite``), written by the CLI, the hook,
the MCP server and the watcher alike. A write waits up to a few seconds for a busy database.
Nothing about the log ever fails the ladder call that logs, nor a reader:

- a locked log, a full disk, a read-only or forbidden folder: the problem is reported once per
  process on stderr, logging is skipped, and reads fall back to a read-only connection;
- a damaged file (found on open, on a write or while reading a page) is moved aside
  (``usage.sqlite.corrupt-<time>``, the three latest kept) and a new one started;
- a row with a bad value (another program's edit) is skipped and counted, never raised.

The file is bounded: queries are stored as excerpts (:mod:`memory.state.usage_rows`), rows older
than the retention are pruned once a day, and past ``max_bytes`` the oldest rows go first and
the file is shrunk on disk to the cap (an incremental vacuum of the pages past it, then a
truncating checkpoint; the other freed pages take the next rows).

A ``read_section`` row carries the question that led to it: the last query that session asked
(``suggest`` or ``section_map``), so the promoter can tell distinct questions apart. How a
query is kept (``plain``, ``hashed`` or ``off``) is the ``queries`` setting.
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
from typing import TYPE_CHECKING

from memory.errors import NotesError
from memory.state import sqlite_files as files
from memory.state.usage_file import (
    DAY_S,
    apply_query_mode,
    check_shape,
    file_bytes,
    hash_key,
    last_query,
    open_log,
    prune_if_due,
    rewrite_queries,
    shrink,
)
from memory.state.usage_rows import (
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    MAX_RANKED,
    QUERY_MODES,
    Call,
    as_seconds,
    decode_text,
    safe_text,
    stored_query,
    to_call,
)

if TYPE_CHECKING:
    from memory.config import Config

__all__ = ["Call", "CallsRead", "DAY_S", "MAX_QUERY_CHARS", "QUERY_MODES", "UsageLog"]

SELECT_CALLS = ("SELECT id, ts, session, front, rung, query, note, section, tokens, ranked "
                "FROM calls WHERE ts >= ? ORDER BY id")
BUSY_TIMEOUT_S = 3.0
PRUNE_EVERY_S = 86_400.0
DEFAULT_MAX_BYTES = 64 << 20

Report = Callable[[str], None]
Row = tuple[str, str, str, str, str, str, int, str, int]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


@dataclass(frozen=True)
class CallsRead:
    """What a read of the log found: the good calls, how many rows had bad values, and where
    a log found damaged while reading was moved ('' if it was not)."""

    calls: tuple[Call, ...]
    skipped: int = 0
    damaged: str = ""


class UsageLog:
    """Appends ladder calls to ``<state>/usage.sqlite`` and reads them back."""

    def __init__(self, path: Path, retention_days: int = 180, report: Report = _stderr,
                 clock: Callable[[], float] = time.time, *, queries: str = "plain",
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if queries not in QUERY_MODES:
            raise ValueError(f"queries must be one of {QUERY_MODES}, not {queries!r}")
        self.path, self.retention_days, self.report = path, retention_days, report
        self.clock = clock  # when a call happened; replaceable to replay old sessions
        self.queries, self.max_bytes = queries, max_bytes
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._reported = False
        self._key = b""  # the hashed mode's key, read from the log once
        self._mode_checked = False
        self._shrink_floor = 0  # no shrink is tried below this size (one could not get under)
        self._moved_to: Path | None = None  # where the last damaged log went

    @classmethod
    def for_config(cls, config: Config, report: Report = _stderr) -> UsageLog:
        """The log of a store, with its retention, query mode and size cap."""
        return cls(config.state_dir / "usage.sqlite", config.usage_retention_days, report,
                   queries=config.usage_queries, max_bytes=config.usage_max_mb << 20)

    # -- writing -----------------------------------------------------------------------
    def record(self, session: str, front: str, rung: str, query: str = "", note: str = "",
               section: str = "", tokens: int = 0, ranked: tuple[str, ...] = (),
               exact: bool = True) -> None:
        """Log one call; never raises. ``exact`` is False when ``tokens`` is an estimate."""
        names = [safe_text(n, MAX_NAME_CHARS) for n in ranked[:MAX_RANKED]]
        row: Row = (safe_text(session, MAX_NAME_CHARS), front, rung, query,
                    safe_text(note, MAX_NAME_CHARS), safe_text(section, MAX_NAME_CHARS),
                    int(tokens), json.dumps(names), int(exact))
        for attempt in (1, 2):
            try:
                with self._lock:
                    self._insert(row)
                return
            except sqlite3.Error as exc:
                if attempt == 1 and files.is_corruption(exc) and self._set_aside(exc) is not None:
                    continue  # a new log was started: log the call there
                self._problem("write", exc)
            except OSError as exc:
                self._problem("write", exc)
            return

    def rename(self, old: str, new: str) -> int:
        """The calls that named note ``old`` (read it, or ranked it) name ``new`` (`notes
        move`); how many rows changed. Raises sqlite3.Error and OSError."""
        old_name = json.dumps(old)
        with self._lock:
            db = self._connect()
            with db:
                changed = db.execute("UPDATE calls SET note = ? WHERE note = ?",
                                     (new, old)).rowcount
                rows = db.execute("SELECT id, ranked FROM calls WHERE instr(ranked, ?) > 0",
                                  (old_name,)).fetchall()
                for row_id, ranked in rows:
                    try:
                        names = json.loads(ranked)
                    except ValueError:
                        continue
                    if isinstance(names, list) and old in names:
                        db.execute("UPDATE calls SET ranked = ? WHERE id = ?",
                                   (json.dumps([new if n == old else n for n in names]),
                                    row_id))
                        changed += 1
        return changed

    def _insert(self, row: Row) -> None:
        db = self._connect()
        self._apply_query_mode(db)
        session, _front, rung, query = row[:4]
        stored = stored_query(query, self.queries, self._hash_key(db))
        if rung == "read_section" and not stored and self.queries != "off":
            stored = last_query(db, session)
        with db:
            db.execute("INSERT INTO calls (ts, session, front, rung, query, note, section, "
                       "tokens, ranked, exact) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (self.clock(), *row[:3], stored, *row[4:]))
        try:
            if prune_if_due(db, self.clock(), self.retention_days, PRUNE_EVERY_S):
                rewrite_queries(db, self.queries, self._hash_key(db))  # another process's
            self._keep_under_cap(db)
        except sqlite3.Error as exc:  # the call is logged; only the upkeep failed
            if files.is_corruption(exc):
                raise
            self._problem("prune or shrink", exc)

    def _keep_under_cap(self, db: sqlite3.Connection) -> None:
        size = file_bytes(self.path)
        if size <= self.max_bytes or size <= self._shrink_floor:
            return
        try:
            shrink(db, self.max_bytes)
        finally:
            after = file_bytes(self.path)
            self._shrink_floor = after + self.max_bytes // 10 if after > self.max_bytes else 0

    def _hash_key(self, db: sqlite3.Connection) -> bytes:
        if self.queries == "hashed" and not self._key:
            self._key = hash_key(db)
        return self._key

    def _apply_query_mode(self, db: sqlite3.Connection) -> None:
        if not self._mode_checked:  # once per process (and per new file)
            apply_query_mode(db, self.queries, self._hash_key(db))
            self._mode_checked = True

    # -- reading -----------------------------------------------------------------------
    def read(self, since: float = 0.0) -> CallsRead:
        """Logged calls at or after ``since`` (unix time), oldest first, with the count of
        rows skipped for bad values. Raises NotesError when the log exists but cannot be read
        at all (a damaged one is moved aside instead, and what was read before is kept)."""
        try:
            if not self.path.exists() and files.why_unwritable(self.path):
                raise OSError("there is no log, and none can be made there")
            rows, damaged = self._rows(SELECT_CALLS, (since,))
        except (sqlite3.Error, OSError) as exc:
            why = files.why_unwritable(self.path)
            raise NotesError(f"cannot read the usage log {self.path} ({exc}"
                             f"{'; ' + why if why else ''}); {files.next_step(why)} and run the "
                             "command again") from exc
        calls = [c for c in map(to_call, rows) if c is not None]
        return CallsRead(tuple(calls), len(rows) - len(calls), damaged)

    def calls(self, since: float = 0.0) -> Iterator[Call]:
        """The good calls at or after ``since``; nothing (and one notice) if the log cannot
        be read."""
        try:
            yield from self.read(since).calls
        except NotesError as exc:
            self._problem("read", exc)

    def recent_notes(self, session: str, since: float, limit: int = 5) -> list[str]:
        """Notes this session mapped, read or recalled at or after ``since``, latest first,
        each once (the session prior of ``suggest``)."""
        try:
            rows, _ = self._rows("SELECT note, ts FROM calls WHERE session = ? AND ts >= ? AND "
                                 "note != '' AND rung != 'suggest' ORDER BY id DESC LIMIT 100",
                                 (session, since))
        except (sqlite3.Error, OSError) as exc:
            self._problem("read", exc)
            return []
        notes = (str(note) for note, ts in rows if type(note) is str and _at_or_after(ts, since))
        return list(dict.fromkeys(notes))[:limit]

    def count(self) -> int:
        """How many rows the log holds (0 if it cannot be read)."""
        try:
            rows, _ = self._rows("SELECT COUNT(*) FROM calls", ())
        except (sqlite3.Error, OSError) as exc:
            self._problem("read", exc)
            return 0
        return int(str(rows[0][0])) if rows else 0

    def _rows(self, sql: str, params: tuple[object, ...]) -> tuple[list[tuple[object, ...]], str]:
        """The rows of a query, and where the log went if a damaged page stopped the read
        (the rows before it are kept). Raises what else stops it."""
        damage: sqlite3.Error | None = None
        rows: list[tuple[object, ...]] = []
        moved = self._moved_to
        with self._lock:
            db, temporary = self._reader()
            try:
                if db is not None:
                    for row in db.execute(sql, params):
                        rows.append(tuple(row))
            except sqlite3.Error as exc:
                if not files.is_corruption(exc):
                    raise
                damage = exc
            finally:
                if temporary and db is not None:
                    db.close()
        if damage is not None:
            self._set_aside(damage)
        return rows, str(self._moved_to) if self._moved_to != moved else ""

    def _reader(self) -> tuple[sqlite3.Connection | None, bool]:
        """The connection to read with (None when there is no log yet), and whether it is a
        read-only one to close after the read (the folder or disk cannot be written)."""
        if self._db is not None:
            return self._db, False
        if not self.path.exists():
            return None, False
        try:
            return self._connect(), False
        except sqlite3.Error as exc:
            if files.is_corruption(exc):
                raise
        db = files.open_read_only(self.path, BUSY_TIMEOUT_S)
        db.text_factory = decode_text
        try:
            check_shape(db)
        except sqlite3.Error:
            db.close()
            raise
        return db, True

    # -- connection --------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = self._open()
        except sqlite3.Error as exc:
            if not files.is_corruption(exc):
                raise
            self._move_aside(exc)
            self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        return open_log(self.path, BUSY_TIMEOUT_S, self.max_bytes)

    def _set_aside(self, exc: Exception) -> Path | None:
        """Close and move the damaged log aside; where it went (None if it could not be)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
            self._mode_checked = False
            self._key = b""
            if not self.path.exists():
                return self.path
            try:
                return self._move_aside(exc)
            except OSError as failure:
                self._problem("move aside", failure)
                return None

    def _move_aside(self, exc: Exception) -> Path:
        aside = self._moved_to = files.move_aside(self.path)
        self.report(f"notes: the usage log was unreadable ({exc}); moved it to {aside} and "
                    "started a new one")
        return aside

    def _problem(self, action: str, exc: Exception) -> None:
        if self._reported:
            return
        self._reported = True
        why = files.why_unwritable(self.path)
        detail = f"{exc}; {why}" if why else str(exc)
        if action == "write":
            step = files.next_step(why) if why else "check the file"
            self.report(f"notes: could not write the usage log {self.path} ({detail}); the "
                        f"call itself succeeded and logging is skipped. To log again, {step}, "
                        "or set NOTES_USAGE_LOG=0 to stop logging")
        else:
            self.report(f"notes: could not {action} the usage log {self.path} ({detail}); the "
                        f"call goes on without it. To fix it, {files.next_step(why)}")

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None



def _at_or_after(value: object, since: float) -> bool:
    seconds = as_seconds(value)
    return seconds is not None and seconds >= since
