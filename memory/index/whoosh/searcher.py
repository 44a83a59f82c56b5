"""One Whoosh searcher per index object, reused while the index's files stay the same.

Opening a Whoosh searcher used to copy every sub-file of each segment out of its memory map
(a ``BytesIO`` of a ``memoryview``): tens of megabytes per call at a million tokens, most of a
``suggest``. ``whoosh_files`` now reads them in place, so opening costs under a millisecond,
but a searcher opened anew for each ``suggest`` still costs about 2 ms more at a million
tokens (p50 7.4 against 5.6 ms, measured alternating). So each
:class:`memory.index.whoosh.WhooshIndex` (one per process in the CLI and the MCP server) keeps one
searcher, shared by the process's threads one search at a time (Whoosh
searchers are not thread-safe; searching is CPU-bound Python, so this costs no throughput),
and opens a new one when the files of the index change: a commit here or in another process
(a new table of contents; segment names are random), a rebuild swapped in, or damage (a
truncated, rewritten or deleted file), which the new searcher then fails to open, so the index
is rebuilt without the old one ever reading a damaged file. The check is a ``stat`` of each
``.toc`` and ``.seg`` file before every search.

A thread that already holds the searcher (a search inside a search) keeps it, even if the
files changed meanwhile: a searcher is never closed under the thread using it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

Stamp = tuple[tuple[str, int, int, int], ...]


def files_stamp(folder: Path) -> Stamp:
    """Name, size, mtime and inode of the index's table-of-contents and segment files."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return ()
    out = []
    for entry in entries:
        if entry.name.endswith((".toc", ".seg")):
            try:
                stat = entry.stat()
            except OSError:
                continue
            out.append((entry.name, stat.st_size, stat.st_mtime_ns, stat.st_ino))
    return tuple(sorted(out))


class SharedSearcher:
    """The cached searcher and the lock that serializes its use."""

    def __init__(self, folder: Path, open_searcher: Callable[[], Any]) -> None:
        self.folder, self.open_searcher = folder, open_searcher
        self.lock = threading.RLock()
        self._current: Any = None
        self._stamp: Stamp | None = None
        self._epoch = 0  # bumped by invalidate(): the index object was closed or replaced
        self._opened_epoch = -1
        self._depth = 0

    def acquire(self) -> Any:
        """Lock, then the current searcher (opened anew when the files changed); on an
        error the lock is released and the error raised."""
        self.lock.acquire()
        try:
            searcher = self._ensure()
        except BaseException:
            self.lock.release()
            raise
        self._depth += 1
        return searcher

    def release(self) -> None:
        self._depth -= 1
        self.lock.release()

    def _ensure(self) -> Any:
        stamp = files_stamp(self.folder)
        fresh = stamp == self._stamp and self._opened_epoch == self._epoch
        if self._current is not None and (fresh or self._depth > 0):
            return self._current
        self._close_current()
        epoch = self._epoch
        self._current = self.open_searcher()
        self._stamp, self._opened_epoch = stamp, epoch
        return self._current

    def invalidate(self) -> None:
        """The index was closed or is being replaced: never reuse the searcher; close it
        now unless another thread is searching (then the next acquire closes it)."""
        self._epoch += 1
        if self.lock.acquire(blocking=False):
            try:
                if self._depth == 0:
                    self._close_current()
            finally:
                self.lock.release()

    def _close_current(self) -> None:
        current, self._current, self._stamp = self._current, None, None
        if current is not None:
            try:
                current.close()
            except Exception:  # a searcher over damaged files may fail to close
                pass
