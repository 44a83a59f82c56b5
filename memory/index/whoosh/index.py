"""The Whoosh index of a store (the default backend): one Whoosh index in ``<state>/index``.

The life cycle (open, refresh, rebuild, swap, recovery) is :mod:`memory.index.lifecycle`'s;
what is Whoosh's own is here and beside it:

- the three document kinds in one schema (:mod:`.schema`), scored per kind (:mod:`.search`);
- one searcher kept per index object while the files stay the same (:mod:`.searcher`), over
  segment files read in place (:mod:`.files`, patched in by :mod:`.opening`);
- re-indexing a note replaces only its documents whose fingerprint changed, in a commit that
  merges nothing until enough small segments wait, and :meth:`WhooshIndex.tidy` merges them
  (:mod:`.build`);
- a rebuild by worker processes (:mod:`.build`, :mod:`.workers`) where that is safe;
- Whoosh's own write lock, waited on for up to 30 s (``LockError``: another writer).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from whoosh import index as whoosh_index
from whoosh.index import LockError

from memory.errors import IndexUnavailable
from memory.index.backend import ParallelBuildFailed
from memory.index.failures import write_failed
from memory.index.interface import Notify, Observer, Searcher
from memory.index.lifecycle import IndexLifecycle
from memory.index.stored import StoredNote
from memory.index.whoosh.analysis import stem_terms
from memory.index.whoosh.build import (
    WRITER_TIMEOUT,
    abandon,
    build_procs,
    drop_frames,
    open_writer,
    tidy,
)
from memory.index.whoosh.known import Stamp, load_known, save_known
from memory.index.whoosh.opening import looks_like_damage, probe, retrying, stored_notes_of
from memory.index.whoosh.schema import VERSION, build_schema, shared_schema
from memory.index.whoosh.search import WhooshSearcher, weighting
from memory.index.whoosh.searcher import SharedSearcher
from memory.index.whoosh.writer import WhooshWriter
from memory.state.store import Store
from memory.state.tokens import TokenCounter


def _quiet(_: str) -> None:
    return None


class WhooshIndex(IndexLifecycle[Any]):
    """Owns the Whoosh index of one store; the only writer of it in this process."""

    FOLDER = "index"
    WRITER_TIMEOUT = WRITER_TIMEOUT
    BUSY = (LockError,)

    def __init__(self, store: Store, counter: TokenCounter, notify: Notify = _quiet,
                 observer: Observer | None = None) -> None:
        super().__init__(store, counter, notify, observer)
        # what the index holds of each note, by (generation, inode of the index folder)
        self._known: tuple[Stamp, dict[str, StoredNote]] | None = None
        self._documents_added = 0  # by the rebuild under way
        self._searchers = SharedSearcher(self.dir, lambda: retrying(
            lambda: WhooshSearcher(self.open().searcher(weighting=weighting()))))

    # -- files ---------------------------------------------------------------------------
    def version(self) -> dict[str, Any]:
        return VERSION

    def stem_terms(self, text: str) -> frozenset[str]:
        return stem_terms(text)

    def _present(self) -> bool:
        return self.dir.is_dir() and any(self.dir.glob("*.toc"))

    def _probe(self) -> Any:
        return retrying(lambda: probe(self.dir))

    def _unreadable(self, exc: BaseException) -> bool:
        return isinstance(exc, Exception) and not isinstance(exc, IndexUnavailable)

    def _damaged_in_search(self, exc: BaseException) -> bool:
        return looks_like_damage(exc)

    def _open_files(self, folder: Path) -> Any:
        return retrying(lambda: whoosh_index.open_dir(str(folder), schema=shared_schema()))

    def _create_files(self, folder: Path) -> Any:
        folder.mkdir(parents=True)
        return whoosh_index.create_in(str(folder), build_schema())

    def close(self) -> None:
        self._known = None
        self._searchers.invalidate()
        if self._ix is not None:
            self._ix.close()
            self._ix = None

    # -- reading -------------------------------------------------------------------------
    def _acquire(self) -> Searcher:
        """The shared searcher, one search at a time, reused while the index files are
        unchanged (:mod:`.searcher`)."""
        searcher: WhooshSearcher = self._searchers.acquire()
        return searcher

    def _release(self) -> None:
        self._searchers.release()

    def _stored_notes(self) -> Mapping[str, StoredNote]:
        """Read again only when the index has a new generation (a commit, here or in
        another process); a cold process takes them from the copy beside the index while
        it is of the same generation (:mod:`.known`)."""
        ix = self.open()
        try:
            stamp = self._stamp(ix)
            if self._known is None or self._known[0] != stamp:
                self._known = (stamp, self._read_known(ix, stamp))
            return self._known[1]
        except BaseException:
            self._known = None
            raise

    def _stamp(self, ix: Any) -> Stamp:
        return ix.latest_generation(), os.stat(self.dir).st_ino

    def _read_known(self, ix: Any, stamp: Stamp) -> dict[str, StoredNote]:
        kept = load_known(self.dir, stamp)
        if kept is not None:
            return kept
        notes = retrying(lambda: stored_notes_of(ix))
        if self._stamp(ix) == stamp:  # no commit or swap while they were read
            save_known(self.dir, stamp, notes)
        return notes

    # -- writing -------------------------------------------------------------------------
    @contextlib.contextmanager
    def _writer(self, ix: Any, folder: Path, building: bool,
                procs: int) -> Iterator[WhooshWriter]:
        """Whoosh's writer (worker processes when ``procs`` > 1, each touching the build
        lock's file as it works); a failure abandons it whatever state it is in."""
        raw = open_writer(ix, procs, str(self.lock_path) if procs > 1 else None)
        writer = WhooshWriter(raw, building)
        try:
            yield writer
        except BaseException:
            if not writer.committed:
                abandon(raw)  # its lock released and its files deleted, whatever fails
                self._known = None
            raise
        finally:
            if building:
                self._documents_added = writer.added

    def tidy(self) -> int:
        """Merge the small segments that quick commits left (see :mod:`.build`); returns
        how many were merged. A busy index is left for the next tidy."""
        with self._lock:
            try:
                return tidy(self.open())
            except LockError:
                return 0
            except OSError as exc:
                raise write_failed(self.dir, exc) from exc

    # -- building ------------------------------------------------------------------------
    def _build_procs(self, notes: int) -> int:
        return build_procs(notes, self.build_procs)

    def _check_build(self, ix: Any, procs: int) -> None:
        held = ix.doc_count_all()
        if procs > 1 and held != self._documents_added:
            raise ParallelBuildFailed(f"the parallel build holds {held} of "
                                      f"{self._documents_added} documents")

    def _build_failed(self, exc: BaseException) -> None:
        drop_frames(exc)
