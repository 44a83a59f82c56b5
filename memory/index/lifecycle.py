"""The life cycle every index backend shares: open, refresh, write, rebuild, swap, recover.

The index lives in ``<state dir>/<FOLDER>``. It is incremental: each note document stores its
file's mtime, size and content hash, and :meth:`IndexLifecycle.refresh` re-indexes only the
notes whose hash changed (and drops the ones that are gone). A version change, a missing index
or a damaged one triggers a full rebuild with one message, never a traceback. Rebuilds are
made in ``<FOLDER>.new-<pid>`` and swapped in, so a crash mid-build leaves the old index; the
build lock names its holder and is never held for good by a dead or stuck process, and the
folders of killed builds are removed (:mod:`memory.index.locks`). A write that fails (a full
or read-only disk) releases every lock and raises :class:`IndexUnavailable`; the index stays
as it was, and the next call after the disk is fixed works at once.

A backend (:mod:`memory.index.whoosh`, :mod:`memory.index.tantivy`) subclasses
:class:`IndexLifecycle` and supplies only what is its own: its files (open, create, probe,
close), its searcher, what it stores of each note, and a :class:`NoteWriter`: the methods
and state of :class:`memory.index.backend.IndexBackend`, the base of :class:`IndexLifecycle`.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from memory.errors import IndexUnavailable
from memory.index.backend import H, IndexBackend, NoteWriter, ParallelBuildFailed, no_beat
from memory.index.documents import note_documents
from memory.index.failures import build_failed, busy, write_failed
from memory.index.interface import Progress, RefreshReport, Searcher, WrittenNote
from memory.index.locks import HolderLock, remove_leftovers, remove_tree, swap_in
from memory.index.scan import changed_files
from memory.index.stored import StoredNote
from memory.state.store import LoadedNote, NoteFile

T = TypeVar("T")
REQUESTED = "rebuild requested"


class IndexLifecycle(IndexBackend[H]):
    """Owns the index of one store and is its only writer in this process."""

    # -- opening -------------------------------------------------------------------------
    def open(self) -> H:
        """The open index, built first if it is missing, outdated or unreadable."""
        with self._lock:
            if self._ix is None:
                if not self._cleaned:
                    self._cleaned = True
                    remove_leftovers(self.dir.parent, self.dir.name)
                reason, probed = self._check()
                if reason:
                    self._rebuild(reason, None)
                else:
                    self._ix = probed
            return self._opened()

    def _opened(self) -> H:
        if self._ix is None:
            raise IndexUnavailable(f"the index in {self.dir} is not open; run the command "
                                   "again")
        return self._ix

    def _check(self) -> tuple[str, H | None]:
        """Why the index in :attr:`dir` cannot be used ("" when it can), and then the index
        opened by the probe."""
        if not self._present():
            return "no index yet", None
        if _read_json(self.dir / "version.json") != self.version():
            return "the index was built by another version", None
        try:
            return "", self._probe()
        except BaseException as exc:  # any failure to read it means: rebuild it
            if not self._unreadable(exc):
                raise
            return f"the index is damaged ({type(exc).__name__})", None

    # -- reading with recovery -----------------------------------------------------------
    @contextlib.contextmanager
    def searcher(self) -> Iterator[Searcher]:
        """A searcher over the index as it is now; a damaged index is rebuilt once first."""
        try:
            searcher = self._acquire()
        except BaseException as exc:
            if not self._unreadable(exc):
                raise
            self._recover(exc)
            searcher = self._acquire()
        try:
            yield searcher
        finally:
            self._release()

    def _recover(self, exc: BaseException) -> H:
        self.close()
        self.rebuild(reason=f"the index could not be read ({type(exc).__name__})")
        return self.open()

    def run_search(self, fn: Callable[[Searcher], T]) -> T:
        """Run ``fn(searcher)``; if the index turns out damaged, rebuild and run it again."""
        try:
            with self.searcher() as searcher:
                return fn(searcher)
        except BaseException as exc:
            if isinstance(exc, IndexUnavailable) or not self._damaged_in_search(exc):
                raise
            self._recover(exc)
            with self.searcher() as searcher:
                return fn(searcher)

    def _damaged_in_search(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised while a search ran, means the index is damaged."""
        return self._unreadable(exc)

    # -- keeping fresh -------------------------------------------------------------------
    def refresh(self, progress: Progress | None = None) -> RefreshReport:
        """Re-index the notes whose content changed since they were indexed. Raises
        IndexUnavailable when the index cannot be built or written, or stays locked by
        another writer past WRITER_TIMEOUT; the index is then left as it was."""
        with self._lock:
            try:
                return self._refresh(progress)
            except self.BUSY as exc:
                raise busy(self.dir, self.WRITER_TIMEOUT) from exc

    def _refresh(self, progress: Progress | None) -> RefreshReport:
        self.open()
        known = self._known_notes()
        changed, removed, unchanged = changed_files(self.store.root, known,
                                                    self.store.config.state_dir)
        report = RefreshReport(unchanged=unchanged, removed=removed)
        if changed or report.removed:
            report.indexed = self._write(changed, report.removed, known, progress)
            report.unchanged += len(changed) - len(report.indexed)
        return report

    def _known_notes(self) -> Mapping[str, StoredNote]:
        try:
            return self._stored_notes()
        except BaseException as exc:
            if not self._unreadable(exc):
                raise
            self._recover(exc)  # a complete new index: read it instead
            return self._stored_notes()

    def note_projects(self) -> dict[str, str]:
        """The project of every indexed note that names one, by note id: from what the
        index holds of each note, which the backend keeps while the index is unchanged, so
        a scope asks for it on every search at little cost."""
        known = self._known_notes()
        cached = self._projects
        if cached is None or cached[0] is not known:
            cached = (known, {n: s.project for n, s in known.items() if s.project})
            self._projects = cached
        return cached[1]

    def update_notes(self, note_ids: list[str]) -> None:
        """Re-index these notes now (after a write); a busy index is left to the next read.
        Raises IndexUnavailable when the index cannot be written (or built); nothing stays
        locked, and the next read or write indexes what was missed."""
        with self._lock:
            files: list[NoteFile] = []
            gone: list[str] = []
            for note_id in note_ids:
                path = self.store.path_for(note_id)
                try:
                    stat = path.stat()
                except OSError:
                    stat = None
                if stat is not None and path.is_file():
                    files.append(NoteFile(note_id, path, stat.st_mtime_ns, stat.st_size))
                else:
                    gone.append(note_id)
            with contextlib.suppress(*self.BUSY):
                if not self._built_on_open():
                    self._write(files, gone, {}, None)

    def index_written(self, written: list[WrittenNote]) -> None:
        """Re-index notes a write has just made, from the parsed text it hands over (their
        files are not read again, and the observer, which the writer told already, is not
        told of them); otherwise as :meth:`update_notes`."""
        with self._lock, contextlib.suppress(*self.BUSY):
            if not self._built_on_open():
                self._write([w.file for w in written], [], {}, None,
                            given={w.file.note_id: w.loaded for w in written})

    def _built_on_open(self) -> bool:
        """Open the index; whether that built it (missing, outdated or damaged): it was then
        built from the notes on disk as they are now, those just written among them, which
        need not be indexed a second time (`notes init` in a new store)."""
        built = self._builds
        self.open()
        return self._builds != built

    def _write(self, files: list[NoteFile], removed: list[str],
               known: Mapping[str, StoredNote], progress: Progress | None, procs: int = 1,
               building: bool = False, given: Mapping[str, LoadedNote] | None = None,
               folder: Path | None = None) -> list[str]:
        """Index ``files`` (their parsed text taken from ``given`` where it is there, else
        read) and drop ``removed``, committing every BATCH notes; the observer is told of
        the notes read, after each commit. Returns the notes (re)indexed."""
        ix = self.open()
        done: list[str] = []
        self.counter.expect(sum(entry.size for entry in files))
        try:
            with self._writer(ix, folder or self.dir, building, procs) as writer:
                for note_id in removed:
                    writer.delete(note_id)
                for start, batch in _batches(files, self.BATCH):
                    read: list[LoadedNote] = []
                    for number, entry in enumerate(batch, start=start + 1):
                        handed = (given or {}).get(entry.note_id)
                        note = self._index_one(writer, entry, known.get(entry.note_id), handed)
                        if note is not None:
                            done.append(note.note_id)
                            if handed is None:
                                read.append(note)
                        self._heartbeat()
                        if progress:
                            progress(number, len(files))
                    writer.commit()
                    self.counter.flush()
                    if self.observer is not None and read:
                        self.observer(read)
        except self.DISK_ERRORS as exc:
            raise write_failed(self.dir, exc) from exc
        return done

    def _index_one(self, writer: NoteWriter, entry: NoteFile, old: StoredNote | None,
                   loaded: LoadedNote | None) -> LoadedNote | None:
        if loaded is None:
            try:
                loaded = self.store.load_path(entry.note_id, entry.path)
            except OSError:
                writer.delete(entry.note_id)
                return None
        if old and old.digest == loaded.digest and old.mtime_ns == entry.mtime_ns:
            return None
        writer.put(entry.note_id, list(note_documents(loaded, entry.mtime_ns, entry.size,
                                                      self.counter)))
        return loaded

    # -- rebuilding ----------------------------------------------------------------------
    def rebuild(self, reason: str = REQUESTED,
                progress: Progress | None = None) -> RefreshReport:
        """Build a complete new index beside the old one, then swap it in."""
        with self._lock:
            return self._rebuild(reason, progress)

    def _rebuild(self, reason: str, progress: Progress | None) -> RefreshReport:
        failures: tuple[type[BaseException], ...] = (*self.DISK_ERRORS, IndexUnavailable)
        self.close()
        if reason != REQUESTED:
            self.notify(f"notes: {reason}; building the index in {self.dir}")
        try:
            with HolderLock(self.lock_path, self.notify) as lock:
                remove_leftovers(self.dir.parent, self.dir.name)
                if reason != REQUESTED:
                    unusable, probed = self._check()
                    if not unusable:
                        self._ix = probed  # another process rebuilt it
                        return RefreshReport(rebuilt=False, reason="rebuilt by another process")
                indexed = self._build_and_swap(progress, lock)
            self._ix = self._open_files(self.dir)
            self._builds += 1
        except failures as exc:
            self.close()
            raise build_failed(self.dir, exc) from exc
        return RefreshReport(indexed=indexed, rebuilt=True, reason=reason)

    def _build_and_swap(self, progress: Progress | None, lock: HolderLock) -> list[str]:
        """Build the new index in ``<FOLDER>.new-<pid>`` and swap it in; on any failure (or
        an interrupt) the new folder is deleted and the old index stays as it was."""
        fresh = self.dir.with_name(f"{self.dir.name}.new-{os.getpid()}")
        remove_tree(fresh)
        self._heartbeat = lock.beat
        try:
            indexed = self._fill(fresh, self.store.files(), progress)
            (fresh / "version.json").write_text(json.dumps(self.version()))
            self.close()
            swap_in(fresh, self.dir)
        except BaseException as exc:
            self.close()
            self._build_failed(exc)
            remove_tree(fresh)
            raise
        finally:
            self._heartbeat = no_beat
        return indexed

    def _fill(self, fresh: Path, files: list[NoteFile], progress: Progress | None) -> list[str]:
        """Write every note into a new index in ``fresh``: with several processes where the
        backend allows it, again in this process if that failed."""
        procs = self.last_build_procs = self._build_procs(len(files))
        if procs > 1:
            try:
                return self._fill_with(fresh, files, progress, procs)
            except ParallelBuildFailed as exc:
                self.close()
                self.notify(f"notes: {exc}; building the index again in this process")
                remove_tree(fresh)
        return self._fill_with(fresh, files, progress, 1)

    def _fill_with(self, fresh: Path, files: list[NoteFile], progress: Progress | None,
                   procs: int) -> list[str]:
        self._ix = self._create_files(fresh)
        indexed = self._write(files, [], {}, progress, procs, building=True, folder=fresh)
        self._check_build(self._opened(), procs)
        return indexed


def _batches(files: list[NoteFile], size: int | None) -> Iterator[tuple[int, list[NoteFile]]]:
    """(offset, files) in batches of ``size`` (None: one), at least one (maybe empty)."""
    step = size or max(1, len(files))
    for start in range(0, max(1, len(files)), step):
        yield start, files[start:start + step]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
