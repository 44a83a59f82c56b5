"""History integrity: the ledger notices edited or removed past entries; restore and accept."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import RunCli
from memory import Notes
from memory.model.note import parse_note
from reliability import Figures

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
    notes.restore_history()
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


# -- order and insertion are part of the record (issue 13, item 12) ----------------------
def _lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def _swap_first_two_entries(path: Path) -> None:
    note = parse_note(path.read_text())
    one, two = note.entries[0], note.entries[1]
    lines = _lines_of(path)
    swapped = lines[two.start:two.end] + lines[one.start:one.end]
    path.write_text("".join(lines[:one.start] + swapped + lines[two.end:]))


def _insert_backdated_entry(path: Path) -> None:
    note = parse_note(path.read_text())
    at = note.entries[1].start
    lines = _lines_of(path)
    lines.insert(at, "### 2020-01-01 · Backdated by hand\nInserted in the middle.\n\n")
    path.write_text("".join(lines))


def _retitle_second_entry(path: Path) -> None:
    note = parse_note(path.read_text())
    lines = _lines_of(path)
    lines[note.entries[1].start] = "### 1999-12-31 · A new title and date\n"
    path.write_text("".join(lines))


def _delete_history(path: Path) -> None:
    note = parse_note(path.read_text())
    history = note.history
    assert history is not None
    lines = _lines_of(path)
    path.write_text("".join(lines[:history.start] + lines[history.end:]))


def _rename_history(path: Path) -> None:
    path.write_text(path.read_text().replace("## History\n", "## Bitácora vieja\n", 1))


@pytest.mark.parametrize(("damage", "code"), [
    (_swap_first_two_entries, "history-moved"),
    (_insert_backdated_entry, "history-inserted"),
    (_retitle_second_entry, "history-changed"),
    (_delete_history, "history-removed"),
    (_rename_history, "history-removed"),
])
def test_check_sees_it_and_restore_puts_back_the_exact_bytes(
        notes: Notes, store_dir: Path, damage: Callable[[Path], None], code: str,
        figures: Figures) -> None:
    """History edited by hand: swapped, inserted, retitled, deleted, renamed"""
    assert notes.check() == []  # records every note
    path = store_dir / f"{NOTE}.md"
    original = path.read_bytes()
    damage(path)
    problems = [p for p in notes.check() if p.path == f"{NOTE}.md"]
    assert problems and code in {p.code for p in problems}, problems
    if code == "history-changed":  # a new heading is a change, not a removal and an addition
        assert {p.code for p in problems} == {"history-changed"}
    repairs = notes.restore_history(NOTE)
    assert repairs
    assert path.read_bytes() == original
    assert notes.check() == []
    figures.add(damage.__name__.strip("_").replace("_", " "),
                f"reported ({code}); restored byte for byte")


def test_restore_saves_what_it_takes_out(notes: Notes, store_dir: Path) -> None:
    notes.check()
    path = store_dir / f"{NOTE}.md"
    _insert_backdated_entry(path)
    repairs = notes.restore_history(NOTE)
    taken = [r for r in repairs if r.kind == "inserted"]
    assert len(taken) == 1 and "saved to " in taken[0].action
    saved = Path(taken[0].action.split("saved to ", 1)[1].rstrip(")"))
    assert "Inserted in the middle." in saved.read_text()
    assert "Inserted in the middle." not in path.read_text()


def test_entries_appended_by_hand_at_the_end_are_not_drift(notes: Notes,
                                                          store_dir: Path) -> None:
    notes.check()
    path = store_dir / f"{NOTE}.md"
    path.write_text(path.read_text().rstrip("\n") + "\n\n### 2026-12-01 · By hand\nFine.\n")
    assert notes.check() == []
    notes.append_history(NOTE, "By the tool", "Also fine.", "2026-12-01")
    assert notes.check() == []


def test_a_ledger_from_before_the_order_was_recorded_still_works(unindexed_store: Path) -> None:
    """Ledgers written by earlier versions have no order column: the insertion order is
    taken as the order, and checks go on."""
    import sqlite3

    from memory import load_config

    store_dir = unindexed_store  # the old ledger must be the only one
    state = store_dir / ".notes"
    state.mkdir()
    db = sqlite3.connect(state / "ledger.sqlite")
    db.execute("CREATE TABLE entries (note TEXT NOT NULL, entry TEXT NOT NULL, hash TEXT NOT "
               "NULL, text TEXT NOT NULL, date TEXT NOT NULL DEFAULT '', seen REAL NOT NULL, "
               "PRIMARY KEY (note, entry))")
    from memory.state.history_records import entry_hash, normalized

    note = parse_note((store_dir / f"{NOTE}.md").read_text())
    db.executemany("INSERT INTO entries VALUES (?, ?, ?, ?, ?, 0)",
                   [(NOTE, e.id, entry_hash(e.text), normalized(e.text), e.date or "")
                    for e in note.entries])
    db.commit()
    db.close()
    notes = Notes(load_config(store_dir), notify=lambda _: None)
    try:
        assert notes.check() == []
        _swap_first_two_entries(store_dir / f"{NOTE}.md")
        assert "history-moved" in {p.code for p in notes.check()}
    finally:
        notes.close()
