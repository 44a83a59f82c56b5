"""How a whole new Whoosh index is written: by several processes where that is safe and pays.

Whoosh analyzes and writes postings in pure Python, about 30,000 cl100k tokens a second on
one core. For a rebuild (an empty new index, nothing to compare with) its multiprocessing
writer hands batches of documents to worker processes, and each worker writes one segment
(merging them into one at the commit would redo the most expensive half of the work in this
process: measured at 1 M tokens on 2 cores, 36 s in one process, 34 s merged, 18 s as one
segment per worker). The index answers as one written by a single writer: the same hits
with the same scores, since Whoosh sums its statistics over segments; only the order of
equal scores can differ. Whoosh's writer is wrapped so that a worker that dies cannot hang
the build or leave it silently short (`workers.GuardedMpWriter`), and the caller
checks the document count and builds again in one process if it falls short.

It is used only where that is safe: worker processes must start by ``fork`` (they inherit
this process's patches and analyzers; ``spawn`` and ``forkserver`` start fresh interpreters),
and this process must have no other threads (a forked child inherits locks that another
thread may hold, as in a server or ``notes watch``). Everywhere else, and for stores too
small to repay starting the workers, one writer in this process builds the index.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from typing import Any

PARALLEL_MIN_NOTES = 32  # below this, starting worker processes costs more than it saves
WRITER_TIMEOUT = 30.0  # seconds to wait for another process's write lock


def available_cores() -> int:
    """Cores this process may run on (its affinity, not the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def parallel_safe() -> bool:
    """Worker processes would be forked from a process with no other threads."""
    import multiprocessing  # here, not at import: every CLI and hook process imports this

    method = multiprocessing.get_context().get_start_method()
    return method == "fork" and threading.active_count() == 1


def build_procs(notes: int, requested: int | None = None) -> int:
    """Processes to build a new index of ``notes`` notes with; 1 means this process alone.

    ``requested`` (a caller's or a test's choice) overrides the size and core checks, never
    the safety one."""
    if not parallel_safe():
        return 1
    if requested is not None:
        return max(1, requested)
    if notes < PARALLEL_MIN_NOTES:
        return 1
    return available_cores()


def open_writer(ix: Any, procs: int = 1, heartbeat: str | None = None) -> Any:
    """A writer for ``ix``: the guarded multiprocessing one (a segment per worker, each
    touching ``heartbeat``, the build lock's file, as it works) when ``procs`` > 1, else the
    ordinary one waiting up to WRITER_TIMEOUT for the lock."""
    if procs > 1:
        from memory.index.whoosh.workers import (
            GuardedMpWriter,  # multiprocessing: only for a build
        )

        return GuardedMpWriter(ix, heartbeat=heartbeat, procs=procs, multisegment=True)
    return ix.writer(timeout=WRITER_TIMEOUT, delay=0.01)


def abandon(writer: Any) -> None:
    """Cancel ``writer`` whatever state a failure left it in. Whoosh's own cancel closes the
    segment's files first and releases the write lock last, so a close that fails again (a
    full disk flushing its buffers) would keep the lock held by this process for good, and
    every later write here would wait for it. Here the lock is released, the unfinished
    segment's files and the temporary folder are deleted, whatever fails on the way."""
    with contextlib.suppress(Exception):
        writer.cancel()
    for part in ("perdocwriter", "fieldwriter", "pool"):
        _close_files(getattr(writer, part, None))
    searcher = getattr(writer, "_searcher", None)
    if searcher is not None:
        with contextlib.suppress(Exception):
            searcher._orig_close()
        writer._searcher = None
    lock = getattr(writer, "writelock", None)
    if lock is not None and getattr(lock, "fd", None) is not None:
        try:
            lock.release()
        except Exception:
            with contextlib.suppress(OSError):
                os.close(lock.fd)
            lock.fd = None
    with contextlib.suppress(Exception):
        writer._tempstorage.destroy()
    with contextlib.suppress(Exception):
        _delete_unfinished_segment(writer)
    writer.is_closed = True


def drop_frames(exc: BaseException) -> None:
    """Close the files left open in the frames ``exc`` was raised through (say, a table of
    contents Whoosh failed to write on a full disk), then clear those frames: the files are
    closed now and quietly, not complained about on stderr by the garbage collector later."""
    trace = exc.__traceback__
    while trace is not None:
        _close_files(list(trace.tb_frame.f_locals.values()), depth=3)
        trace = trace.tb_next
    import traceback  # here: only a failed build needs it

    traceback.clear_frames(exc.__traceback__)


def _close_files(root: Any, depth: int = 4) -> None:
    """Close the files a failed writer part still holds open (a close that failed to flush
    on a full disk closes the file anyway), so that none is left for the garbage collector
    to complain about."""
    seen: set[int] = set()
    pending = [(root, depth)]
    while pending:
        obj, left = pending.pop()
        if obj is None or id(obj) in seen or left < 0:
            continue
        seen.add(id(obj))
        if isinstance(obj, io.IOBase):
            with contextlib.suppress(Exception):
                obj.close()
            continue
        if isinstance(obj, list | tuple):
            pending += [(item, left - 1) for item in obj]
        elif hasattr(obj, "__dict__") and not isinstance(obj, type):
            pending += [(value, left - 1) for value in vars(obj).values()]


def _delete_unfinished_segment(writer: Any) -> None:
    """The files of the segment ``writer`` was writing, unless its commit got as far as the
    table of contents (then they are the index's)."""
    from whoosh.index import TOC

    storage = writer.storage
    if storage.file_exists(TOC._filename(writer.indexname, writer.generation)):
        return
    for name in writer.newsegment.list_files(storage):
        with contextlib.suppress(OSError):
            storage.delete_file(name)


# -- keeping commits quick ---------------------------------------------------------------
# Whoosh merges small segments at commit time, in Python: at a million tokens, merging five
# one-note segments (1-2 MB) took 0.55-0.9 s, the worst case of a saved note becoming
# searchable. So a commit of a few notes merges nothing until MERGE_AT small segments have
# accumulated (then that commit merges them), and `tidy` merges them when nobody waits: in
# `notes watch` and the MCP server's watcher once the notes have been quiet for 2 s and every
# minute, and in `notes index`. MERGE_AT is not higher because each small segment costs a
# search about 1.7 ms at a million tokens (warm suggest p95 7.6 ms with none, 34 ms with 16).
MERGE_AT = 8
SMALL_SHARE = 8  # a segment is small when it holds fewer than 1/8 of the largest's documents


def small_segments(segments: list[Any]) -> list[Any]:
    """Segments much smaller than the largest: what one-note commits leave behind."""
    largest = max((segment.doc_count_all() for segment in segments), default=0)
    return [s for s in segments if s.doc_count_all() * SMALL_SHARE < largest]


def merge_small(writer: Any, segments: list[Any]) -> list[Any]:
    """A Whoosh merge policy: every small segment is merged into the new one; the others
    stay as they are."""
    from whoosh.reading import SegmentReader

    small = small_segments(segments)
    if len(small) < 2:
        return segments
    for segment in small:
        reader = SegmentReader(writer.storage, writer.schema, segment)
        writer.add_reader(reader)
        reader.close()
    return [s for s in segments if s not in small]


def commit_quickly(writer: Any) -> None:
    """Commit without merging, unless MERGE_AT small segments are waiting (a new index, built
    by one writer or by workers, has none)."""
    if len(small_segments(list(writer.segments))) + 1 >= MERGE_AT:
        writer.commit(mergetype=merge_small)
    else:
        writer.commit(merge=False)


def tidy(ix: Any) -> int:
    """Merge the small segments of ``ix`` into one; returns how many were merged (0: none, and
    nothing was written). It does not wait for the write lock: a busy index raises Whoosh's
    LockError at once, and is left for the next tidy (a watcher must not stall on it)."""
    writer = ix.writer()
    try:
        merged = len(small_segments(list(writer.segments)))
        if merged < 2:
            writer.cancel()
            return 0
        writer.commit(mergetype=merge_small)
    except BaseException:
        abandon(writer)
        raise
    return merged
