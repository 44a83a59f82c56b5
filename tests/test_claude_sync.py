"""A live link to Claude Code's memory (docs/import.md, "Importing again"): a memory file
Claude Code changes after `notes import --claude` comes in again, through the real CLI, by
importing again, by the prompt hook (at most once a minute) and by `notes watch`: new dated
lines as history entries, a changed undated part as the new state with the old one kept in
the history, lines removed at the source kept; never refused, never twice."""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import NOTES_BIN, copy_initialised
from memory.model.note import parse_note
from memory.services.importer import claude_project_slug

RELEASE = """---
name: Release train
type: project
---
Releases go out every second Tuesday from the `release` branch.
Freeze starts on the Friday before each release.

- 2026-02-24: release 4.1 delayed a day, the checkout e2e suite was flaky.
- 2026-03-10: release 4.2 shipped; the payment retry flag is on for everyone.
"""
CHANGED = """---
name: Release train
type: project
---
Releases go out every second Tuesday from the `release` branch.
Freeze starts on the Thursday before each release, since April.

- 2026-03-10: release 4.2 shipped; the payment retry flag is on for everyone.
- 2026-04-07: release 4.3 shipped with the new invoice layout.
"""
NOTE = "claude/shop/memory/release"


def notes(*args: str, cwd: Path, store: Path, input: str | None = None
          ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    return subprocess.run([str(NOTES_BIN), "--notes", str(store), *args], cwd=cwd, env=env,
                          input=input, capture_output=True, text=True, timeout=120)


@pytest.fixture
def imported(tmp_path: Path, initialised_store: Path) -> tuple[Path, Path, Path]:
    """A project whose Claude Code memory (MEMORY.md and release.md) was imported."""
    project = tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    memory = (Path(os.environ["HOME"]) / ".claude" / "projects" / claude_project_slug(project)
              / "memory")
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Release train](release.md): freeze dates\n")
    (memory / "release.md").write_text(RELEASE)
    store = tmp_path / "store"
    copy_initialised(initialised_store, store)  # as `notes init` makes it (conftest)
    made = notes("import", "--claude", cwd=project, store=store)
    assert made.returncode == 0 and "2 notes created" in made.stdout, made.stdout + made.stderr
    return store, project, memory


def note_text(store: Path, note: str = NOTE) -> str:
    return (store / f"{note}.md").read_text()


def test_import_again_brings_the_change_in_once(imported: tuple[Path, Path, Path]) -> None:
    store, project, memory = imported
    (memory / "release.md").write_text(CHANGED)
    dry = notes("import", "--claude", cwd=project, store=store)
    assert dry.returncode == 0, dry.stderr
    assert f"updated | {NOTE}" in dry.stdout and "1 updated" in dry.stdout
    note = parse_note(note_text(store))
    assert note.state is not None and "Thursday" in note.state.text
    assert "Friday" not in note.state.text
    titles = [e.title for e in note.entries]
    assert [e.date for e in note.entries][:3] == ["2026-02-24", "2026-03-10", "2026-03-10"] \
        or "2026-02-24" in [e.date for e in note.entries]  # removed at the source, kept
    assert sum("4.3 shipped" in e.text for e in note.entries) == 1
    assert sum("4.2 shipped" in e.text for e in note.entries) == 1  # not twice
    before = [e for e in note.entries if e.title.endswith("State before import")]
    assert len(before) == 1 and "Friday before each release" in before[0].text, titles
    assert "Releases go out" in before[0].text

    text = note_text(store)
    again = notes("import", "--claude", "--json", cwd=project, store=store)
    assert {i["action"] for i in json.loads(again.stdout)["items"]} == {"unchanged"}
    assert note_text(store) == text  # idempotent
    assert notes("check", cwd=project, store=store).returncode == 0


def test_what_notes_wrote_is_not_imported_back(imported: tuple[Path, Path, Path]) -> None:
    store, project, memory = imported
    logged = notes("log", NOTE, "--title", "Freeze moved", "--date", "2026-05-01",
                   cwd=project, store=store, input="The freeze moved to Wednesday.\n")
    assert logged.returncode == 0, logged.stderr
    wrote = notes("state", NOTE, cwd=project, store=store,
                  input="Releases go out every second Tuesday.\n")
    assert wrote.returncode == 0, wrote.stderr
    text = note_text(store)
    # Claude Code copies what it read from notes into its memory file
    (memory / "release.md").write_text(
        RELEASE + "- 2026-05-01: The freeze moved to Wednesday.\n")
    again = notes("import", "--claude", "--json", cwd=project, store=store)
    items = {i["note"]: i for i in json.loads(again.stdout)["items"]}
    assert items[NOTE]["action"] == "unchanged", items[NOTE]
    assert note_text(store) == text  # the state written here stays: unchanged at the source


def hook(store: Path, project: Path, prompt: str) -> str:
    payload = json.dumps({"prompt": prompt, "session_id": "s", "cwd": str(project),
                          "hook_event_name": "UserPromptSubmit"})
    done = notes("hook", "user-prompt", cwd=project, store=store, input=payload)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_hook_brings_changes_in_at_most_once_a_minute(
        imported: tuple[Path, Path, Path], tmp_path: Path) -> None:
    store, project, memory = imported
    (memory / "release.md").write_text(CHANGED)
    answer = hook(store, project, "when did release 4.3 ship with the invoice layout?")
    assert "release" in answer
    assert "4.3 shipped" in note_text(store)
    checked = store / ".notes" / "imports.checked"
    assert checked.is_file()

    (memory / "release.md").write_text(CHANGED + "- 2026-04-21: release 4.4 skipped.\n")
    (memory / "deploys.md").write_text("Deploys need two approvals.\n")
    hook(store, project, "release 4.4")
    assert "4.4 skipped" not in note_text(store)  # looked less than a minute ago
    old = time.time() - 120
    os.utime(checked, (old, old))
    hook(store, project, "release 4.4")
    assert "4.4 skipped" in note_text(store)
    assert "two approvals" in note_text(store, "claude/shop/memory/deploys")
    assert notes("check", cwd=project, store=store).returncode == 0


def test_watch_brings_a_change_in(imported: tuple[Path, Path, Path]) -> None:
    store, project, memory = imported
    (memory / "release.md").write_text(CHANGED)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    watcher = subprocess.Popen([str(NOTES_BIN), "--notes", str(store), "watch"], cwd=project,
                               env=env, stderr=subprocess.PIPE, text=True)
    seen: list[str] = []
    try:
        assert watcher.stderr is not None
        with selectors.DefaultSelector() as chooser:
            chooser.register(watcher.stderr, selectors.EVENT_READ)
            while not any(line.startswith("watching") for line in seen):
                assert chooser.select(timeout=60), seen
                line = watcher.stderr.readline()
                assert line, seen
                seen.append(line)
    finally:
        watcher.send_signal(signal.SIGTERM)
        watcher.wait(timeout=30)
        if watcher.stderr is not None:
            watcher.stderr.close()
    assert f"imported: {NOTE} (updated; from {memory / 'release.md'})\n" in seen
    assert "4.3 shipped" in note_text(store)
