"""`notes import`: existing memory into the store, without losing a byte (docs/import.md).

Sources: Claude Code's auto memory of a project (``~/.claude/projects/<slug>/memory/``:
``MEMORY.md`` and its topic files) and the project's ``CLAUDE.md`` files (``--claude``), any
folder of Markdown notes, or single files. Each file becomes one note, composed by
:mod:`memory.model.compose` and written through :meth:`memory.api.Notes.create_note_from_text`.
Sources are only read. Where each note came from is kept in the state folder
(:mod:`memory.state.imports`), not in the note. Importing again creates nothing new: a source
whose content (SHA-256) is already in the store is ``unchanged``; one whose path was imported
with other content is merged into its note (:mod:`memory.services.import_sync`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memory.api import Notes
from memory.config import Config
from memory.errors import InvalidArgument, InvalidNoteId, NotesError
from memory.model.compose import Composed, compose_note, keeps_every_line
from memory.model.text import slugify
from memory.project import find_project
from memory.state.imports import (
    RECORD,
    Folder,
    Imported,
    ImportRecord,
    keep_version,
    kept_versions,
)
from memory.state.store import Store, validate_note_id

CLAUDE_FILES = ("CLAUDE.md", "CLAUDE.local.md")
SKIPPED_FOLDERS = {"node_modules", "__pycache__"}
_SUFFIXES = (".md", ".markdown")


@dataclass(frozen=True)
class Source:
    path: Path  # absolute
    note_id: str  # wanted id (a free one is picked if it is taken)
    title: str  # title when the file gives none
    project: str = ""  # the project key the note gets ("": a note of no project)
    live: bool = False  # followed by `notes watch` and the hook (Claude Code's memory)


@dataclass(frozen=True)
class ImportItem:
    source: str
    note: str
    action: str  # "create"/"update" (dry run), "created"/"updated", "unchanged", "skipped"
    reason: str = ""
    entries: int = 0
    layout: str = ""


@dataclass(frozen=True)
class ImportReport:
    store: str
    dry_run: bool
    items: list[ImportItem]
    notices: list[str]
    folders: dict[str, Folder] = field(default_factory=dict)  # Claude Code memory folders

    def count(self, *actions: str) -> int:
        return sum(i.action in actions for i in self.items)


# -- finding sources ---------------------------------------------------------------------
def claude_project_slug(project: Path) -> str:
    """Claude Code's folder name for a project: its path with every character that is not
    a letter or digit turned into ``-`` (``/home/ana/my.app`` → ``-home-ana-my-app``)."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(project))


def claude_sources(project: Path, home: Path, prefix: str | None,
                   skip: Path) -> tuple[list[Source], list[str], dict[str, Folder]]:
    """This project's Claude Code memory: the auto memory folder (of the project folder and
    of its git root, when they differ) and the project's CLAUDE.md files; notices about
    what was looked for and not found; and the memory folders looked in (followed live:
    a file Claude Code adds there later comes in with the next look)."""
    name = slugify(project.name) or "project"
    base = prefix if prefix is not None else f"claude/{name}"
    found = find_project(project, skip, home)
    key = found.key if found else ""
    sources: list[Source] = []
    notices: list[str] = []
    folders: dict[str, Folder] = {}
    for root in dict.fromkeys([project, _git_root(project)]):
        if root is None:
            continue
        memory = home / ".claude" / "projects" / claude_project_slug(root) / "memory"
        folders[str(memory)] = Folder(_join(base, "memory"), key)
        sources += folder_sources(memory, folders[str(memory)], skip)
    if not sources:
        notices.append(f"no Claude Code auto memory for {project} (looked in "
                       f"{' and '.join(folders)})")
    found_md = False
    for path, rel in _claude_md_files(project, skip):
        found_md = True
        sources.append(Source(path, _join(base, rel.replace(".claude/", "dot-claude/")),
                              f"{path.relative_to(project).as_posix()} of {project.name}", key,
                              live=True))
    if not found_md:
        notices.append(f"no CLAUDE.md in {project}")
    return sources, notices, folders


def folder_sources(memory: Path, folder: Folder, skip: Path) -> list[Source]:
    """The Markdown files of a Claude Code memory folder, as live sources."""
    if not memory.is_dir():
        return []
    return [Source(p, _join(folder.base, rel), f"Claude Code memory: {rel}", folder.project,
                   live=True) for p, rel in _markdown_files(memory, skip)]


def path_sources(paths: list[Path], prefix: str | None, skip: Path) -> list[Source]:
    """Files as they are named; folders: every Markdown file below (hidden folders and the
    store itself left out), as ``<prefix or folder name>/<relative path>``."""
    sources: list[Source] = []
    for given in paths:
        path = given.expanduser().resolve()
        if path == skip:
            raise InvalidArgument(f"{given} is the store itself; to convert its plain files, "
                                  "import them into another store (`notes init DIR`, then "
                                  f"`notes --notes DIR import {given}`) or one by one")
        if path.is_dir():
            base = prefix if prefix is not None else (slugify(path.name) or "imported")
            sources += [Source(p, _join(base, rel), p.stem) for p, rel in
                        _markdown_files(path, skip)]
        elif path.is_file():
            sources.append(Source(path, _join(prefix or "", _stem(path.name)), path.stem))
        elif path.exists():
            raise InvalidArgument(f"{given} is not a regular file (a named pipe, a socket or a "
                                  "device); give a Markdown file or a folder")
        else:
            raise InvalidArgument(f"{given} does not exist; give a Markdown file or a folder")
    return sources


def _markdown_files(folder: Path, skip: Path) -> Iterator[tuple[Path, str]]:
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                             and d not in SKIPPED_FOLDERS and (here / d).resolve() != skip)
        for name in sorted(filenames):
            if name.endswith(_SUFFIXES) and not name.startswith("."):
                path = here / name
                yield path.resolve(), _stem(path.relative_to(folder).as_posix())


def _claude_md_files(project: Path, skip: Path) -> Iterator[tuple[Path, str]]:
    dot = project / ".claude" / "CLAUDE.md"
    if dot.is_file():
        yield dot.resolve(), ".claude/CLAUDE"
    for dirpath, dirnames, filenames in os.walk(project):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                             and d not in SKIPPED_FOLDERS and (here / d).resolve() != skip)
        for name in sorted(filenames):
            if name in CLAUDE_FILES:
                yield (here / name).resolve(), _stem((here / name).relative_to(project)
                                                     .as_posix())


def _git_root(folder: Path) -> Path | None:
    return next((p for p in (folder, *folder.parents) if (p / ".git").exists()), None)


def _stem(name: str) -> str:
    for suffix in _SUFFIXES:
        if name.endswith(suffix):
            return name[:-len(suffix)]
    return name


def _join(*parts: str) -> str:
    """A valid note id from path parts: each part kept when allowed, else slugified."""
    pieces = [p for part in parts for p in part.split("/") if p]
    clean = []
    for piece in pieces:
        try:
            clean.append(validate_note_id(piece))
        except InvalidNoteId:
            clean.append(slugify(piece) or "note")
    return "/".join(clean) or "note"


# -- planning and writing ---------------------------------------------------------------
@dataclass(frozen=True)
class _Planned:
    item: ImportItem
    text: str = ""  # a note to create
    digest: str = ""
    raw: bytes = b""
    info: os.stat_result | None = None
    on: str = ""  # the day the version was imported, when it was before


def import_sources(config: Config, sources: list[Source], notes: Notes | None,
                   notices: list[str] | None = None, today: dt.date | None = None,
                   folders: dict[str, Folder] | None = None,
                   scan: bool = True) -> ImportReport:
    """Plan every source against the store of ``config``, then create or update the notes
    through ``notes`` (None: a dry run, nothing is written; the store need not exist yet),
    and record where each came from (:mod:`memory.state.imports`). ``scan``: also read
    the front matter of every note for imports made before the record was kept (the
    prompt hook, following live sources, reads the record alone); what those older notes
    carried in their front matter moves to the record."""
    day = (today or dt.date.today()).isoformat()
    store = Store(config)
    record = ImportRecord.load(config.state_dir)
    taken = set(store.note_ids())
    by_hash, by_path = _imported(store, record, taken, scan)
    items: list[ImportItem] = []
    for source in dict((s.path, s) for s in sources).values():
        planned = _plan(source, day, config, by_hash, by_path, taken, notes)
        item = planned.item
        if item.action == "create":
            taken.add(item.note)
            by_hash[planned.digest] = item.note
            if notes is not None:
                item = _create(notes, planned)
        if notes is not None and item.action in ("created", "updated", "unchanged") \
                and planned.info is not None:
            record.sources[str(source.path)] = Imported(
                item.note, planned.digest, planned.info.st_size, planned.info.st_mtime_ns,
                planned.on or day, source.live, source.title, source.project)
            keep_version(config.state_dir, planned.digest, planned.raw)
        items.append(item)
    if notes is not None:
        record.folders.update(folders or {})
        record.save(config.state_dir)
    said = list(notices or [])
    if record.set_aside is not None:
        said.append(f"{record.set_aside} could not be read (the record of where imported notes "
                    f"came from): moved aside, and rebuilt from the notes; delete it once "
                    f"`notes check` is clean")
    elif record.unreadable:
        said.append(f"{config.state_dir / RECORD} cannot be read; importing (without "
                    f"--dry-run) moves it aside and rebuilds it from the notes")
    return ImportReport(str(config.notes_dir), notes is None, items, said, folders or {})


def _plan(source: Source, day: str, config: Config, by_hash: dict[str, str],
          by_path: dict[str, Earlier], taken: set[str], notes: Notes | None) -> _Planned:
    shown = str(source.path)
    raw, problem, info = _read(source.path, config.max_note_bytes)
    if problem:
        return _Planned(ImportItem(shown, "", "skipped", problem))
    digest = hashlib.sha256(raw).hexdigest()
    from memory.services.import_sync import plan_kept, plan_update

    earlier = by_path.get(shown) or _unrecorded(config, source, raw, digest, by_path, taken)
    if earlier is not None:
        note, was, on = earlier
        if was == digest:
            return _Planned(plan_kept(config, notes, source, note), "", digest, raw, info, on)
        return _Planned(plan_update(config, notes, source, note, raw, was, day), "", digest,
                        raw, info)
    if digest in by_hash:
        return _Planned(ImportItem(shown, by_hash[digest], "unchanged",
                                   "already imported with this content"))
    text = raw.decode("utf-8")
    composed = compose_source(source, text)
    if isinstance(composed, str):
        return _Planned(ImportItem(shown, "", "skipped", composed))
    if len(composed.text.encode("utf-8")) > config.max_note_bytes:
        return _Planned(ImportItem(shown, "", "skipped", "over the note size limit once "
                                   "imported; split the file, or raise NOTES_MAX_NOTE_BYTES"))
    note_id = _free_id(source.note_id, taken)
    return _Planned(ImportItem(shown, note_id, "create", "", composed.entries,
                               composed.layout), composed.text, digest, raw, info)


def compose_source(source: Source, text: str) -> Composed | str:
    """The source as a note (or why it cannot be), with its project in the front matter
    (where it came from is kept in the state folder, not in the note)."""
    keys = {"project": source.project} if source.project else {}
    try:
        return compose_note(text, source.title, keys)
    except ValueError as exc:
        return str(exc)


def _create(notes: Notes, planned: _Planned) -> ImportItem:
    item = planned.item
    try:
        notes.create_note_from_text(item.note, planned.text)
    except NotesError as exc:
        return ImportItem(item.source, item.note, "skipped", str(exc))
    return ImportItem(item.source, item.note, "created", "", item.entries, item.layout)


def _read(path: Path, limit: int) -> tuple[bytes, str, os.stat_result | None]:
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):  # a named pipe would block the read for good
            return b"", ("not a regular file (a named pipe, a socket or a device); import "
                         "Markdown files"), None
        size = info.st_size
        if size > limit:
            return b"", (f"too large ({size:,} bytes, over the limit of {limit:,}); split it, "
                         "or raise NOTES_MAX_NOTE_BYTES"), None
        raw = path.read_bytes()
    except OSError as exc:
        return b"", f"cannot be read ({exc.strerror}); check its permissions", None
    if b"\x00" in raw:
        return b"", "binary (NUL bytes), not Markdown", None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        return b"", f"not UTF-8 (line {line}); re-save it as UTF-8 and import again", None
    if not raw.strip():
        return b"", "empty", None
    return raw, "", info


Earlier = tuple[str, str, str]  # an earlier import: note, hash of the version, its day


def _imported(store: Store, record: ImportRecord, taken: set[str], scan: bool = True
              ) -> tuple[dict[str, str], dict[str, Earlier]]:
    """What earlier imports left, of the notes still in the store: note by source hash, and
    the note, hash and day of the version imported last by source path: from the record in
    the state folder, else from the front matter of notes imported before it was kept
    (``imported_from``, ``imported_sha256``, ``imported_on``)."""
    by_hash: dict[str, str] = {}
    by_path: dict[str, Earlier] = {}
    for entry in store.files() if scan else []:
        try:
            meta = store.load_path(entry.note_id, entry.path).note.meta
        except OSError:
            continue
        source, digest = meta.get("imported_from"), meta.get("imported_sha256")
        if isinstance(source, str) and isinstance(digest, str):
            by_hash.setdefault(digest, entry.note_id)
            by_path.setdefault(source, (entry.note_id, digest, str(meta.get("imported_on")
                                                                  or "")))
    for path, imported in record.sources.items():
        if imported.note in taken:
            by_path[path] = (imported.note, imported.sha256, imported.on)
            by_hash.setdefault(imported.sha256, imported.note)
    return by_hash, by_path


def _unrecorded(config: Config, source: Source, raw: bytes, digest: str,
                by_path: dict[str, Earlier], taken: set[str]) -> Earlier | None:
    """A source no record names (the record lost) whose note is where it would go and
    holds every line of it, or of a version imported before (kept in the state folder):
    that note, as imported with that version (merged into, never copied)."""
    if source.note_id not in taken or any(e[0] == source.note_id for e in by_path.values()):
        return None
    try:
        note = Store(config).load(source.note_id).note
    except (OSError, NotesError):
        return None
    if keeps_every_line(raw.decode("utf-8"), note.text):
        return source.note_id, digest, ""
    for was, text in kept_versions(config.state_dir):
        if keeps_every_line(text, note.text):
            return source.note_id, was, ""
    return None


def _free_id(wanted: str, taken: set[str]) -> str:
    folded = {t.casefold() for t in taken}
    candidate, number = wanted, 2
    while candidate.casefold() in folded:
        candidate, number = f"{wanted}-{number}", number + 1
    return candidate
