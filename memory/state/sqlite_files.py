"""What the derived SQLite files (the usage log, the token cache) share.

Neither file holds anything the notes do not: a damaged one is moved aside or started anew,
and a folder that cannot be written (full disk, read-only file system, no permission) means
reading what is there, read-only, and writing nothing. This module tells damage from other
faults, opens a file without writing to it, and says in one clause why a folder cannot be
written, for the one notice the user sees.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

SQLITE_CORRUPT, SQLITE_NOTADB = 11, 26
LOW_SPACE_BYTES = 1 << 20  # below this much free space a failed write is put down to a full disk


class Damaged(sqlite3.DatabaseError):
    """A readable SQLite file that is not what the program wrote (a foreign table shape)."""


def is_corruption(exc: BaseException) -> bool:
    """Whether ``exc`` says the file itself is damaged (not locked, full or read-only)."""
    if isinstance(exc, Damaged):
        return True
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF in (SQLITE_CORRUPT, SQLITE_NOTADB):
        return True
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text or "file is encrypted" in text


def open_read_only(path: Path, timeout: float) -> sqlite3.Connection:
    """``path`` opened so that nothing is written, not even the WAL index; for a folder that
    cannot be written. Without a write-ahead log to merge the file is opened as immutable."""
    uri = path.resolve().as_uri()
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=timeout, check_same_thread=False)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
        return db
    except sqlite3.Error as exc:
        db.close()
        wal = Path(f"{path}-wal")
        if is_corruption(exc) or (wal.exists() and wal.stat().st_size > 0):
            raise
    db = sqlite3.connect(f"{uri}?immutable=1", uri=True, timeout=timeout,
                         check_same_thread=False)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
    except sqlite3.Error:
        db.close()
        raise
    return db


def move_aside(path: Path, keep: int = 3) -> Path:
    """Rename a damaged file to ``<name>.corrupt-<time>`` (its -wal and -shm removed), keeping
    only the ``keep`` latest such copies. Raises OSError when the folder cannot be written."""
    aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
    path.replace(aside)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    older = sorted(path.parent.glob(f"{path.name}.corrupt-*"), key=_mtime, reverse=True)
    for stale in older[keep:]:
        stale.unlink(missing_ok=True)
    return aside


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def why_unwritable(path: Path) -> str:
    """Why the folder of ``path`` cannot take a write, in a few words ('' if no reason seen):
    a file where a folder is expected, a read-only file system, a full disk, no permission."""
    folder = path.parent
    while not folder.exists():
        if folder.parent == folder:
            return ""
        folder = folder.parent
    if not folder.is_dir():
        return f"{folder} is a file, not a folder"
    try:
        stats = os.statvfs(folder)
    except OSError:
        return ""
    if stats.f_flag & os.ST_RDONLY:
        return f"the file system holding {folder} is read-only"
    if stats.f_bavail * stats.f_frsize < LOW_SPACE_BYTES:
        return f"the disk holding {folder} is full"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable by this user"
    return ""


def next_step(reason: str) -> str:
    """What to do about ``reason`` (from :func:`why_unwritable`)."""
    if "is full" in reason:
        return "free some space"
    if reason:
        return "set NOTES_STATE_DIR to a folder this user can write"
    return "check the file and its folder"
