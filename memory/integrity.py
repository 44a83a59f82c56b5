"""History integrity: find, restore or accept past entries changed since the ledger saw them."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from dataclasses import dataclass

from .check import FileProblem
from .errors import NotesError
from .index import NoteIndex, Notify
from .ledger import Drift, Ledger, drifts, recreated_text, restored_text
from .note import Note, parse_note
from .store import LoadedNote, Store

CODES = {"changed": "history-changed", "removed": "history-removed",
         "note-removed": "history-note-removed"}
WHAT = {"changed": "was changed", "removed": "was removed",
        "note-removed": "is gone with its note's file"}


@dataclass(frozen=True)
class Repair:
    note: str
    entry: str
    kind: str
    action: str  # "restored", "recreated", "accepted"


class HistoryGuard:
    """Keeps the ledger fed and compares it with the notes."""

    def __init__(self, store: Store, ledger: Ledger, index: NoteIndex, notify: Notify) -> None:
        self.store, self.ledger, self.index, self.notify = store, ledger, index, notify
        self._warned = False

    def observe(self, loaded: list[LoadedNote]) -> None:
        """Record new entries of freshly read notes; a ledger problem never stops indexing."""
        try:
            self.ledger.observe((n.note_id, n.note) for n in loaded if n.indexable)
        except sqlite3.Error as exc:
            if not self._warned:
                self._warned = True
                self.notify(f"notes: cannot update the history ledger {self.ledger.path} "
                            f"({exc}); history checks may miss changes")

    def find(self, note_id: str | None = None) -> list[Drift]:
        self.index.refresh()  # records entries that appeared since the last look
        records = self.ledger.recorded(note_id)
        current = {nid: self._current(nid) for nid in {r.note for r in records}}
        return drifts(records, current)

    def _current(self, note_id: str) -> Note | None:
        try:
            path = self.store.path_for(note_id)
        except NotesError:
            return None
        if not path.is_file():
            return None
        loaded = self.store.load_path(note_id, path)
        return loaded.note if loaded.indexable else None

    def problems(self) -> list[FileProblem]:
        return [FileProblem(f"{d.note}.md", d.line, "error", CODES[d.kind],
                            f"history entry {d.entry} {WHAT[d.kind]} since it was first "
                            f"recorded ({d.detail}); `notes check --restore` puts it back, "
                            "`notes check --accept` keeps the change")
                for d in self.find()]

    def restore(self, note_id: str | None = None) -> list[Repair]:
        by_note: dict[str, list[Drift]] = defaultdict(list)
        for drift in self.find(note_id):
            by_note[drift.note].append(drift)
        repairs: list[Repair] = []
        for nid, found in sorted(by_note.items()):
            repairs.extend(self._restore_note(nid, found))
        self.index.update_notes(sorted(by_note))
        return repairs

    def _restore_note(self, note_id: str, found: list[Drift]) -> list[Repair]:
        with self.store.locked(note_id) as path:
            if not path.is_file():
                records = [d.recorded for d in found]
                self.store.write_atomic(path, recreated_text(note_id, records))
                return [Repair(note_id, d.entry, d.kind, "recreated") for d in found]
            text = path.read_text(encoding="utf-8")
            for drift in found:
                text = restored_text(parse_note(text), drift)
            self.store.write_atomic(path, text)
        return [Repair(note_id, d.entry, d.kind, "restored") for d in found]

    def accept(self, note_id: str | None = None) -> list[Repair]:
        repairs = []
        for drift in self.find(note_id):
            note = self._current(drift.note)
            entry = note.section(drift.entry) if note is not None else None
            self.ledger.accept(drift, entry.text if entry is not None else None)
            repairs.append(Repair(drift.note, drift.entry, drift.kind, "accepted"))
        return repairs
