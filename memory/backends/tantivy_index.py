"""The tantivy index of a store: the same life cycle as :class:`memory.index.NoteIndex`.

Lives in ``<state dir>/index-tantivy``: one tantivy index per document kind (``note/``,
``section/``, ``paragraph/``, see :mod:`.tantivy_schema`) and ``version.json``. Incremental:
the note documents store each file's mtime, size and content hash; :meth:`refresh` stats the
files (a fast walk, :mod:`.scan`) and re-indexes only the notes whose hash changed, replacing
all their documents (tantivy makes that cheap). A version mismatch, a missing index or one that
fails to open or read is rebuilt with one message, in a new folder that is then swapped in,
under ``index-tantivy.lock`` (a :class:`.locks.HolderLock`: never held for good by a dead or
stuck process; the folders of killed builds are removed at the next open or rebuild).

Writers: one at a time per process (a lock), and across processes a lock file
(``write.lock``) waited on for up to 30 s; after a write, a busy index is left for the next
read to refresh, as in Whoosh. The three kinds are committed paragraph, section, then note:
a crash in between leaves the note documents describing the old file, so the next refresh
re-indexes that note and the kinds agree again. A write that fails (tantivy reports a full or
read-only disk as ValueError) is rolled back, its writers dropped (which releases tantivy's
own lock), and raised as IndexUnavailable; the next call after the disk is fixed works.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from typing import Any

from memory.backends import tantivy_files as tf
from memory.backends import tantivy_schema as ts
from memory.backends.failures import build_failed, busy, write_failed
from memory.backends.locks import HolderLock, remove_leftovers, swap_in
from memory.backends.scan import changed_files
from memory.backends.tantivy_files import IndexBusy, IndexDamaged, LiveFiles
from memory.backends.tantivy_search import TantivySearcher
from memory.documents import note_documents
from memory.errors import IndexUnavailable
from memory.index import Notify, Observer, Progress, RefreshReport
from memory.state.store import LoadedNote, NoteFile, Store
from memory.state.tokens import TokenCounter

BATCH_NOTES = 256


def _quiet(_: str) -> None:
    return None


def _nothing() -> None:
    return None


class TantivyIndex:
    """Owns the tantivy indexes of one store; the only writer of them."""

    def __init__(self, store: Store, counter: TokenCounter, notify: Notify = _quiet,
                 observer: Observer | None = None) -> None:
        self.store, self.counter, self.notify, self.observer = store, counter, notify, observer
        self.dir = store.config.state_dir / "index-tantivy"
        self._ix: dict[str, Any] | None = None
        self._lock = threading.RLock()
        self._known: dict[str, dict[str, Any]] | None = None
        self._files: LiveFiles | None = None
        self._fresh = self.dir.with_name(f"index-tantivy.new-{os.getpid()}")
        self.lock_path = self.dir.with_name("index-tantivy.lock")
        self._cleaned = False  # leftovers of killed builds removed (at the first open)
        self._heartbeat: Callable[[], None] = _nothing  # the build lock's, during a rebuild

    # -- opening ---------------------------------------------------------------------
    def open(self) -> dict[str, Any]:
        """The open indexes, built first if missing, outdated or unreadable."""
        with self._lock:
            if self._ix is None and not self._cleaned:
                self._cleaned = True
                remove_leftovers(self.dir.parent, self.dir.name)
            if self._ix is None:
                reason = self._unusable_reason()
                if reason:
                    self._rebuild(reason, None)
                else:
                    self._ix = tf.open_all(self.dir)
            assert self._ix is not None
            return self._ix

    def _unusable_reason(self) -> str:
        if not all((self.dir / kind / "meta.json").is_file() for kind in ts.KINDS):
            return "no index yet"
        if tf.read_json(self.dir / "version.json") != ts.version():
            return "the index was built by another version"
        try:
            for index in tf.open_all(self.dir).values():
                tf.probe(index)
        except BaseException as exc:  # any failure to read it means: rebuild it
            if not _looks_like_damage(exc):
                raise
            return f"the index is damaged ({type(exc).__name__})"
        return ""

    def close(self) -> None:
        with self._lock:
            self._ix = None
            self._known = None
            self._files = None
            gc.collect()  # drop tantivy's readers and file maps now

    # -- reading with recovery -------------------------------------------------------
    @contextlib.contextmanager
    def searcher(self) -> Iterator[TantivySearcher]:
        try:
            view = self._searcher_after(self._current())
        except BaseException as exc:
            if not _looks_like_damage(exc):
                raise
            view = self._searcher_after(self._recover(exc))
        yield view

    @staticmethod
    def _searcher_after(indexes: dict[str, Any]) -> TantivySearcher:
        return TantivySearcher({kind: ix.searcher() for kind, ix in indexes.items()})

    def _current(self) -> dict[str, Any]:
        """The open indexes, reloaded when another process committed since we looked.

        tantivy maps segment files into memory for as long as the index is open; a file
        truncated or overwritten under it would crash the process on the next read. So the
        files of the live segments are checked (a ``stat`` each) before every search: any
        change without a new commit is damage, and the index is rebuilt without reading it.
        """
        indexes = self.open()
        with self._lock:
            metas = tf.meta_stamps(self.dir)
            if self._files is None or metas != self._files.metas:
                for index in indexes.values():
                    index.reload()
                self._files = LiveFiles.of(self.dir, metas)
                self._known = None
            elif not self._files.intact():
                raise IndexDamaged("index files changed without a commit")
        return indexes

    def _recover(self, exc: BaseException) -> dict[str, Any]:
        self.close()
        self.rebuild(reason=f"the index could not be read ({type(exc).__name__})")
        return self.open()

    def run_search(self, fn: Callable[[Any], Any]) -> Any:
        """Run ``fn(searcher)``; if the index turns out damaged, rebuild and run it again."""
        try:
            with self.searcher() as searcher:
                return fn(searcher)
        except BaseException as exc:
            if isinstance(exc, IndexUnavailable) or not _looks_like_damage(exc):
                raise
            return fn(self._searcher_after(self._recover(exc)))

    # -- keeping fresh ---------------------------------------------------------------
    def refresh(self, progress: Progress | None = None) -> RefreshReport:
        """Re-index the notes whose content changed since they were indexed. Raises
        IndexUnavailable when the index cannot be built or written, or stays locked by
        another writer past WRITER_TIMEOUT."""
        with self._lock:
            try:
                return self._refresh(progress)
            except IndexBusy as exc:
                raise busy(self.dir, tf.WRITER_TIMEOUT) from exc

    def _refresh(self, progress: Progress | None) -> RefreshReport:
        known = self._known_files()
        changed, removed, unchanged = changed_files(self.store.root, known,
                                                   self.store.config.state_dir)
        report = RefreshReport(unchanged=unchanged, removed=removed)
        if changed or report.removed:
            report.indexed = self._write(changed, report.removed, known, progress)
            report.unchanged += len(changed) - len(report.indexed)
        return report

    def tidy(self) -> int:
        """Nothing is left to merge: tantivy's writer merges segments itself, in native
        threads that each write waits for (tantivy_files.open_writers). Returns 0."""
        return 0

    def update_notes(self, note_ids: list[str]) -> None:
        """Re-index these notes now (after a write); a busy index is left to the next read.
        Raises IndexUnavailable when the index cannot be written (or built)."""
        with self._lock:
            files, gone = [], []
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
            with contextlib.suppress(IndexBusy):
                self._write(files, gone, {}, None)

    def _known_files(self) -> dict[str, dict[str, Any]]:
        """What the index holds of each note (mtime, size, hash), cached until it changes."""
        try:
            self._current()
            if self._known is None:
                with self.searcher() as searcher:
                    self._known = {str(d["note_id"]): d for d in searcher.documents("note")}
        except BaseException as exc:
            if not _looks_like_damage(exc):
                raise
            self._recover(exc)
            with self.searcher() as searcher:
                self._known = {str(d["note_id"]): d for d in searcher.documents("note")}
        return self._known

    def _write(self, files: list[NoteFile], removed: list[str],
               known: dict[str, dict[str, Any]], progress: Progress | None,
               building: bool = False) -> list[str]:
        """Index ``files`` and drop ``removed``, committing every BATCH_NOTES notes (so a
        rebuild of thousands of notes never holds them all in memory); the observer is told
        of each batch after its commit."""
        indexes = self.open()
        folder = self._fresh if building else self.dir
        try:
            return self._write_into(folder, indexes, files, removed, known, progress, building)
        except (OSError, ValueError) as exc:  # tantivy's I/O errors are ValueErrors
            self._known = None  # (the segment files are checked again before each search)
            raise write_failed(folder if building else self.dir, exc) from exc

    def _write_into(self, folder: Any, indexes: dict[str, Any], files: list[NoteFile],
                    removed: list[str], known: dict[str, dict[str, Any]],
                    progress: Progress | None, building: bool) -> list[str]:
        done: list[str] = []
        with tf.write_lock(folder), tf.open_writers(indexes, building) as writers:
            for note_id in removed:
                tf.delete(writers, note_id)
            for start in range(0, max(1, len(files)), BATCH_NOTES):
                loaded: list[LoadedNote] = []
                for number, entry in enumerate(files[start:start + BATCH_NOTES], start + 1):
                    note = self._index_one(writers, entry, known.get(entry.note_id), building)
                    if note is not None:
                        loaded.append(note)
                    self._heartbeat()
                    if progress:
                        progress(number, len(files))
                tf.commit(writers)
                self.counter.flush()
                if self.observer is not None and loaded:
                    self.observer(loaded)
                done += [note.note_id for note in loaded]
        self._known, self._files = None, None
        return done

    def _index_one(self, writers: dict[str, Any], entry: NoteFile,
                   old: dict[str, Any] | None, building: bool) -> LoadedNote | None:
        try:
            loaded = self.store.load_path(entry.note_id, entry.path)
        except OSError:
            tf.delete(writers, entry.note_id)
            return None
        if old and old.get("digest") == loaded.digest and old.get("mtime_ns") == entry.mtime_ns:
            return None
        if not building:
            tf.delete(writers, entry.note_id)
        for document in note_documents(loaded, entry.mtime_ns, entry.size, self.counter):
            writers[document["kind"]].add_document(ts.to_document(document))
        return loaded

    # -- rebuilding ------------------------------------------------------------------
    def rebuild(self, reason: str = "rebuild requested",
                progress: Progress | None = None) -> RefreshReport:
        """Build complete new indexes beside the old ones, then swap them in."""
        with self._lock:
            return self._rebuild(reason, progress)

    def _rebuild(self, reason: str, progress: Progress | None) -> RefreshReport:
        self.close()
        if reason != "rebuild requested":
            self.notify(f"notes: {reason}; building the index in {self.dir}")
        try:
            with HolderLock(self.lock_path, self.notify) as lock:
                remove_leftovers(self.dir.parent, self.dir.name)
                if reason != "rebuild requested" and not self._unusable_reason():
                    self._ix = tf.open_all(self.dir)  # another process rebuilt it
                    return RefreshReport(rebuilt=False, reason="rebuilt by another process")
                indexed = self._build_and_swap(progress, lock)
            self._ix = tf.open_all(self.dir)
        except (OSError, ValueError, IndexUnavailable) as exc:  # tantivy: I/O as ValueError
            self.close()
            raise build_failed(self.dir, exc) from exc
        return RefreshReport(indexed=indexed, rebuilt=True, reason=reason)

    def _build_and_swap(self, progress: Progress | None, lock: HolderLock) -> list[str]:
        """Build the new indexes in ``index-tantivy.new-<pid>`` and swap them in; on any
        failure (or an interrupt) the new folder is deleted and the old index stays."""
        fresh = self._fresh
        shutil.rmtree(fresh, ignore_errors=True)
        self._heartbeat = lock.beat
        try:
            self._ix = tf.create_all(fresh)
            indexed = self._write(self.store.files(), [], {}, progress, building=True)
            (fresh / "version.json").write_text(json.dumps(ts.version()))
            self.close()
            swap_in(fresh, self.dir)
        except BaseException:
            self.close()
            shutil.rmtree(fresh, ignore_errors=True)
            raise
        finally:
            self._heartbeat = _nothing
        return indexed


def _looks_like_damage(exc: BaseException) -> bool:
    """tantivy reports unreadable files as ValueError (or a Rust panic, a BaseException)."""
    return isinstance(exc, OSError | ValueError | KeyError | RuntimeError | IndexDamaged) or \
        type(exc).__name__ == "PanicException"
