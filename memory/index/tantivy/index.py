"""The tantivy index of a store (``NOTES_BACKEND=tantivy``, the optional extra).

Lives in ``<state dir>/index-tantivy``: one tantivy index per document kind (``note/``,
``section/``, ``paragraph/``, see :mod:`.schema`) and ``version.json``. The life cycle (open,
refresh, rebuild, swap, recovery) is :mod:`memory.index.lifecycle`'s; what is tantivy's own:

- a note is re-indexed by deleting all its documents and adding them again (tantivy makes
  that cheap), committing every BATCH notes, so a rebuild of thousands of notes never holds
  them all in memory;
- writers: across processes a lock file (``write.lock``) waited on for up to 30 s; the three
  kinds are committed paragraph, section, then note: a crash in between leaves the note
  documents describing the old file, so the next refresh re-indexes that note and the kinds
  agree again;
- tantivy reports a full or read-only disk as ValueError: a failed write is rolled back, its
  writers dropped (which releases tantivy's own lock), and raised as IndexUnavailable;
- tantivy maps segment files into memory while the index is open, so they are checked (a
  ``stat`` each) before every search (:meth:`TantivyIndex._current`).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from memory.index.interface import Notify, Observer, Searcher
from memory.index.lifecycle import IndexLifecycle
from memory.index.stored import StoredNote
from memory.index.tantivy import files as tf
from memory.index.tantivy import schema as ts
from memory.index.tantivy.files import IndexBusy, IndexDamaged, LiveFiles
from memory.index.tantivy.search import TantivySearcher
from memory.index.words import base_forms
from memory.state.store import Store
from memory.state.tokens import TokenCounter

Indexes = dict[str, Any]  # tantivy's index of each kind


def _quiet(_: str) -> None:
    return None


class TantivyIndex(IndexLifecycle[Indexes]):
    """Owns the tantivy indexes of one store; the only writer of them in this process."""

    FOLDER = "index-tantivy"
    WRITER_TIMEOUT = tf.WRITER_TIMEOUT
    BATCH = 256
    DISK_ERRORS = (OSError, ValueError)  # tantivy's I/O errors are ValueErrors
    BUSY = (IndexBusy,)

    def __init__(self, store: Store, counter: TokenCounter, notify: Notify = _quiet,
                 observer: Observer | None = None) -> None:
        super().__init__(store, counter, notify, observer)
        self._known: dict[str, StoredNote] | None = None
        self._files: LiveFiles | None = None

    # -- files ---------------------------------------------------------------------------
    def version(self) -> dict[str, Any]:
        return ts.version()

    def stem_terms(self, text: str) -> frozenset[str]:
        return frozenset(ts.stem_analyzer().analyze(base_forms(text)))

    def _present(self) -> bool:
        return all((self.dir / kind / "meta.json").is_file() for kind in ts.KINDS)

    def _probe(self) -> Indexes:
        indexes = tf.open_all(self.dir)
        for index in indexes.values():
            tf.probe(index)
        return indexes

    def _unreadable(self, exc: BaseException) -> bool:
        """tantivy reports unreadable files as ValueError (or a Rust panic, a
        BaseException)."""
        return isinstance(exc, OSError | ValueError | KeyError | RuntimeError | IndexDamaged) \
            or type(exc).__name__ == "PanicException"

    def _open_files(self, folder: Path) -> Indexes:
        return tf.open_all(folder)

    def _create_files(self, folder: Path) -> Indexes:
        return tf.create_all(folder)

    def close(self) -> None:
        with self._lock:
            self._ix = None
            self._known = None
            self._files = None
            gc.collect()  # drop tantivy's readers and file maps now

    # -- reading -------------------------------------------------------------------------
    def _acquire(self) -> Searcher:
        return TantivySearcher({kind: ix.searcher() for kind, ix in self._current().items()})

    def _current(self) -> Indexes:
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

    def _stored_notes(self) -> Mapping[str, StoredNote]:
        """Cached until the index changes (a commit here or in another process)."""
        indexes = self._current()
        if self._known is None:
            view = TantivySearcher({kind: ix.searcher() for kind, ix in indexes.items()})
            self._known = {note.note_id: note for note in view.stored_notes()}
        return self._known

    # -- writing -------------------------------------------------------------------------
    @contextlib.contextmanager
    def _writer(self, ix: Indexes, folder: Path, building: bool,
                procs: int) -> Iterator[TantivyWriter]:
        try:
            with tf.write_lock(folder), tf.open_writers(ix, building) as writers:
                yield TantivyWriter(writers, building)
        except self.DISK_ERRORS:
            self._known = None  # (the segment files are checked again before each search)
            raise
        self._known, self._files = None, None

    def tidy(self) -> int:
        """Nothing is left to merge: tantivy's writer merges segments itself, in native
        threads that each write waits for (files.open_writers). Returns 0."""
        return 0


class TantivyWriter:
    """A :class:`memory.index.backend.NoteWriter` over one writer per kind."""

    def __init__(self, writers: dict[str, Any], building: bool) -> None:
        self.writers, self.building = writers, building

    def delete(self, note_id: str) -> None:
        tf.delete(self.writers, note_id)

    def put(self, note_id: str, documents: list[dict[str, Any]]) -> None:
        if not self.building:
            tf.delete(self.writers, note_id)
        for document in documents:
            self.writers[document["kind"]].add_document(ts.to_document(document))

    def commit(self) -> None:
        tf.commit(self.writers)
