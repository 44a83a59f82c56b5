"""A live link to Claude Code's memory (docs/import.md, "Importing again"): a source imported
before and changed since is merged into its note (:mod:`memory.model.resync`) by `notes
import` again, by `notes watch` and by the prompt hook, which look at the followed sources
(Claude Code's memory files and folders, recorded by :mod:`memory.state.imports`) at most
once a minute, with a stat of each.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING

from memory.errors import NotesError
from memory.model.compose import Composed
from memory.model.note import Note, parse_note
from memory.model.resync import Merged, merge_source, without_provenance
from memory.state.imports import ImportRecord, due, version_text
from memory.state.store import Store

if TYPE_CHECKING:
    from memory.api import Notes
    from memory.config import Config
    from memory.services.importer import ImportItem, ImportReport, Source

MOVED = "its provenance moved from the front matter to the state folder"


def plan_kept(config: Config, notes: Notes | None, source: Source, note_id: str
              ) -> ImportItem:
    """The source, unchanged since it was imported as ``note_id``: ``unchanged``, unless
    the note still carries the provenance keys an older import wrote into its front matter:
    they leave it (``update``/``updated``), as the record now holds them."""
    from memory.services.importer import ImportItem

    shown = str(source.path)
    same = ImportItem(shown, note_id, "unchanged", "already imported with this content")
    try:
        current = Store(config).load(note_id).note
    except (OSError, NotesError):
        return same
    if without_provenance(current) == current.text:
        return same
    if notes is None:
        return ImportItem(shown, note_id, "update", MOVED)
    try:
        notes.rewrite_note(note_id, without_provenance)
    except NotesError as exc:
        return ImportItem(shown, note_id, "skipped", str(exc))
    return ImportItem(shown, note_id, "updated", MOVED)


def plan_update(config: Config, notes: Notes | None, source: Source, note_id: str,
                raw: bytes, was: str, day: str) -> ImportItem:
    """The source, changed since it was imported as ``note_id`` (the version ``was``),
    merged into that note (without the provenance keys older imports wrote into it):
    ``update``/``updated`` with the entries it adds, or ``unchanged`` when the note holds
    it all already. ``notes`` None: a dry run."""
    from memory.services.importer import ImportItem, compose_source

    shown = str(source.path)
    new = compose_source(source, raw.decode("utf-8"))
    if isinstance(new, str):
        return ImportItem(shown, note_id, "skipped", new)
    old_text = version_text(config.state_dir, was)
    old = compose_source(source, old_text) if old_text is not None else None
    previous = _parsed(old) if isinstance(old, Composed) else None
    stamp = f"{day} {dt.datetime.now():%H:%M}"

    def merge(note: Note) -> Merged:
        merged = merge_source(note, _parsed(new), previous, stamp)
        return Merged(without_provenance(note.reparsed(merged.text)), merged.entries,
                      merged.state)

    try:
        current = Store(config).load(note_id).note
    except (OSError, NotesError) as exc:
        return ImportItem(shown, note_id, "skipped", f"its note cannot be read ({exc})")
    planned = merge(current)
    if planned.text == current.text:
        return ImportItem(shown, note_id, "unchanged", "changed at the source, nothing new "
                          "for the note")
    why = _what(planned)
    if notes is None:
        return ImportItem(shown, note_id, "update", why, planned.entries, new.layout)
    try:
        notes.rewrite_note(note_id, lambda note: merge(note).text)
    except NotesError as exc:
        return ImportItem(shown, note_id, "skipped", str(exc))
    return ImportItem(shown, note_id, "updated", why, planned.entries, new.layout)


def _parsed(composed: Composed) -> Note:
    return parse_note(composed.text)


def _what(merged: Merged) -> str:
    parts = []
    if merged.entries:
        parts.append(f"{merged.entries} new dated entr{'y' if merged.entries == 1 else 'ies'}")
    if merged.state:
        parts.append("the state rewritten, the old one kept as 'State before import'")
    return "; ".join(parts) or MOVED


def changed_sources(config: Config) -> tuple[list[Source], ImportRecord]:
    """The followed sources whose size or modification time changed since imported, and
    the files added to a followed Claude Code memory folder since (a stat each)."""
    from memory.services.importer import Source, folder_sources

    record = ImportRecord.load(config.state_dir)
    found: list[Source] = []
    for path, imported in record.sources.items():
        if not imported.live:
            continue
        try:
            info = os.stat(path)
        except OSError:
            continue  # removed at the source: its note stays as it is
        if (info.st_mtime_ns, info.st_size) != (imported.mtime_ns, imported.size):
            found.append(Source(Path(path), imported.note, imported.title, imported.project,
                                live=True))
    for folder, where in record.folders.items():
        found += [s for s in folder_sources(Path(folder), where, config.notes_dir)
                  if str(s.path) not in record.sources]
    return found, record


def follow(notes: Notes, every: float = 60.0, force: bool = False) -> ImportReport | None:
    """Bring in what changed in the followed sources, when due (at most once every
    ``every`` seconds, unless ``force``); None when it was not due or nothing changed."""
    from memory.services.importer import import_sources

    config = notes.config
    if not force and not due(config.state_dir, every):
        return None
    sources, _ = changed_sources(config)
    if not sources:
        return None
    return import_sources(config, sources, notes, scan=False)
