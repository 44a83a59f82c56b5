"""A note moved (deleted to the trash, restored, renamed) is under one of its two names after
a crash at any moment, never under neither: the rename's folders are fsynced, and where a
rename cannot (the trash on another file system) the copy is fsynced into place before the
note is unlinked.

A crash cannot be staged in a test, so these tests watch the system calls the move makes, in
order (the real calls are made; they are only recorded)."""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memory import Notes
from memory.services.manage import delete_note, move_note, restore_note

NOTE = "howto/deploy-production"
Event = tuple[str, str]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[Event]:
    """Every fsync (of the file or folder its descriptor names), rename and unlink, in order."""
    seen: list[Event] = []

    def spy(name: str, real: Callable[..., Any], describe: Callable[..., str]
            ) -> Callable[..., Any]:
        def called(*args: Any, **kwargs: Any) -> Any:
            seen.append((name, describe(*args)))
            return real(*args, **kwargs)
        return called

    monkeypatch.setattr(os, "fsync", spy("fsync", os.fsync,
                                         lambda fd: os.readlink(f"/proc/self/fd/{fd}")))
    monkeypatch.setattr(os, "rename", spy("rename", os.rename,
                                          lambda a, b, *_: f"{a} -> {b}"))
    monkeypatch.setattr(os, "unlink", spy("unlink", os.unlink, lambda a, *_: str(a)))
    return seen


def synced_after(calls: list[Event], index: int, path: Path) -> bool:
    return any(name == "fsync" and Path(what) == path for name, what in calls[index:])


def moved(calls: list[Event], source: Path, target: Path) -> int:
    """Where in ``calls`` the file came to ``target`` (renamed from ``source`` or from its
    fsynced copy)."""
    return next(i for i, (name, what) in enumerate(calls)
                if name == "rename" and what.endswith(f" -> {target}"))


def test_a_delete_fsyncs_both_folders_after_the_rename(notes: Notes,
                                                      calls: list[Event]) -> None:
    source = notes.note_path(NOTE)
    target = Path(delete_note(notes, NOTE).path)
    at = moved(calls, source, target)
    assert calls[at] == ("rename", f"{source} -> {target}")
    assert synced_after(calls, at, target.parent)
    assert synced_after(calls, at, source.parent)


def test_a_restore_and_a_rename_fsync_their_folders(notes: Notes, calls: list[Event]) -> None:
    source = notes.note_path(NOTE)
    trashed = Path(delete_note(notes, NOTE).path)
    calls.clear()
    restore_note(notes, NOTE)
    at = moved(calls, trashed, source)
    assert synced_after(calls, at, source.parent) and synced_after(calls, at, trashed.parent)
    calls.clear()
    renamed = notes.note_path("runbooks/deploy")
    move_note(notes, NOTE, "runbooks/deploy")
    at = moved(calls, source, renamed)
    assert synced_after(calls, at, renamed.parent) and synced_after(calls, at, source.parent)


def test_across_file_systems_the_copy_is_durable_before_the_note_goes(
        notes: Notes, calls: list[Event], monkeypatch: pytest.MonkeyPatch) -> None:
    """The trash on another file system: rename fails with EXDEV, as it does there."""
    source = notes.note_path(NOTE)
    text = source.read_text()
    rename = os.rename

    def across(a: Any, b: Any, *rest: Any) -> None:
        if Path(a) == source:
            calls.append(("rename", f"{a} -> {b} (EXDEV)"))
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV))
        rename(a, b, *rest)

    monkeypatch.setattr(os, "rename", across)
    target = Path(delete_note(notes, NOTE).path)
    assert target.read_text() == text and not source.exists()
    gone = calls.index(("unlink", str(source)))
    copied = next(i for i, (name, what) in enumerate(calls)
                  if name == "fsync" and what.startswith(str(target.parent / f".{target.name}.")))
    assert copied < gone  # the copy's bytes are on disk before the note is unlinked
    assert target.exists() and synced_after(calls[:gone], copied, target.parent)
    assert synced_after(calls, gone, source.parent)
    assert not list(target.parent.glob(".*.tmp"))
