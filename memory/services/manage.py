"""`notes delete` and `notes move`: managing notes without losing what the store knows of
them (docs/cli.md, "Managing notes").

A deleted note goes to a dated trash in the state folder (``<state>/trash/<date-time>/<note
id>.md``), out of the index and out of what the history ledger expects, so `notes check`
stays clean; `notes delete --restore NOTE` puts its last deleted copy back. A moved note is
renamed on disk and keeps what is recorded of it under its new id: its history in the
ledger, its rows in the usage log, the provenance of its import, and the symbolic links of
the store that pointed to it. `notes move` also changes a note's project (its front
matter's ``project:`` key).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from memory.errors import InvalidArgument, NoteExists, NoteNotFound, StorageError
from memory.model.results import Managed
from memory.model.text import excerpt, split_lines
from memory.state.commit import tidy_folders
from memory.state.imports import ImportRecord
from memory.state.store import missing_note_message, validate_note_id

if TYPE_CHECKING:
    from memory.api import Notes
    from memory.model.note import Note

TRASH = "trash"
_STAMP = "%Y-%m-%dT%H%M%S"


def delete_note(notes: Notes, note: str, now: dt.datetime | None = None) -> Managed:
    """Move ``note``'s file to the trash; the index and the ledger forget it."""
    note_id = _existing(notes, note)
    stamp = (now or dt.datetime.now()).strftime(_STAMP)
    target = notes.config.state_dir / TRASH / stamp / f"{note_id}.md"
    try:
        notes.commits.remove(note_id, target)
    except sqlite3.Error as exc:
        raise StorageError(f"the note is in the trash ({target}), but the history ledger "
                           f"cannot forget it ({exc}); `notes check --accept --note "
                           f"{note_id}` does it once the ledger can be written") from exc
    return Managed(note_id, "deleted", str(target),
                   f"`notes delete --restore {note_id}` puts it back")


def trashed(notes: Notes) -> dict[str, list[Path]]:
    """Every note in the trash, by id: its copies, the last deleted first."""
    root = notes.config.state_dir / TRASH
    found: dict[str, list[Path]] = {}
    for folder in sorted(root.iterdir(), reverse=True) if root.is_dir() else []:
        for file in sorted(folder.rglob("*.md")):
            note_id = file.relative_to(folder).with_suffix("").as_posix()
            found.setdefault(note_id, []).append(file)
    return found


def restore_note(notes: Notes, note: str) -> Managed:
    """Put the last deleted copy of ``note`` back where it was."""
    note_id = validate_note_id(note)
    copies = trashed(notes).get(note_id)
    if not copies:
        held = ", ".join(sorted(trashed(notes))[:10]) or "nothing"
        raise NoteNotFound(f"note {excerpt(note_id)} is not in the trash "
                           f"({notes.config.state_dir / TRASH} holds {held}); `notes delete "
                           "--restore` takes a note id from that list")
    source = copies[0]
    path = notes.commits.put_back(note_id, source).path
    tidy_folders(source.parent, notes.config.state_dir / TRASH)
    return Managed(note_id, "restored", str(path), f"from {source}")


def move_note(notes: Notes, old: str, new: str | None, project: str | None = None) -> Managed:
    """Rename ``old`` to ``new`` (None: keep its id) and, when ``project`` is given, make
    it a note of that project (``""``: of no project)."""
    note_id = _existing(notes, old)
    if new is None and project is None:
        raise InvalidArgument("give the new id (`notes move OLD NEW`) or a project "
                              "(`--project KEY`, `.` or `none`)")
    target = validate_note_id(new) if new is not None else note_id
    path = notes.note_path(note_id)
    detail = []
    if target != note_id:
        path = _rename(notes, note_id, target)
        detail.append(f"renamed from {note_id}")
    if project is not None:
        notes.rewrite_note(target, lambda n: with_project(n, project))
        detail.append(f"project {project or 'none'}")
    return Managed(target, "moved", str(path), "; ".join(detail))


def _rename(notes: Notes, old: str, new: str) -> Path:
    taken = {n.casefold(): n for n in notes.note_ids()}
    if new.casefold() in taken and taken[new.casefold()] != old:
        raise NoteExists(f"note {excerpt(taken[new.casefold()])} already exists; pick another "
                         f"id, or delete it first (`notes delete {taken[new.casefold()]}`)")
    try:
        target = notes.commits.rename(old, new)
    except sqlite3.Error as exc:
        raise StorageError(f"the note is renamed, but the history ledger cannot follow "
                           f"({exc}); `notes check --accept --note {new}` records it") from exc
    notes.usage_renamed(old, new)
    record = ImportRecord.load(notes.config.state_dir)
    if record.renamed(old, new):
        record.save(notes.config.state_dir)
    return target


def with_project(note: Note, project: str) -> str:
    """The note's text with its front matter's ``project:`` set (``""``: taken out)."""
    from memory.model.edit import newline_of

    nl = newline_of(note.text)
    lines = split_lines(note.text)
    line = yaml.safe_dump({"project": project}, allow_unicode=True, width=1000).rstrip("\n")
    new = [f"{line}{nl}"] if project else []
    if not note.front_matter:
        return "".join([f"---{nl}", *new, f"---{nl}"] + lines) if new else note.text
    close = next(i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") in ("---", "..."))
    at = next((i for i in range(1, close) if lines[i].startswith("project:")), None)
    if at is None:
        return "".join(lines[:close] + new + lines[close:])
    end = at + 1
    while end < close and lines[end][:1] in (" ", "\t", "-"):  # a value over several lines
        end += 1
    return "".join(lines[:at] + new + lines[end:])


def _existing(notes: Notes, note: str) -> str:
    note_id = notes.note_id_of(note)
    path = notes.note_path(note_id)
    if not path.is_file():
        raise NoteNotFound(missing_note_message(note_id, notes.note_ids()))
    return note_id
