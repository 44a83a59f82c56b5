"""History integrity: keep the ledger fed, find what changed, restore or accept it.

:class:`HistoryGuard` reads the notes itself (it does not go through the index): `notes
check`, ``--restore`` and ``--accept`` look at the files as they are. What counts as a change is
decided in :mod:`memory.state.history_records`.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memory.errors import NoteLostContent, NotesError
from memory.model.note import Note
from memory.state.check import FileProblem
from memory.state.history_records import (
    Drift,
    drifts,
    first_sight,
    observation,
    recorded_history,
    restored,
    shape_losses,
    write_losses,
)
from memory.state.ledger import Change, Ledger, NoteRecord
from memory.state.safe_files import write_atomic
from memory.state.store import LoadedNote, Store

Notify = Callable[[str], None]
CODES = {"changed": "history-changed", "removed": "history-removed",
         "moved": "history-moved", "inserted": "history-inserted",
         "note-removed": "history-note-removed"}
WHAT = {"changed": "was changed", "removed": "was removed", "moved": "was moved",
        "inserted": "was inserted", "note-removed": "is gone with its note's file"}


@dataclass(frozen=True)
class Repair:
    note: str
    entry: str
    kind: str
    action: str  # "restored", "recreated", "accepted", "taken out (saved to …)"


class HistoryGuard:
    """Keeps the ledger fed and compares it with the notes."""

    def __init__(self, store: Store, ledger: Ledger, notify: Notify) -> None:
        self.store, self.ledger, self.notify = store, ledger, notify
        self._warned = False

    # -- recording ---------------------------------------------------------------------
    def observe(self, loaded: list[LoadedNote]) -> None:
        """Record what freshly read notes add; a ledger problem never stops the caller."""
        notes = [(n.note_id, n.note) for n in loaded if n.indexable]
        if not notes:
            return
        try:
            records = self.ledger.load(nid for nid, _ in notes)
            self.ledger.save(observation(records[nid], note) for nid, note in notes)
        except sqlite3.Error as exc:
            self._ledger_problem(exc)

    def _ledger_problem(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            self.notify(f"notes: cannot use the history ledger {self.ledger.path} ({exc}); "
                        "history checks and write protection may miss changes")

    def refuse_losses(self, loaded: LoadedNote) -> None:
        """Raise NoteLostContent when the note on disk lost what the store last knew of it
        (an editor mid-save, or a cut by hand): a tool must not write over it."""
        if not loaded.note.text.strip():
            lost = ["everything (the file is empty)"]
        else:
            try:
                record = self.ledger.load([loaded.note_id])[loaded.note_id]
            except sqlite3.Error as exc:
                self._ledger_problem(exc)
                return
            lost = write_losses(record, loaded.note)
        if lost:
            raise NoteLostContent(
                f"{loaded.path.name}: the note lost {', '.join(lost[:3])} since the store "
                "last saw it (an editor may be saving it); nothing was written. Retry once "
                "it is saved; if the change was on purpose, run `notes check --accept "
                f"--note {loaded.note_id}`, or `notes check --restore --note "
                f"{loaded.note_id}` to put the history back")

    # -- comparing ---------------------------------------------------------------------
    def find(self, note_id: str | None = None) -> list[tuple[Drift | None, str, str]]:
        """(drift, note, lost-shape text) for every note whose file departs from its
        record; a note seen for the first time is recorded on the way."""
        out: list[tuple[Drift | None, str, str]] = []
        for nid, record, note in self._compared(note_id):
            if note is not None:
                out += [(None, nid, text) for text in shape_losses(record.shape, note)
                        if note.text.strip()]
            out += [(d, nid, "") for d in drifts(record, note)]
        return out

    def _compared(self, note_id: str | None) -> list[tuple[str, NoteRecord, Note | None]]:
        ids = [note_id] if note_id else sorted(set(self.ledger.notes())
                                               | set(self.store.note_ids()))
        current = {nid: self._current(nid) for nid in ids}
        seen = {nid: note for nid, note in current.items() if note is not None}
        try:
            self.ledger.save(observation(rec, seen[nid]) for nid, rec in
                             self.ledger.load(seen).items())
        except sqlite3.Error as exc:  # a read-only ledger still compares what it holds
            self._ledger_problem(exc)
        records = self.ledger.load(ids)
        return [(nid, records[nid], current[nid]) for nid in ids if records[nid].known]

    def _current(self, note_id: str) -> Note | None:
        try:
            path = self.store.path_for(note_id)
            if not path.is_file():
                return None
            loaded = self.store.load_path(note_id, path)
        except (NotesError, OSError):
            return None
        return loaded.note if loaded.indexable else None

    def problems(self) -> list[FileProblem]:
        try:
            found = self.find()
        except sqlite3.Error as exc:
            return [FileProblem(self.ledger.path.name, 1, "warning", "ledger-unreadable",
                                f"the history ledger cannot be read ({exc}); history "
                                "checks were skipped: move the file aside to start a new one")]
        return [_problem(drift, nid, lost) for drift, nid, lost in found]

    # -- repairing ---------------------------------------------------------------------
    def restore(self, note_id: str | None = None, saved_dir: Path | None = None) -> list[Repair]:
        """Put every drifted history back as recorded, byte for byte; whatever that takes
        out is saved to a file under ``saved_dir`` and named in the repair."""
        repairs: list[Repair] = []
        for nid, record, note in self._compared(note_id):
            found = drifts(record, note)
            if found:
                repairs += self._restore_note(nid, record, found, saved_dir)
        return repairs

    def _restore_note(self, note_id: str, record: NoteRecord, found: list[Drift],
                      saved_dir: Path | None) -> list[Repair]:
        with self.store.locked(note_id) as path:
            if not path.is_file():
                write_atomic(path, _recreated(note_id, record))
                return [Repair(note_id, d.entry, d.kind, "recreated") for d in found]
            loaded, snap = self.store.snapshot(note_id, path)
            text, taken = restored(record, loaded.note)
            where = _save_taken(saved_dir, note_id, taken)
            self.store.replace_if_unchanged(path, text, snap)
        saved = f" (saved to {where})" if where else ""
        return [Repair(note_id, d.entry, d.kind, f"taken out{saved}" if d.kind == "inserted"
                       else f"restored{saved if d.kind == 'changed' else ''}") for d in found]

    def accept(self, note_id: str | None = None) -> list[Repair]:
        """Take the notes as they are now as the record (deliberate corrections)."""
        repairs = []
        for nid, record, note in self._compared(note_id):
            found = drifts(record, note)
            lost = shape_losses(record.shape, note) if note is not None else []
            if not found and not lost:
                continue
            if note is None:
                self.ledger.save([_forget(nid)])
            else:
                self.ledger.save([first_sight(nid, note)])
            repairs += [Repair(nid, d.entry, d.kind, "accepted") for d in found]
            repairs += [Repair(nid, "", "lost: " + text, "accepted") for text in lost]
        return repairs


def _problem(drift: Drift | None, note_id: str, lost: str) -> FileProblem:
    if drift is None:
        return FileProblem(f"{note_id}.md", 1, "error", "note-lost-content",
                           f"the note lost {lost} since the store last saw it whole; "
                           "tools will not write to it until `notes check --accept --note "
                           f"{note_id}` takes it as it is (or you put it back)")
    return FileProblem(f"{note_id}.md", drift.line, "error", CODES[drift.kind],
                       f"history entry {drift.entry} {WHAT[drift.kind]} since it was first "
                       f"recorded ({drift.detail}); `notes check --restore` puts the history "
                       "back as recorded, `notes check --accept` keeps the change")


def _forget(note_id: str) -> Change:
    return Change(note_id, replace_all=True)


def _recreated(note_id: str, record: NoteRecord) -> str:
    """A minimal note holding the recorded history of a note whose file is gone."""
    title = note_id.split("/")[-1]
    return (f"---\ntitle: {title}\n---\n# {title}\n\n## Current state\n- (restored by "
            f"`notes check --restore`: only the history was recorded)\n\n"
            f"{recorded_history(record)}")


def _save_taken(folder: Path | None, note_id: str, taken: list[str]) -> str:
    """Keep what a restore takes out of a note, in a file of its own."""
    if not taken or folder is None:
        return ""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    path = folder / f"{note_id.replace('/', '__')}-{stamp}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, "".join(t if t.endswith("\n") else t + "\n" for t in taken))
    return str(path)
