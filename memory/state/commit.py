"""The one write path of the notes tree: the only module that changes a note's file.

Every change of a note, whoever asks for it (``notes state``/``log``/``new``, an import and
its live sync, a promotion and its undo, ``check --restore``, ``delete`` and ``move``), is one
:class:`Committer` call that takes the same steps:

    lock → snapshot → edit → compare-and-swap → ledger → index

under the note's lock file (:meth:`Store.locked`): the file is read as a snapshot (waiting for
an editor mid-save), the recorded entries a stale save dropped are put back (the history
ledger's three-way merge), the edit gives the new note *parsed* (its text and its sections:
an edit that verifies its result parses it once, and that parse is the one the ledger and the
index get), the file is replaced only if it is still the snapshot (an editor's save meanwhile
makes it read again), and then the ledger records the note and the index re-indexes it from
the parsed note, without reading the file again. The ledger and the index are told after the
lock is let go; an index that cannot be written is a warning, never a failed write.

Creating a note (linked into place, so a file an editor made meanwhile is never replaced),
moving one to the trash and back, and renaming one take the same lock and tell the ledger and
the index alike. The index is above this layer: the caller hands in an :class:`Indexer`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memory.errors import NoteBusy, NoteExists, NoteFormatError, NoteNotFound
from memory.model.text import excerpt
from memory.state.safe_files import (
    FileChanged,
    Snapshot,
    create_new,
    move_file,
    open_for_writing_elsewhere,
    replace_if_unchanged,
    settled,
)
from memory.state.storage_errors import path_error
from memory.state.store import LoadedNote, Store, missing_note_message, validate_note_id

if TYPE_CHECKING:
    from memory.model.note import Note
    from memory.state.integrity import HistoryGuard

Edit = Callable[["Note"], "Note | str"]  # the note under the lock → the note to write
UNSAFE_TO_WRITE = {"binary", "not-utf8", "too-large", "front-matter-unclosed",
                   "unclosed-block", "too-many-lines", "too-many-sections", "too-many-blocks"}
WRITE_ATTEMPTS = 5  # reads of a note that an editor keeps saving while a tool writes it
EDITOR_WAIT_S = 2.0  # how long a write waits for an editor that holds the note open
MID_SAVE_WAIT_S = 3.0  # ... and for a file that looks half saved and is still changing


class Indexer(Protocol):
    """The index step of a write, as the layer above gives it (it never raises)."""

    def written(self, loaded: LoadedNote, stat: os.stat_result | None) -> tuple[str, ...]:
        """Re-index a note just written, from ``loaded`` (its file's ``stat`` taken under the
        lock right after the write); the warnings to show."""

    def changed(self, note_ids: list[str]) -> tuple[str, ...]:
        """Re-read these notes from their files (gone ones dropped); the warnings to show."""


@dataclass(frozen=True)
class Committed:
    """A note as written: parsed once, recorded, indexed."""

    note_id: str
    path: Path
    loaded: LoadedNote
    warnings: tuple[str, ...] = ()


class Committer:
    """The one write path of one store (see the module's docstring)."""

    def __init__(self, store: Store, history: Callable[[], HistoryGuard],
                 index: Indexer) -> None:
        self.store, self._history, self.index = store, history, index

    # -- changing a note ---------------------------------------------------------------
    def commit(self, note: str, edit: Edit, merge: bool = True) -> Committed:
        """Change an existing note: ``edit`` gets the note as it is under the lock (with the
        entries a stale save dropped put back, unless ``merge`` is False) and gives the new
        note, parsed (or only its text, parsed here once)."""
        note_id = self.store.note_id_of(note)
        history = self._history()
        with self.store.locked(note_id) as path:
            for attempt in range(WRITE_ATTEMPTS):
                loaded, snap = self._load_for_write(note_id, path)
                base, put_back = history.merge(loaded) if merge else (loaded.note, [])
                after = edit(base)
                new = base.reparsed(after) if isinstance(after, str) else after
                try:
                    self.replace_if_unchanged(path, new.text, snap)
                    break
                except FileChanged:
                    time.sleep(0.05 * (attempt + 1))
            else:
                raise NoteBusy(f"{path.name} kept changing while the store tried to write it "
                               "(another program is saving it); nothing was written: retry "
                               "in a moment")
            stat = _stat(path)
        done = self._recorded(note_id, path, new.text, new, stat)
        if put_back:
            return Committed(note_id, path, done.loaded, (
                f"put back {len(put_back)} history entr{'y' if len(put_back) == 1 else 'ies'}"
                f" that a save of {path.name} had dropped: {', '.join(put_back[:5])}",
                *done.warnings))
        return done

    def replace_if_unchanged(self, path: Path, text: str, expected: Snapshot) -> None:
        """The compare-and-swap of :meth:`commit` (:func:`safe_files.replace_if_unchanged`)."""
        replace_if_unchanged(path, text, expected)

    def _load_for_write(self, note_id: str, path: Path) -> tuple[LoadedNote, Snapshot]:
        """The note as it is to be written over: when it looks half saved (it lost its
        header or a section, or its last heading is cut) and is still changing, wait for it
        to settle, up to ``MID_SAVE_WAIT_S``; a file that settles so is a person's edit."""
        if not path.is_file():
            raise NoteNotFound(missing_note_message(note_id, self.store.note_ids())
                               + "; or create it with `notes new`")
        history = self._history()
        deadline = time.monotonic() + MID_SAVE_WAIT_S
        while True:
            _wait_until_closed(path)
            loaded, snap = self.store.snapshot(note_id, path)
            signs = history.mid_save(loaded)
            if not signs or settled(path, snap.size):
                break
            if time.monotonic() >= deadline:
                raise NoteBusy(f"{path.name} is being saved by another program (it lost "
                               f"{', '.join(signs[:2])} and is still changing); nothing was "
                               "written: retry in a few seconds")
            time.sleep(0.1)
        history.refuse_empty(loaded)
        blocking = [p for p in loaded.problems if p.code in UNSAFE_TO_WRITE]
        if blocking:
            first = blocking[0]
            raise NoteFormatError(f"{path.name}:{first.line}: {first.message}; fix the file "
                                  "before writing to it through the tools")
        return loaded, snap

    # -- new notes -----------------------------------------------------------------------
    def create(self, note: str, text: str) -> Committed | None:
        """A new note whose whole text is ``text``; None (nothing written) when a file of
        that name is there already."""
        note_id = validate_note_id(note)
        with self.store.locked(note_id) as path:
            if path.exists() or not create_new(path, text):
                return None
            stat = _stat(path)
        return self._recorded(note_id, path, text, None, stat)

    def put_back(self, note: str, source: Path) -> Committed:
        """Move the file ``source`` (a deleted note's copy) into place as ``note``; refused
        when that note exists again."""
        note_id = validate_note_id(note)
        with self.store.locked(note_id) as path:
            if path.exists() or path.is_symlink():
                raise NoteExists(f"note {excerpt(note_id)} exists again; move it away first "
                                 f"(`notes move {note_id} NEW`), then restore")
            _move_file(source, path, "put the note back")
            stat = _stat(path)
        loaded = self.store.load(note_id)
        self._history().observe([loaded], written=True)
        return Committed(note_id, path, loaded, self.index.written(loaded, stat))

    # -- notes leaving ---------------------------------------------------------------------
    def remove(self, note: str, target: Path) -> tuple[str, ...]:
        """Move the note's file to ``target`` (the trash, outside the notes tree); the ledger
        forgets it (sqlite3.Error when it cannot) and the index drops it."""
        note_id = validate_note_id(note)
        with self.store.locked(note_id) as path:
            _move_file(path, target, "move the note to the trash")
        tidy_folders(path.parent, self.store.root)
        self._history().ledger.forget(note_id)
        return self.index.changed([note_id])

    def rename(self, old: str, new: str) -> Path:
        """Rename the note ``old`` to ``new`` (both locked, in a fixed order), the symbolic
        links of the store that pointed to it pointing to it again; the ledger follows
        (sqlite3.Error when it cannot) and the index re-reads both. Returns the new path."""
        store = self.store
        first, second = sorted((old, new))
        with store.locked(first) as one, store.locked(second) as two:
            source, target = (one, two) if first == old else (two, one)
            links = [link for link, points in store.inner_links()
                     if Path(os.path.realpath(points)) == Path(os.path.realpath(source))]
            _move_file(source, target, "rename the note", exclusive=True)
            for link in links:
                _repoint(link, target)
        tidy_folders(source.parent, store.root)
        self._history().ledger.rename(old, new)
        self.index.changed([old, new])
        return target

    # -- after every write -----------------------------------------------------------------
    def _recorded(self, note_id: str, path: Path, text: str, parsed: Note | None,
                  stat: os.stat_result | None) -> Committed:
        """The ledger and the index told of a note just written, from its one parse (the
        edit's, ``parsed``, when it made one)."""
        loaded = self.store.written(note_id, path, text, parsed)
        self._history().observe([loaded], written=True)
        return Committed(note_id, path, loaded, self.index.written(loaded, stat))


def _stat(path: Path) -> os.stat_result | None:
    """The stat of a note just written (None if it cannot be read: the index reads it)."""
    try:
        return path.stat()
    except OSError:
        return None


def _wait_until_closed(path: Path) -> None:
    """An editor that holds the note open for writing is mid-save: wait a little for it,
    then refuse rather than write over a half-written file."""
    deadline = time.monotonic() + EDITOR_WAIT_S
    while open_for_writing_elsewhere(path):
        if time.monotonic() >= deadline:
            raise NoteBusy(f"{path.name} is open for writing by another program (an "
                           "editor saving it?); nothing was written: retry once it is "
                           "saved and closed")
        time.sleep(0.05)


def _move_file(source: Path, target: Path, doing: str, exclusive: bool = False) -> None:
    try:
        if exclusive and (target.exists() or target.is_symlink()):
            raise NoteExists(f"{target} already exists; pick another id")
        move_file(source, target)
    except OSError as exc:
        raise path_error(exc, source, f"cannot {doing}") from exc


def _repoint(link: Path, target: Path) -> None:
    """A symbolic link of the store that pointed to the renamed note points to it again."""
    relative = os.path.relpath(target, link.parent)
    temporary = link.with_name(f".{link.name}.moving")
    try:
        os.symlink(relative, temporary)
        os.replace(temporary, link)
    except OSError:
        if temporary.is_symlink():
            temporary.unlink()


def tidy_folders(folder: Path, root: Path) -> None:
    """Empty folders left behind, up to ``root`` (not it)."""
    here = folder
    while here != root and root in here.parents:
        try:
            here.rmdir()
        except OSError:
            return
        here = here.parent
