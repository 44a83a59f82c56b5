"""History integrity: keep the ledger fed, find what changed, merge, restore or accept it.

:class:`HistoryGuard` reads the notes itself (it does not go through the index): `notes
check`, ``--restore`` and ``--accept`` look at the files as they are. What counts as a change is
decided in :mod:`memory.state.history_records`; putting entries back, in
:mod:`memory.state.history_merge`.

Nothing here refuses a write for what a person did: a hand edit of an old entry is kept (and
reported as a warning, its recorded text restorable), entries an editor's stale save dropped
are put back by the next write (:meth:`HistoryGuard.merge`), and only a file that looks
mid-save and is still changing makes a write wait (:meth:`HistoryGuard.mid_save`).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memory.errors import NoteLostContent, NotesError
from memory.model.note import Note
from memory.state.check import FileProblem
from memory.state.history_merge import (
    merge_problem,
    merged,
    recorded_history,
    restore_problem,
    restored,
)
from memory.state.history_records import (
    Drift,
    drifts,
    first_sight,
    mid_save_signs,
    new_last_entry,
    observation,
    shape_losses,
)
from memory.state.ledger import Change, Ledger, NoteRecord
from memory.state.safe_files import settled, write_atomic
from memory.state.store import LoadedNote, Store

if TYPE_CHECKING:
    from memory.state.commit import Committer

Notify = Callable[[str], None]
CODES = {"changed": "history-changed", "removed": "history-removed",
         "moved": "history-moved", "inserted": "history-inserted",
         "note-removed": "history-note-removed"}
WHAT = {"changed": "was changed", "removed": "was removed", "moved": "was moved",
        "inserted": "was inserted", "note-removed": "is gone with its note's file"}
HAND_EDITS = {"changed", "moved", "inserted"}  # a person's right: warnings, never a block


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
        self._deferred: dict[str, Path] = {}  # notes whose last entry waits for its file to settle
        self._deferred_lock = threading.Lock()

    # -- recording ---------------------------------------------------------------------
    def observe(self, loaded: list[LoadedNote], written: bool = False) -> None:
        """Record what freshly read notes add; a ledger problem never stops the caller.
        A note's last entry is recorded from a file only once the file looks settled
        (:func:`settled`): only the last entry of a file being saved can be half written.
        ``written``: the texts are what a tool has just written, whole."""
        notes = [n for n in loaded if n.indexable]
        if not notes:
            return
        try:
            records = self.ledger.load(n.note_id for n in notes)
            self.ledger.save(self._observed(records[n.note_id], n, written) for n in notes)
        except sqlite3.Error as exc:
            self._ledger_problem(exc)

    def _observed(self, record: NoteRecord, loaded: LoadedNote, written: bool = False) -> Change:
        """What to record of a note read from its file (or just ``written`` by a tool): its
        last entry only once the file looks settled, when that entry would be new; else
        the note waits in :meth:`record_deferred`'s list."""
        sure = written or not new_last_entry(record, loaded.note) or settled(loaded.path,
                                                                              loaded.size)
        with self._deferred_lock:
            if sure:
                self._deferred.pop(loaded.note_id, None)
            else:
                self._deferred[loaded.note_id] = loaded.path
        return observation(record, loaded.note, sure)

    def record_deferred(self) -> int:
        """Read again the notes whose last entry was left unrecorded because their file was
        being saved, and record it now if the file has settled (a watcher calls this once the
        notes are quiet); how many notes were read."""
        with self._deferred_lock:
            waiting = dict(self._deferred)
        loaded = []
        for note_id, path in waiting.items():
            try:
                loaded.append(self.store.load_path(note_id, path))
            except (NotesError, OSError):
                with self._deferred_lock:
                    self._deferred.pop(note_id, None)
        self.observe(loaded)
        return len(loaded)

    def _ledger_problem(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            self.notify(f"notes: cannot use the history ledger {self.ledger.path} ({exc}); "
                        "history checks and write protection may miss changes")

    def _record(self, note_id: str) -> NoteRecord:
        try:
            return self.ledger.load([note_id])[note_id]
        except sqlite3.Error as exc:
            self._ledger_problem(exc)
            return NoteRecord(note_id)

    def mid_save(self, loaded: LoadedNote) -> list[str]:
        """What about the note looks like a save under way (lost its header or a section,
        empty, a last heading cut), in words; empty when it looks whole. The caller waits
        while the file shows these and keeps changing (:func:`settled`)."""
        if not loaded.note.text.strip():
            return ["everything (the file is empty)"]
        return mid_save_signs(self._record(loaded.note_id), loaded.note)

    def refuse_empty(self, loaded: LoadedNote) -> None:
        """An empty file that stays empty is not written to: no tool write would give it
        back its title and state."""
        if not loaded.note.text.strip():
            raise NoteLostContent(
                f"{loaded.path.name} is empty; nothing was written. Put its text back (`notes "
                f"check --restore --note {loaded.note_id}` restores its history) or delete "
                "the file")

    def merge(self, loaded: LoadedNote) -> tuple[Note, list[str]]:
        """The note with every recorded entry it lost put back (:func:`merged`), and the
        ids put back; the note itself when it lost none."""
        record = self._record(loaded.note_id)
        text, put_back = merged(record, loaded.note)
        if not put_back:
            return loaded.note, []
        after = loaded.note.reparsed(text)
        problem = merge_problem(record, loaded.note, after)
        if problem:
            raise NoteLostContent(
                f"{loaded.path.name}: entries an editor's save dropped cannot be put back "
                f"safely ({problem}); nothing was written. Run `notes check --note "
                f"{loaded.note_id}` to see them and `notes check --restore --note "
                f"{loaded.note_id}` to put the history back")
        return after, put_back

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
        seen = {nid: loaded for nid, loaded in current.items() if loaded is not None}
        try:
            self.ledger.save(self._observed(rec, seen[nid]) for nid, rec in
                             self.ledger.load(seen).items())
        except sqlite3.Error as exc:  # a read-only ledger still compares what it holds
            self._ledger_problem(exc)
        records = self.ledger.load(ids)
        return [(nid, records[nid], seen[nid].note if nid in seen else None)
                for nid in ids if records[nid].known]

    def _current(self, note_id: str) -> LoadedNote | None:
        try:
            path = self.store.path_for(note_id)
            if not path.is_file():
                return None
            loaded = self.store.load_path(note_id, path)
        except (NotesError, OSError):
            return None
        return loaded if loaded.indexable else None

    def problems(self) -> list[FileProblem]:
        try:
            found = self.find()
        except sqlite3.Error as exc:
            return [FileProblem(self.ledger.path.name, 1, "warning", "ledger-unreadable",
                                f"the history ledger cannot be read ({exc}); history "
                                "checks were skipped: move the file aside to start a new one")]
        return [_problem(drift, nid, lost) for drift, nid, lost in found]

    # -- repairing ---------------------------------------------------------------------
    def restore(self, commits: Committer, note_id: str | None = None,
                saved_dir: Path | None = None) -> list[Repair]:
        """Put every drifted history back as recorded, byte for byte, through ``commits``
        (the store's one write path, without its merge: it waits for an editor mid-save,
        records and re-indexes what it writes); whatever that takes out is saved to a file
        under ``saved_dir`` once the note is written, and named in the repair. A restore
        whose result would not read back as recorded is refused, and nothing is written."""
        repairs: list[Repair] = []
        for nid, record, note in self._compared(note_id):
            found = drifts(record, note)
            if found:
                repairs += self._restore_note(nid, record, found, commits, saved_dir)
        return repairs

    def _restore_note(self, note_id: str, record: NoteRecord, found: list[Drift],
                      commits: Committer, saved_dir: Path | None) -> list[Repair]:
        if not self.store.path_for(note_id).is_file() and \
                commits.create(note_id, _recreated(note_id, record)) is not None:
            return [Repair(note_id, d.entry, d.kind, "recreated") for d in found]
        taken: list[str] = []

        def edit(note: Note) -> Note:
            text, out = restored(self._record(note_id), note)
            after = note.reparsed(text)
            problem = restore_problem(self._record(note_id), after)
            if problem:
                raise NoteLostContent(
                    f"{note_id}.md: its history cannot be restored as recorded ({problem}); "
                    f"nothing was written. Fix the file by hand, or run `notes check "
                    f"--accept --note {note_id}` to take it as it is")
            taken[:] = out
            return after

        commits.commit(note_id, edit, merge=False)
        where = _save_taken(saved_dir, note_id, taken)
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
                           f"the note lost {lost} since the store last saw it whole; put it "
                           f"back by hand, or `notes check --accept --note {note_id}` takes "
                           "the note as it is")
    if drift.kind in HAND_EDITS:
        return FileProblem(f"{note_id}.md", drift.line, "warning", CODES[drift.kind],
                           f"history entry {drift.entry} {WHAT[drift.kind]} by hand since it "
                           f"was first recorded ({drift.detail}); kept as you wrote it: "
                           f"`notes check --restore --note {note_id}` puts back the recorded "
                           f"text, `notes check --accept --note {note_id}` records yours")
    return FileProblem(f"{note_id}.md", drift.line, "error", CODES[drift.kind],
                       f"history entry {drift.entry} {WHAT[drift.kind]} since it was first "
                       f"recorded ({drift.detail}); the next tool write puts it back, `notes "
                       f"check --restore --note {note_id}` now; `notes check --accept --note "
                       f"{note_id}` keeps it out")


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
