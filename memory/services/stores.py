"""A user's own store: `notes init`, and saying which store is in use and why.

A store is a folder of notes marked by ``.notes.toml`` (see :mod:`memory.config` for how
commands find it). ``init_store`` makes one: the folder, a ``.gitignore`` that keeps the
state folder (index, usage log, ledger) out of git, a starter note in our own format when the
folder holds no notes yet, and the marker last, so a store whose marker exists is complete.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memory.api import Notes
from memory.config import Config
from memory.errors import ConfigError
from memory.locate import EXAMPLE_STORE, STATE_FOLDER, STORE_MARKER, store_above
from memory.state.safe_files import write_atomic
from memory.state.storage_errors import make_folder, path_error

STARTER_NOTE = "start-here"
GITIGNORE_LINE = f"{STATE_FOLDER}/"
MARKER_TEXT = (
    "# A notes-memory store: `notes` run anywhere inside this folder uses it.\n"
    "# Written by `notes init` (docs/cli.md). The state folder .notes/ (index, usage log,\n"
    "# history ledger) is derived from the notes and kept out of git by .gitignore.\n"
    "version = 1\n"
)
_SHOWN_OTHERS = 3


@dataclass(frozen=True)
class InitResult:
    store: Path
    created: bool  # False: it was already a store, nothing was written
    written: list[str] = field(default_factory=list)  # paths relative to the store


def init_store(target: Path, force: bool = False,
               config_for: Callable[[Path], Config] | None = None) -> InitResult:
    """Make ``target`` a store (see the module docstring); safe to run twice. Refuses, unless
    ``force``, inside another store and on a folder holding files that are not notes.
    ``config_for(store)`` gives the new store's configuration, for writing the starter
    note through :class:`memory.api.Notes` (no starter note without it)."""
    target = target.expanduser().resolve()
    try:
        if target.exists() and not target.is_dir():
            raise ConfigError(f"{target} is a file, not a folder; give a folder for the store")
        if (target / STORE_MARKER).is_file():
            return InitResult(target, created=False)
    except OSError as exc:  # a name too long, a loop of links
        raise path_error(exc, target, "a store's folder") from exc
    _refuse_unless_forced(target, force)
    make_folder(target, "a store's folder")
    written = [".gitignore"] if _ignore_state_folder(target / ".gitignore") else []
    if config_for is not None and not _has_notes(target):
        notes = Notes(config_for(target), notify=lambda _: None, front="cli")
        try:
            notes.create_note_from_text(STARTER_NOTE, starter_note_text(dt.date.today()))
        finally:
            notes.close()
        written.append(f"{STARTER_NOTE}.md")
    _write_new(target / STORE_MARKER, MARKER_TEXT)
    return InitResult(target, created=True, written=[STORE_MARKER, *written])


def _refuse_unless_forced(target: Path, force: bool) -> None:
    if force:
        return
    if target == EXAMPLE_STORE.resolve():
        raise ConfigError(f"{target} is the bundled example, a demo; make your own store "
                          "(`notes init` or `notes init DIR`), or pass --force")
    outer = store_above(target)
    if outer is not None:
        raise ConfigError(f"{target} is inside the store {outer}; commands run there already "
                          f"use it (make a sub-folder of notes instead), or pass --force to "
                          "make a separate store inside it")
    others = _other_files(target)
    if others:
        shown = ", ".join(others[:_SHOWN_OTHERS])
        more = f" and {len(others) - _SHOWN_OTHERS} more" if len(others) > _SHOWN_OTHERS else ""
        raise ConfigError(f"{target} holds files that are not notes ({shown}{more}); give "
                          "an empty folder, a new one or a folder of Markdown notes (`notes "
                          "init DIR`), or pass --force to make a store here anyway")


def _other_files(folder: Path) -> list[str]:
    """Visible files below ``folder`` that are not Markdown notes (hidden ones ignored)."""
    if not folder.is_dir():
        return []
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and not name.endswith(".md"):
                found.append((Path(dirpath) / name).relative_to(folder).as_posix())
    return found


def _has_notes(folder: Path) -> bool:
    for _, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        if any(n.endswith(".md") and not n.startswith(".") for n in filenames):
            return True
    return False


def _ignore_state_folder(path: Path) -> bool:
    """Add the state folder to ``.gitignore`` (created if missing); True if written."""
    if not path.exists():
        _write_new(path, f"# notes-memory: derived state (index, usage log, ledger)\n"
                         f"{GITIGNORE_LINE}\n")
        return True
    text = path.read_text(encoding="utf-8", errors="replace")
    wanted = {STATE_FOLDER, GITIGNORE_LINE, f"/{STATE_FOLDER}", f"/{GITIGNORE_LINE}"}
    if any(line.strip() in wanted for line in text.splitlines()):
        return False
    gap = "" if not text or text.endswith("\n") else "\n"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(f"{gap}# notes-memory: derived state (index, usage log, ledger)\n"
                     f"{GITIGNORE_LINE}\n")
    return True


def _write_new(path: Path, text: str) -> None:
    write_atomic(path, text)


def starter_note_text(today: dt.date) -> str:
    """The note `notes init` writes: the format, explained in the format itself."""
    return f"""---
title: How this store works
tags: [notes-memory, help]
aliases: [start here, cómo funciona, formato de las notas]
---
# How this store works

## Current state
- One Markdown note per topic; sub-folders are namespaces (`infra/search.md` is the note
  `infra/search`). Create one with `notes new NOTE --title "Title"`.
- Each note starts with a short current state (this section), rewritten whole when a fact
  changes: `notes state NOTE` with the new text on stdin (agents: `write_state`).
- Below it, a dated history that only grows: `notes log NOTE --title "What happened"` with
  the body on stdin (agents: `append_history`). Past entries are never edited.
- Find notes with `notes suggest "question"`, see a note's sections and what each costs with
  `notes map NOTE`, read just one with `notes read NOTE SECTION`.
- Bring in the memory you already have with `notes import` (Claude Code's: `notes import
  --claude`); wire Claude Code with `notes install claude-code`; `notes status` says which
  store is in use and what is wrong.
- Delete this note when you no longer need it.

## History
### {today.isoformat()} · Store created
Created by `notes init`: this note, `.notes.toml` (marks the folder as a store) and
`.gitignore` (keeps the derived `.notes/` folder out of git).
"""


def describe_store(config: Config) -> str:
    """One line saying which store is in use and why (for `install`, `serve`, `status`)."""
    path = config.notes_dir
    why = {
        "flag": "from --notes",
        "env": "from NOTES_DIR",
        "found": "found walking up from the current folder",
        "default": "your default store; `notes init DIR` makes another",
        "example": "the bundled example",
    }.get(config.store_source, config.store_source)
    if path == EXAMPLE_STORE.resolve():
        why += "; a fictional company's notes, not your memory" if "example" in why else \
            "; the bundled example, a fictional company's notes, not your memory"
    return f"store {path} ({why})"
