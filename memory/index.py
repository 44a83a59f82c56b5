"""The Whoosh index of a store: open it, keep it fresh, rebuild it when it cannot be used.

The index lives in ``<state dir>/index``. It is incremental: each note document stores its
file's mtime, size and content hash, and :meth:`NoteIndex.refresh` re-indexes only the notes
whose hash changed (and drops the ones that are gone). A schema or analyzer version change, a
missing index or a corrupt one triggers a full rebuild with one message, never a traceback.
Rebuilds are made in a fresh folder and swapped in, so a crash mid-build leaves the old index;
the build lock names its holder and is never held for good by a dead or stuck process, and the
folders of killed builds are removed (:mod:`.backends.locks`). A write that fails (a full or
read-only disk) releases every lock and raises :class:`IndexUnavailable`; the index stays as it
was, and the next call after the disk is fixed works at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whoosh import index as whoosh_index
from whoosh.writing import LockError

from memory.analysis import ANALYZER_VERSION
from memory.backends.failures import build_failed, busy, write_failed
from memory.backends.locks import HolderLock, remove_leftovers, swap_in
from memory.backends.scan import changed_files
from memory.backends.whoosh_build import (
    WRITER_TIMEOUT,
    ParallelBuildFailed,
    abandon,
    build_procs,
    commit_quickly,
    drop_frames,
    open_writer,
    tidy,
)
from memory.backends.whoosh_open import looks_like_damage, note_documents_of, probe, retrying
from memory.backends.whoosh_searcher import SharedSearcher
from memory.documents import SCHEMA_VERSION, build_schema, doc_digest, note_documents
from memory.errors import IndexUnavailable
from memory.search import weighting
from memory.state.store import LoadedNote, NoteFile, Store
from memory.state.tokens import TokenCounter

Progress = Callable[[int, int], None]
Observer = Callable[[list[LoadedNote]], None]
Notify = Callable[[str], None]
VERSION = {"schema": SCHEMA_VERSION, "analyzer": ANALYZER_VERSION}


@dataclass
class RefreshReport:
    """What one refresh or rebuild did."""

    indexed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    rebuilt: bool = False
    reason: str = ""


def _quiet(_: str) -> None:
    return None


def _nothing() -> None:
    return None



class NoteIndex:
    """Owns the Whoosh index of one store; the only writer of it."""

    def __init__(self, store: Store, counter: TokenCounter, notify: Notify = _quiet,
                 observer: Observer | None = None) -> None:
        self.store = store
        self.counter = counter
        self.notify = notify
        self.observer = observer  # told of every note (re)indexed, after the commit
        self.dir = store.config.state_dir / "index"
        self.lock_path = self.dir.with_name("index.lock")  # held by a rebuild (backends/locks)
        self._ix: Any = None
        self._cleaned = False  # leftovers of killed builds removed (at the first open)
        self._heartbeat: Callable[[], None] = _nothing  # the build lock's, during a rebuild
        self._lock = threading.RLock()  # one writer at a time inside this process
        self._building = False  # True while a rebuild fills a new, empty index
        self._documents_added = 0  # by the rebuild under way
        self.build_procs: int | None = None  # for rebuilds; None: whoosh_build decides
        self.last_build_procs = 1  # processes the last rebuild was started with
        # what the index holds of each note, by (generation, inode of the index folder)
        self._known: tuple[tuple[int, int], dict[str, dict[str, Any]]] | None = None
        self._searchers = SharedSearcher(self.dir, lambda: retrying(
            lambda: self.open().searcher(weighting=weighting())))

    # -- opening ---------------------------------------------------------------------
    def open(self) -> Any:
        """The open index, built first if it is missing, outdated or unreadable."""
        with self._lock:
            return self._open()

    def _open(self) -> Any:
        if self._ix is not None:
            return self._ix
        if not self._cleaned:
            self._cleaned = True
            remove_leftovers(self.dir.parent, self.dir.name)
        reason = self._unusable_reason()
        if reason:
            self.rebuild(reason=reason)
        else:
            self._ix = retrying(lambda: whoosh_index.open_dir(str(self.dir)))
        return self._ix

    def _unusable_reason(self) -> str:
        if not self.dir.is_dir() or not any(self.dir.glob("*.toc")):
            return "no index yet"
        if self._read_version() != VERSION:
            return "the index was built by another version"
        try:
            retrying(lambda: probe(self.dir))
        except Exception as exc:  # any failure to read it means: rebuild it
            return f"the index is damaged ({type(exc).__name__})"
        return ""

    def _read_version(self) -> dict[str, Any] | None:
        try:
            data = json.loads((self.dir / "version.json").read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def close(self) -> None:
        self._known = None
        self._searchers.invalidate()
        if self._ix is not None:
            self._ix.close()
            self._ix = None

    # -- reading with recovery -----------------------------------------------------------
    @contextlib.contextmanager
    def searcher(self) -> Iterator[Any]:
        """The index's searcher, shared by this process's threads one search at a time and
        reused while the index files are unchanged (:mod:`.backends.whoosh_searcher`); a
        damaged index is rebuilt once and searched again."""
        try:
            searcher = self._searchers.acquire()
        except Exception as exc:
            if isinstance(exc, IndexUnavailable):
                raise
            self._recover(exc)
            searcher = self._searchers.acquire()
        try:
            yield searcher
        finally:
            self._searchers.release()

    def _recover(self, exc: Exception) -> Any:
        self.close()
        self.rebuild(reason=f"the index could not be read ({type(exc).__name__})")
        return self.open()

    def run_search(self, fn: Callable[[Any], Any]) -> Any:
        """Run ``fn(searcher)``; if the index turns out damaged, rebuild and run it again."""
        try:
            with self.searcher() as searcher:
                return fn(searcher)
        except Exception as exc:
            if isinstance(exc, IndexUnavailable) or not looks_like_damage(exc):
                raise
            self._recover(exc)
            with self.searcher() as searcher:
                return fn(searcher)

    # -- keeping fresh -----------------------------------------------------------------
    def refresh(self, progress: Progress | None = None) -> RefreshReport:
        """Re-index the notes whose content changed since they were indexed. Raises
        IndexUnavailable when the index cannot be built or written, or stays locked by
        another writer past WRITER_TIMEOUT; the index is then left as it was."""
        with self._lock:
            try:
                return self._refresh(progress)
            except LockError as exc:
                raise busy(self.dir, WRITER_TIMEOUT) from exc

    def _refresh(self, progress: Progress | None) -> RefreshReport:
        ix = self.open()
        known = self._known_files(ix)
        changed, removed, unchanged = changed_files(self.store.root, known,
                                                       self.store.config.state_dir)
        report = RefreshReport(unchanged=unchanged, removed=removed)
        if changed or report.removed:
            report.indexed = self._write(changed, report.removed, known, progress)
            report.unchanged += len(changed) - len(report.indexed)
        return report

    def tidy(self) -> int:
        """Merge the small segments that quick commits left (see whoosh_build); returns how
        many were merged. A busy index is left for the next tidy."""
        with self._lock:
            try:
                return tidy(self.open())
            except LockError:
                return 0
            except OSError as exc:
                raise write_failed(self.dir, exc) from exc

    def update_notes(self, note_ids: list[str]) -> None:
        """Re-index these notes now (after a write); a busy index is left to the next read.
        Raises IndexUnavailable when the index cannot be written (or built); nothing stays
        locked, and the next read or write indexes what was missed."""
        with self._lock:
            self._update(note_ids)

    def _update(self, note_ids: list[str]) -> None:
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
        with contextlib.suppress(LockError):
            self._write(files, gone, {}, None)

    def _known_files(self, ix: Any) -> dict[str, dict[str, Any]]:
        """What the index holds of each note (its file's mtime, size and hash), read again
        only when the index has a new generation (a commit, here or in another process)."""
        try:
            generation = (ix.latest_generation(), os.stat(self.dir).st_ino)
            if self._known is None or self._known[0] != generation:
                self._known = (generation, retrying(lambda: note_documents_of(ix)))
            return self._known[1]
        except Exception as exc:
            self._known = None
            rebuilt = self._recover(exc)  # a complete new index: read it instead
            return note_documents_of(rebuilt)

    def _write(self, files: list[NoteFile], removed: list[str],
               known: dict[str, dict[str, Any]], progress: Progress | None,
               procs: int = 1) -> list[str]:
        ix = self.open()
        loaded: list[LoadedNote] = []
        try:
            writer = open_writer(ix, procs, str(self.lock_path) if procs > 1 else None)
        except OSError as exc:
            raise write_failed(self.dir, exc) from exc
        try:
            for note_id in removed:
                writer.delete_by_term("note_id", note_id)
            for number, entry in enumerate(files, start=1):
                note = self._index_one(writer, entry, known.get(entry.note_id))
                if note is not None:
                    loaded.append(note)
                self._heartbeat()
                if progress:
                    progress(number, len(files))
            commit_quickly(writer)
        except BaseException as exc:
            abandon(writer)  # its lock released and its files deleted, whatever fails
            self._known = None
            if isinstance(exc, OSError):
                raise write_failed(self.dir, exc) from exc
            raise
        self.counter.flush()
        if self.observer is not None and loaded:
            self.observer(loaded)
        return [note.note_id for note in loaded]

    def _index_one(self, writer: Any, entry: NoteFile,
                   old: dict[str, Any] | None) -> LoadedNote | None:
        try:
            loaded = self.store.load_path(entry.note_id, entry.path)
        except OSError:
            writer.delete_by_term("note_id", entry.note_id)
            return None
        if old and old.get("digest") == loaded.digest and old.get("mtime_ns") == entry.mtime_ns:
            return None
        fresh = {}
        for document in note_documents(loaded, entry.mtime_ns, entry.size, self.counter):
            if document["kind"] != "note":
                document["digest"] = doc_digest(document)
            fresh[document["id"]] = document
        if self._building:  # an empty new index: nothing to compare with
            for document in fresh.values():
                writer.add_document(**document)
            self._documents_added += len(fresh)
            return loaded
        stored = self._stored_digests(writer, entry.note_id)
        for doc_id in stored.keys() - fresh.keys():
            writer.delete_by_term("id", doc_id)
        for doc_id, document in fresh.items():
            if document["kind"] == "note" or stored.get(doc_id) != document["digest"]:
                writer.update_document(**document)  # replaces the one with the same id
        return loaded

    @staticmethod
    def _stored_digests(writer: Any, note_id: str) -> dict[str, str]:
        """The documents the index holds for a note, with their fingerprints. Only the ones
        that changed are replaced, so appending an entry to a long note stays cheap."""
        with writer.searcher() as searcher:
            return {d["id"]: d.get("digest") or "" for d in searcher.documents(note_id=note_id)}

    # -- rebuilding --------------------------------------------------------------------
    def rebuild(self, reason: str = "rebuild requested",
                progress: Progress | None = None) -> RefreshReport:
        """Build a complete new index beside the old one, then swap it in."""
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
                    self._ix = whoosh_index.open_dir(str(self.dir))  # another process did
                    return RefreshReport(rebuilt=False, reason="rebuilt by another process")
                indexed = self._build_and_swap(progress, lock)
            self._ix = whoosh_index.open_dir(str(self.dir))
        except (OSError, IndexUnavailable) as exc:
            self.close()
            raise build_failed(self.dir, exc) from exc
        return RefreshReport(indexed=indexed, rebuilt=True, reason=reason)

    def _build_and_swap(self, progress: Progress | None, lock: HolderLock) -> list[str]:
        """Build the new index in ``index.new-<pid>`` and swap it in; on any failure (or an
        interrupt) the new folder is deleted and the old index stays as it was."""
        fresh = self.dir.with_name(f"index.new-{os.getpid()}")
        shutil.rmtree(fresh, ignore_errors=True)
        self._heartbeat = lock.beat
        try:
            indexed = self._fill(fresh, self.store.files(), progress)
            (fresh / "version.json").write_text(json.dumps(VERSION))
            self.close()
            swap_in(fresh, self.dir)
        except BaseException as exc:
            self.close()
            drop_frames(exc)
            shutil.rmtree(fresh, ignore_errors=True)
            raise
        finally:
            self._heartbeat = _nothing
        return indexed

    def _fill(self, fresh: Path, files: list[NoteFile], progress: Progress | None) -> list[str]:
        """Write every note into a new index in ``fresh``: with worker processes where
        whoosh_build allows it, again in this process if a worker failed."""
        procs = self.last_build_procs = build_procs(len(files), self.build_procs)
        if procs > 1:
            try:
                return self._fill_with(fresh, files, progress, procs)
            except ParallelBuildFailed as exc:
                self.close()
                self.notify(f"notes: {exc}; building the index again in this process")
                shutil.rmtree(fresh, ignore_errors=True)
        return self._fill_with(fresh, files, progress, 1)

    def _fill_with(self, fresh: Path, files: list[NoteFile], progress: Progress | None,
                   procs: int) -> list[str]:
        fresh.mkdir(parents=True)
        self._ix = whoosh_index.create_in(str(fresh), build_schema())
        self._building, self._documents_added = True, 0
        try:
            indexed = self._write(files, [], {}, progress, procs)
        finally:
            self._building = False
        held = self._ix.doc_count_all()
        if procs > 1 and held != self._documents_added:
            raise ParallelBuildFailed(f"the parallel build holds {held} of "
                                      f"{self._documents_added} documents")
        return indexed
