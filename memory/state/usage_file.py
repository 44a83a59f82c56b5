"""The usage log's file: its schema, how it is opened, pruned, kept under its cap, and how the
queries already in it are rewritten when the query mode becomes stricter.

Functions over one open connection; :class:`memory.state.usage.UsageLog` decides when to call them.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from memory.state.sqlite_files import Damaged
from memory.state.usage_rows import as_seconds, decode_text, stored_query

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
COLUMNS = {"calls": {"id", "ts", "session", "front", "rung", "query", "note", "section",
                     "tokens", "ranked", "exact"}, "meta": {"key", "value"}}
DAY_S = 86_400.0
PAGE = 4096
SHRINK_TO = 0.75  # past the cap, the oldest rows go until the rest fill this share of it


def open_log(path: Path, timeout: float, max_bytes: int) -> sqlite3.Connection:
    """``path`` opened for writing: WAL, incremental auto-vacuum for a new file, a write-ahead
    log bounded to a 32nd of the cap. Raises :class:`Damaged` for a foreign table shape."""
    db = sqlite3.connect(path, timeout=timeout, check_same_thread=False)
    db.text_factory = decode_text
    try:
        db.execute("PRAGMA auto_vacuum=INCREMENTAL")  # takes effect in a new file only
        db.execute("PRAGMA journal_mode=WAL").fetchall()
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(f"PRAGMA journal_size_limit={wal_bytes(max_bytes)}")
        db.execute(f"PRAGMA wal_autocheckpoint={wal_bytes(max_bytes) // PAGE}")
        check_shape(db)  # before the schema's indexes trip over a foreign table
        db.executescript(SCHEMA)
    except sqlite3.Error:
        db.close()
        raise
    return db


def check_shape(db: sqlite3.Connection) -> None:
    for table, columns in COLUMNS.items():
        have = {str(r[1]) for r in db.execute(f"PRAGMA table_info({table})")}
        if have and not columns <= have:
            raise Damaged(f"its {table} table has other columns ({', '.join(sorted(have))})")


def wal_bytes(max_bytes: int) -> int:
    """How far the write-ahead log may grow between checkpoints: a 32nd of the cap."""
    return max(max_bytes // 32, 8 * PAGE)


def file_bytes(path: Path) -> int:
    """The log's size on disk: the database and its write-ahead log."""
    total = 0
    for part in (path, Path(f"{path}-wal")):
        try:
            total += part.stat().st_size
        except OSError:
            pass
    return total


def meta(db: sqlite3.Connection, key: str) -> object:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def last_query(db: sqlite3.Connection, session: str) -> str:
    """The last query this session asked, as stored (a bad value is passed over)."""
    rows = db.execute("SELECT query FROM calls WHERE session = ? AND query != '' "
                      "ORDER BY id DESC LIMIT 5", (session,)).fetchall()
    return next((str(q) for (q,) in rows if type(q) is str), "")


def prune_if_due(db: sqlite3.Connection, now: float, retention_days: int,
                 every_s: float) -> bool:
    """Once per ``every_s`` (a stamp in meta; a bad stamp counts as due): drop the rows older
    than the retention, and rows whose time is not a number (they could never age out).
    Whether it was due."""
    stamp = as_seconds(_number(meta(db, "pruned")))
    if stamp is not None and abs(now - stamp) < every_s:
        return False
    with db:
        db.execute("DELETE FROM calls WHERE ts < ? OR typeof(ts) NOT IN ('real', 'integer')",
                   (now - retention_days * DAY_S,))
        db.execute("INSERT OR REPLACE INTO meta VALUES ('pruned', ?)", (str(now),))
    reclaim(db, full=False, truncate=False)
    return True


def shrink(db: sqlite3.Connection, max_bytes: int) -> None:
    """Drop the oldest rows until the rest fill ``SHRINK_TO`` of the cap (less the write-ahead
    log's share), then give the freed pages back to the file system."""
    page_size, pages, free = (_pragma(db, name) for name in
                              ("page_size", "page_count", "freelist_count"))
    used = (pages - free) * page_size
    target = int((max_bytes - wal_bytes(max_bytes)) * SHRINK_TO)
    if used > target:
        rows = int(db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])
        drop = max(1, rows - int(rows * target / used))
        with db:
            db.execute("DELETE FROM calls WHERE id IN (SELECT id FROM calls ORDER BY id "
                       "LIMIT ?)", (drop,))
    reclaim(db, full=True, truncate=True, keep_bytes=max_bytes - wal_bytes(max_bytes))


def reclaim(db: sqlite3.Connection, full: bool, truncate: bool,
            keep_bytes: int | None = None) -> None:
    """Give free pages back to the file system. A file made before auto-vacuum was turned on
    is rewritten once (``full``); later ones shrink incrementally: every free page, or with
    ``keep_bytes`` only those past that size (the rest are filled by the next rows without
    growing the file, and a page given back is first written into the write-ahead log: all
    of them at once made that log as big as the file under a flood of writers). The database
    file shrinks at the next checkpoint: at once with ``truncate`` (which also empties the
    write-ahead log, waiting up to the busy timeout for readers), else at the next automatic
    one."""
    if _pragma(db, "auto_vacuum") == 2:
        past = 0 if keep_bytes is None else (  # 0: every free page
            _pragma(db, "page_count") - keep_bytes // _pragma(db, "page_size"))
        if keep_bytes is None or past > 0:  # executescript: execute() frees one page only
            db.executescript(f"PRAGMA incremental_vacuum({past})")
    elif full:
        db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        db.execute("VACUUM")
    if truncate:
        checkpoint(db)


def checkpoint(db: sqlite3.Connection, tries: int = 20) -> bool:
    """Copy the write-ahead log into the file and empty it; whether that was done. Another
    process's checkpoint makes it busy at once (no busy handler), so it is tried again a few
    times, 50 ms apart."""
    for attempt in range(tries):
        busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if not busy or busy[0] == 0:
            return True
        if attempt + 1 < tries:
            time.sleep(0.05)
    return False


def hash_key(db: sqlite3.Connection) -> bytes:
    """The log's key for hashed queries (made once, kept in meta)."""
    key = meta(db, "query_key")
    if not (isinstance(key, str) and len(key) == 64):
        with db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('query_key', ?)",
                       (os.urandom(32).hex(),))  # as secrets.token_hex
        key = meta(db, "query_key")
    return str(key).encode()


def apply_query_mode(db: sqlite3.Connection, mode: str, key: bytes) -> None:
    """When ``mode`` is stricter than the one the log was last written in (plain → hashed →
    off), rewrite the queries already there (:func:`rewrite_queries`). In hashed and off
    modes deleted rows are zeroed too."""
    applied = meta(db, "queries")
    if applied != mode:
        if mode != "plain" and applied != "off":
            rewrite_queries(db, mode, key)
        with db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('queries', ?)", (mode,))
    if mode != "plain":
        db.execute("PRAGMA secure_delete=ON")


def rewrite_queries(db: sqlite3.Connection, mode: str, key: bytes) -> int:
    """Queries not yet in ``mode``'s form made so (digests, or blanked), the old text zeroed
    (``secure_delete``) and the write-ahead log emptied; how many rows changed. Also run at
    each daily prune, for rows a process with an older setting logged meanwhile."""
    if mode == "plain":
        return 0
    db.execute("PRAGMA secure_delete=ON")
    rows = db.execute("SELECT id, query FROM calls WHERE query != '' AND NOT (? AND query "
                      "GLOB 'sha256:*')", (mode == "hashed",)).fetchall()
    new = [(stored_query(q, mode, key) if type(q) is str else "", i) for i, q in rows]
    new = [(q, i) for (q, i), (_, old) in zip(new, rows, strict=True) if q != old]
    if new:
        with db:
            db.executemany("UPDATE calls SET query = ? WHERE id = ?", new)
        reclaim(db, full=False, truncate=True)
    return len(new)


def _number(value: object) -> object:
    """A stamp stored as text ('1767000000.5') as a number; anything else as it is."""
    if type(value) is str:
        try:
            return float(value)
        except ValueError:
            return None
    return value


def _pragma(db: sqlite3.Connection, name: str) -> int:
    row = db.execute(f"PRAGMA {name}").fetchone()
    return int(row[0]) if row else 0
