"""History integrity: the ledger notices edited or removed past entries; restore and accept."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import RunCli
from memory import Notes
from memory.note import parse_note

NOTE = "infra/redis"


def edit_entries(path: Path) -> tuple[str, str]:
    """Change one entry's body and delete another entry; return their ids."""
    note = parse_note(path.read_text())
    changed, removed = note.entries[1], note.entries[2]
    lines = path.read_text().splitlines(keepends=True)
    lines[changed.start + 1] = "Rewritten by hand.\n"
    del lines[removed.start:removed.end]
    path.write_text("".join(lines))
    return changed.id, removed.id


def test_check_reports_changed_and_removed_entries(run_cli: RunCli, store_dir: Path) -> None:
    assert run_cli("check").returncode == 0  # records every entry
    original = (store_dir / f"{NOTE}.md").read_bytes()
    changed, removed = edit_entries(store_dir / f"{NOTE}.md")
    result = run_cli("check", "--json")
    assert result.returncode == 1
    found = {(p["path"], p["code"]): p for p in json.loads(result.stdout)}
    assert (f"{NOTE}.md", "history-changed") in found
    assert changed in found[(f"{NOTE}.md", "history-changed")]["message"]
    assert "Rewritten by hand." in found[(f"{NOTE}.md", "history-changed")]["message"]
    assert removed in found[(f"{NOTE}.md", "history-removed")]["message"]
    restored = run_cli("check", "--restore")
    assert restored.returncode == 0 and "restored" in restored.stdout
    assert (store_dir / f"{NOTE}.md").read_bytes() == original
    assert run_cli("check").returncode == 0


def test_accept_keeps_a_deliberate_correction(run_cli: RunCli, store_dir: Path) -> None:
    run_cli("check")
    edit_entries(store_dir / f"{NOTE}.md")
    edited = (store_dir / f"{NOTE}.md").read_bytes()
    accepted = run_cli("check", "--accept", "--note", NOTE)
    assert accepted.returncode == 0 and accepted.stdout.count("accepted") == 2
    assert run_cli("check").returncode == 0
    assert (store_dir / f"{NOTE}.md").read_bytes() == edited


def test_a_deleted_note_is_recreated_with_its_history(notes: Notes, store_dir: Path) -> None:
    assert notes.check() == []
    before = [e.text.rstrip() for e in parse_note((store_dir / "infra/terraform.md")
                                                  .read_text()).entries]
    (store_dir / "infra/terraform.md").unlink()
    assert {p.code for p in notes.check()} == {"history-note-removed"}
    notes.history.restore()
    after = parse_note((store_dir / "infra/terraform.md").read_text())
    assert [e.text.rstrip() for e in after.entries] == before
    assert notes.check() == []


def test_tool_appends_are_recorded_at_once(notes: Notes, store_dir: Path) -> None:
    written = notes.append_history(NOTE, "Fresh", "Recorded when written.", date="2026-11-30")
    path = store_dir / f"{NOTE}.md"
    path.write_text(path.read_text().replace("Recorded when written.", "Tampered."))
    problems = notes.check()
    assert [(p.code, written.section in p.message) for p in problems] == [
        ("history-changed", True)]
