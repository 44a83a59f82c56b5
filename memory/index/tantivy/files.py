"""The files of the tantivy indexes: open, create, swap, lock, write, and check them.

Helpers of :class:`memory.index.tantivy.TantivyIndex`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tantivy

from memory.index.tantivy import schema as ts

WRITER_TIMEOUT = 30.0
WRITER_HEAP = 64_000_000  # bytes per kind; tantivy's floor is 15 MB per thread
BUILD_THREADS = 1  # the Python side is the bottleneck; a second thread only adds memory


class IndexBusy(Exception):
    """Another process holds the write lock past the timeout."""


class IndexDamaged(Exception):
    """The index's files changed under the reader without a commit."""


Stamp = tuple[int, int, int]


def file_stamp(path: str) -> Stamp | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_mtime_ns, stat.st_size, stat.st_ino)


def meta_stamps(folder: Path) -> tuple[Stamp | None, ...]:
    return tuple(file_stamp(str(folder / kind / "meta.json")) for kind in ts.KINDS)


@dataclass(frozen=True)
class LiveFiles:
    """The files of the segments each kind's ``meta.json`` lists, with their stamps."""

    metas: tuple[Stamp | None, ...]
    files: tuple[tuple[str, Stamp | None], ...]

    @classmethod
    def of(cls, folder: Path, metas: tuple[Stamp | None, ...]) -> LiveFiles:
        files: list[tuple[str, Stamp | None]] = []
        for kind in ts.KINDS:
            meta = read_json(folder / kind / "meta.json")
            ids = {str(seg.get("segment_id", "")).replace("-", "")
                   for seg in (meta or {}).get("segments", []) if isinstance(seg, dict)}
            with contextlib.suppress(OSError):
                for entry in os.scandir(folder / kind):
                    if entry.name.split(".", 1)[0] in ids:
                        files.append((entry.path, file_stamp(entry.path)))
        return cls(metas, tuple(files))

    def intact(self) -> bool:
        return all(file_stamp(path) == stamp for path, stamp in self.files)


@contextlib.contextmanager
def open_writers(indexes: dict[str, Any], building: bool) -> Iterator[dict[str, Any]]:
    """One writer per kind, for :func:`commit`; what was not committed is rolled back."""
    threads = BUILD_THREADS if building else 1
    writers = {kind: indexes[kind].writer(WRITER_HEAP * threads, threads)
               for kind in ts.KINDS}
    try:
        yield writers
        for kind in ts.KINDS:
            writers[kind].wait_merging_threads()
    except BaseException:
        rollback(writers)
        raise
    finally:
        writers.clear()  # dropping a writer releases tantivy's own lock
    for index in indexes.values():
        index.reload()


def commit(writers: dict[str, Any]) -> None:
    """Paragraphs, then sections, then notes: a crash in between leaves the note documents
    describing the old files, so the next refresh re-indexes those notes."""
    for kind in ts.KINDS:
        writers[kind].commit()


def rollback(writers: dict[str, Any]) -> None:
    for kind in ts.KINDS:
        with contextlib.suppress(Exception):
            writers[kind].rollback()


def delete(writers: dict[str, Any], note_id: str) -> None:
    for writer in writers.values():
        writer.delete_documents_by_term("note_id", note_id)


def create_all(folder: Path) -> dict[str, Any]:
    out = {}
    for kind in ts.KINDS:
        (folder / kind).mkdir(parents=True, exist_ok=True)
        out[kind] = tantivy.Index(ts.schema(kind), path=str(folder / kind), reuse=False)
        ts.register(out[kind])
    return out


def open_all(folder: Path) -> dict[str, Any]:
    out = {}
    for kind in ts.KINDS:
        out[kind] = tantivy.Index.open(str(folder / kind))
        ts.register(out[kind])
    return out


def probe(index: Any) -> None:
    """Read every segment a little: the document count and the first stored document."""
    searcher = index.searcher()
    if searcher.num_docs:
        for _score, address in searcher.search(tantivy.Query.all_query(), 1).hits:
            searcher.doc(address)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def write_lock(folder: Path) -> Iterator[None]:
    """Across processes: wait up to WRITER_TIMEOUT for ``write.lock``."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "write.lock", "a+b") as handle:
        deadline = time.monotonic() + WRITER_TIMEOUT
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise IndexBusy(f"{folder} is being written by another process") \
                        from None
                time.sleep(0.01)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
