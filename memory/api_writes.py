"""The writes of :class:`memory.api.Notes`, and the parts they share with its upkeep.

:class:`NotesWrites` is a base of ``Notes`` (``Notes`` → ``NotesUpkeep`` → ``NotesWrites``):
``Notes.__init__`` (memory/api.py) composes the parts named below; no other module makes one.
Every write goes through the one write path (:mod:`memory.state.commit`): under the note's
lock, atomically, recorded in the history ledger and re-indexed at once (:class:`_WriteIndex`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from memory.config import Config
from memory.errors import EmptyInput, NoteExists, NotesError
from memory.index import Notify, SearchIndex, WrittenNote
from memory.model.text import excerpt
from memory.state.store import LoadedNote, NoteFile, Store, validate_note_id
from memory.state.tokens import TokenCounter

if TYPE_CHECKING:  # the writes' modules are imported when first used
    from memory.model.note import Note
    from memory.model.results import WriteResult
    from memory.state.commit import Committer
    from memory.state.integrity import HistoryGuard
    from memory.state.ledger import Ledger


class NotesWrites:
    """The writes of a store: new notes, the state, history entries, whole texts; and the
    history guard they record in. The parts are ``Notes``' (set by its ``__init__``)."""

    config: Config
    store: Store
    counter: TokenCounter
    index: SearchIndex
    _guard: _Guard

    @property
    def history(self) -> HistoryGuard:
        """The history ledger's guard, opened on first use (a read that indexes nothing
        never needs it), and shared with the views of ``Notes.with_front``."""
        return self._guard.get()

    @property
    def ledger(self) -> Ledger:
        return self.history.ledger

    @cached_property
    def commits(self) -> Committer:
        """The one write path of this store (:mod:`memory.state.commit`): every change of a
        note, here and in the services (import, promotion, delete, move), goes through it."""
        from memory.state.commit import Committer

        return Committer(self.store, lambda: self.history, _WriteIndex(self))

    def create_note(self, note: str, title: str, tags: list[str] | None = None,
                    aliases: list[str] | None = None, project: str | None = None
                    ) -> WriteResult:
        """A new note with an empty state and history, of ``project`` (None: of no
        project)."""
        from memory.model.edit import new_note_text

        note_id = validate_note_id(note)
        text = new_note_text(title, tags or [], aliases, project)
        done = self.commits.create(note_id, text)
        if done is None:
            raise NoteExists(f"note {excerpt(note_id)} already exists; use `notes state` "
                             "or `notes log` to change it, or pick another id")
        return _written(note_id, "state", self.counter.count(text), done.path,
                        created=True, warnings=done.warnings)

    def write_state(self, note: str, body: str, allow_empty: bool = False) -> WriteResult:
        """Replace the state section's body whole (its heading is kept). An empty body is
        refused unless ``allow_empty`` (it would erase the state)."""
        if not body.strip() and not allow_empty:
            raise EmptyInput("the new state is empty, so it would erase the state; give the "
                             "state's text (to clear it on purpose: `notes state NOTE "
                             "--allow-empty`)")
        return self.update_state(note, lambda _: body)

    def update_state(self, note: str, new_body: Callable[[Note], str]) -> WriteResult:
        """Replace the state with ``new_body(note)``, computed from the note as it is under
        the lock (a read-modify-write such as a promotion)."""
        from memory.model.edit import state_replaced

        note_id, path, loaded, warnings = self._change(
            note, lambda n: state_replaced(n, new_body(n)))
        state = loaded.note.state
        return _written(note_id, "state", self.counter.count(state.text if state else ""),
                        path, warnings=warnings)

    def append_history(self, note: str, title: str, body: str, date: str | None = None,
                       allow_empty: bool = False) -> WriteResult:
        """Add a dated entry at the end of the history; older entries are not touched. An
        empty body is refused unless ``allow_empty`` (a title-only entry)."""
        if not body.strip() and not allow_empty:
            raise EmptyInput("the entry's text is empty; give what happened (for a title-only "
                             "entry on purpose: `notes log NOTE --title … --allow-empty`)")
        from memory.model.edit import entry_added

        note_id, path, loaded, warnings = self._change(
            note, lambda n: entry_added(n, title, body, date))
        entry = loaded.note.entries[-1]
        return _written(note_id, entry.id, self.counter.count(entry.text), path,
                        warnings=warnings)

    def _change(self, note: str, edit: Callable[[Note], Note | str], merge: bool = True
                ) -> tuple[str, Path, LoadedNote, tuple[str, ...]]:
        """A change of an existing note through the one write path
        (:meth:`Committer.commit`: locked, merged with the ledger unless not ``merge``,
        compare-and-swap, recorded, re-indexed); the note as written, parsed once."""
        done = self.commits.commit(note, edit, merge)
        return done.note_id, done.path, done.loaded, done.warnings

    def rewrite_note(self, note: str, edit: Callable[[Note], str]) -> WriteResult:
        """Replace the note's text with ``edit(note)``, computed from the note as it is under
        the lock, through the one write path (an import merging a changed source in)."""
        note_id, path, loaded, warnings = self._change(note, edit)
        return _written(note_id, "note", self.counter.count(loaded.note.text), path,
                        warnings=warnings)

    def create_note_from_text(self, note: str, text: str) -> WriteResult:
        """Create a note whose whole text is given (`notes init`'s starter, `notes import`);
        refused if the id exists. The caller composes ``text`` in the note format."""
        note_id = validate_note_id(note)
        done = self.commits.create(note_id, text)
        if done is None:
            raise NoteExists(f"note {excerpt(note_id)} already exists; pick another id")
        return _written(note_id, "note", self.counter.count(text), done.path, created=True,
                        warnings=done.warnings)


def _written(note_id: str, section: str, tokens: int, path: Path, created: bool = False,
             warnings: tuple[str, ...] = ()) -> WriteResult:
    """A write's result; memory.model.results loads with the first write, not with every
    command that opens the store (start-up time)."""
    from memory.model.results import WriteResult

    return WriteResult(note_id, section, tokens, path, created=created, warnings=warnings)


class _WriteIndex:
    """The index step of the one write path (:class:`memory.state.commit.Indexer`): a note
    just written is re-indexed from its parse, without reading the file again, unless the
    file is not what was written any more (another size: an editor saved since) or is past
    the size the index reads of a note, when the index reads the file instead. The note is
    written whatever happens here: a failure is a warning that the index will catch up."""

    def __init__(self, notes: NotesWrites) -> None:
        self.index, self.limit = notes.index, notes.config.max_note_bytes

    def written(self, loaded: LoadedNote, stat: os.stat_result | None) -> tuple[str, ...]:
        if stat is None or stat.st_size != loaded.size or stat.st_size > self.limit:
            return self.changed([loaded.note_id])
        return self._quietly(lambda: self.index.index_written([WrittenNote(
            NoteFile(loaded.note_id, loaded.path, stat.st_mtime_ns, stat.st_size), loaded)]))

    def changed(self, note_ids: list[str]) -> tuple[str, ...]:
        return self._quietly(lambda: self.index.update_notes(note_ids))

    def _quietly(self, update: Callable[[], None]) -> tuple[str, ...]:
        try:
            update()
        except Exception as exc:  # the note is safe on disk; the index is derived
            why = str(exc) if isinstance(exc, NotesError) else \
                f"{type(exc).__name__}: {str(exc)[:200]}"
            message = (f"the note is written, but the index could not be updated ({why}); "
                       "searches will catch up once the index can be written")
            self.index.notify(f"notes: {message}")
            return (message,)
        return ()


class _Guard:
    """The history guard and its ledger, made when first asked for."""

    def __init__(self, store: Store, ledger_path: Path, notify: Notify) -> None:
        self._store, self._path, self._notify = store, ledger_path, notify
        self._guard: HistoryGuard | None = None
        self._lock = threading.Lock()

    def get(self) -> HistoryGuard:
        with self._lock:
            if self._guard is None:
                from memory.state.integrity import HistoryGuard
                from memory.state.ledger import Ledger

                self._guard = HistoryGuard(self._store, Ledger(self._path), self._notify)
            return self._guard

    def close(self) -> None:
        with self._lock:
            if self._guard is not None:
                self._guard.ledger.close()
