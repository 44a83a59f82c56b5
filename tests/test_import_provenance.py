"""Where an imported note came from is kept in the state folder (`<state>/imports.json`), not
in the note (issue #35, item 5): through the real CLI, a fresh import writes no provenance
keys into the note; a note imported by an older version (`imported_from`, `imported_sha256`,
`imported_on` in its front matter) keeps working with `notes import` and the prompt hook's
look, and its next import or sync moves those keys into the record, once; and the source
headings an import keeps verbatim inside an HTML comment are neither read nor recalled."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import NOTES_BIN, copy_initialised
from memory.model.note import parse_note
from memory.services.importer import claude_project_slug

RELEASE = """---
name: Release train
type: project
---
# Release train

Releases go out every second Tuesday from the `release` branch.
Freeze starts on the Friday before each release.

- 2026-02-24: release 4.1 delayed a day, the checkout e2e suite was flaky.
- 2026-03-10: release 4.2 shipped; the payment retry flag is on for everyone.

## 2026-03-20 · Hotfix 4.2.1
Rolled back the retry flag for PayPal only; see INC-88.
"""
CHANGED = RELEASE.replace("for everyone.\n", "for everyone.\n"
                          "- 2026-04-07: release 4.3 shipped with the new invoice layout.\n")
NOTE = "claude/shop/memory/release"
PROVENANCE = ("imported_from", "imported_sha256", "imported_on")


def notes(*args: str, cwd: Path, store: Path, input: str | None = None
          ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    return subprocess.run([str(NOTES_BIN), "--notes", str(store), *args], cwd=cwd, env=env,
                          input=input, capture_output=True, text=True, timeout=120)


@pytest.fixture
def imported(tmp_path: Path, initialised_store: Path) -> tuple[Path, Path, Path]:
    """A project whose Claude Code memory (MEMORY.md and release.md) and CLAUDE.md were
    imported into a new store."""
    project = tmp_path / "work" / "shop"
    (project / ".git").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("# Shop\n\nRun `make test` before pushing.\n")
    memory = (Path(os.environ["HOME"]) / ".claude" / "projects" / claude_project_slug(project)
              / "memory")
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("- [Release train](release.md): freeze dates\n")
    (memory / "release.md").write_text(RELEASE)
    store = tmp_path / "store"
    copy_initialised(initialised_store, store)  # as `notes init` makes it (conftest)
    made = notes("import", "--claude", cwd=project, store=store)
    assert made.returncode == 0 and "3 notes created" in made.stdout, made.stdout + made.stderr
    return store, project, memory


def record(store: Path) -> dict[str, dict[str, object]]:
    sources: dict[str, dict[str, object]] = json.loads(
        (store / ".notes" / "imports.json").read_text())["sources"]
    return sources


def imported_texts(store: Path) -> dict[str, str]:
    """note id -> text, of every note an import made (as the record names them)."""
    return {str(s["note"]): (store / f"{s['note']}.md").read_text()
            for s in record(store).values()}


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def without_provenance(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith(PROVENANCE))


def old_style(text: str, source: Path) -> str:
    """The note as the versions before this record made it: the three keys last in its
    front matter (the note's own text otherwise)."""
    lines = without_provenance(text).splitlines(keepends=True)
    close = lines.index("---\n", 1)
    keys = [f"imported_from: {source}\n", f"imported_sha256: {sha(source)}\n",
            "imported_on: '2026-04-01'\n"]
    return "".join(lines[:close] + keys + lines[close:])


def make_old_style(store: Path) -> dict[str, str]:
    """Every imported note rewritten as an older version left it; note id -> new text."""
    texts = {}
    for path, source in record(store).items():
        note = store / f"{source['note']}.md"
        note.write_text(old_style(note.read_text(), Path(path)))
        texts[str(source["note"])] = note.read_text()
    return texts


def test_a_fresh_import_writes_no_provenance_into_the_note(
        imported: tuple[Path, Path, Path]) -> None:
    store, project, memory = imported
    texts = imported_texts(store)
    assert set(texts) == {NOTE, "claude/shop/memory/MEMORY", "claude/shop/CLAUDE"}
    for note, text in texts.items():
        meta = parse_note(text).meta
        assert not set(PROVENANCE) & set(meta), (note, meta)
        assert meta["project"] == str(project)  # the project is the note's own: it stays
        assert str(memory.parent) not in text and str(project / "CLAUDE.md") not in text
    kept = record(store)[str(memory / "release.md")]
    assert kept["note"] == NOTE and kept["sha256"] == sha(memory / "release.md")
    assert kept["live"] is True and len(str(kept["on"])) == 10


def test_an_old_style_note_moves_its_keys_to_the_record_on_the_next_import(
        imported: tuple[Path, Path, Path]) -> None:
    store, project, memory = imported
    clean = imported_texts(store)
    make_old_style(store)
    (store / ".notes" / "imports.json").unlink()  # imported before the record was kept
    moved = notes("import", "--claude", "--json", cwd=project, store=store)
    assert moved.returncode == 0, moved.stderr
    items = json.loads(moved.stdout)["items"]
    assert {i["note"]: i["action"] for i in items} == {n: "updated" for n in clean}
    assert all("provenance" in i["reason"] for i in items), items
    assert imported_texts(store) == clean  # the keys left, not a byte more
    assert record(store)[str(memory / "release.md")]["sha256"] == sha(memory / "release.md")

    make_old_style(store)  # the summary line says what happened, not "changed at the source"
    told = notes("import", "--claude", cwd=project, store=store)
    assert told.returncode == 0, told.stderr
    summary = told.stdout.strip().splitlines()[-1]
    assert "0 updated (changed at the source)" in summary, summary
    assert f"{len(clean)} with their provenance moved to the state folder" in summary, summary
    assert imported_texts(store) == clean

    again = notes("import", "--claude", "--json", cwd=project, store=store)
    assert {i["action"] for i in json.loads(again.stdout)["items"]} == {"unchanged"}
    assert imported_texts(store) == clean  # idempotent
    assert notes("check", cwd=project, store=store).returncode == 0


def test_an_old_style_note_changed_at_the_source_is_merged_by_the_hook_and_loses_its_keys(
        imported: tuple[Path, Path, Path]) -> None:
    store, project, memory = imported
    texts = make_old_style(store)  # imported by a version that kept both
    (memory / "release.md").write_text(CHANGED)
    payload = json.dumps({"prompt": "when did release 4.3 ship?", "session_id": "s",
                          "cwd": str(project), "hook_event_name": "UserPromptSubmit"})
    asked = notes("hook", "user-prompt", cwd=project, store=store, input=payload)
    assert asked.returncode == 0, asked.stderr
    merged = (store / f"{NOTE}.md").read_text()
    assert "4.3 shipped" in merged
    assert not set(PROVENANCE) & set(parse_note(merged).meta)
    assert record(store)[str(memory / "release.md")]["sha256"] == sha(memory / "release.md")
    untouched = imported_texts(store)  # the notes whose source did not change: as they were
    assert untouched["claude/shop/CLAUDE"] == texts["claude/shop/CLAUDE"]

    moved = notes("import", "--claude", "--json", cwd=project, store=store)
    actions = {i["note"]: i["action"] for i in json.loads(moved.stdout)["items"]}
    assert actions == {NOTE: "unchanged", "claude/shop/CLAUDE": "updated",
                       "claude/shop/memory/MEMORY": "updated"}
    assert imported_texts(store)[NOTE] == merged
    assert not any(k in text for text in imported_texts(store).values() for k in PROVENANCE)
    again = notes("import", "--claude", "--json", cwd=project, store=store)
    assert {i["action"] for i in json.loads(again.stdout)["items"]} == {"unchanged"}


def test_a_lost_record_duplicates_no_source(imported: tuple[Path, Path, Path]) -> None:
    """The record is the only provenance now: lost, the notes at the ids their sources get
    and the versions kept in the state folder find the notes again, changed or not."""
    store, project, memory = imported
    clean = imported_texts(store)
    (store / ".notes" / "imports.json").unlink()
    again = notes("import", "--claude", "--json", cwd=project, store=store)
    assert again.returncode == 0, again.stderr
    assert {i["action"] for i in json.loads(again.stdout)["items"]} == {"unchanged"}
    assert imported_texts(store) == clean

    (store / ".notes" / "imports.json").unlink()
    (memory / "release.md").write_text(CHANGED)
    changed = notes("import", "--claude", "--json", cwd=project, store=store)
    actions = {i["note"]: i["action"] for i in json.loads(changed.stdout)["items"]}
    assert actions[NOTE] == "updated" and "created" not in actions.values(), actions
    merged = parse_note((store / f"{NOTE}.md").read_text())
    assert [sum(f"{n} shipped" in e.text for e in merged.entries) for n in ("4.2", "4.3")] \
        == [1, 1]  # the new line once, the old one not twice
    assert "State before import" not in merged.text  # compared with the version kept
    assert sorted(p.name for p in (store / "claude/shop/memory").iterdir()) == [
        "MEMORY.md", "release.md"]


def test_an_unreadable_record_is_kept_aside_and_said(imported: tuple[Path, Path, Path]
                                                     ) -> None:
    """A damaged imports.json is not silently replaced: it is moved aside byte for byte,
    the import says where, and rebuilds the record from the notes (nothing twice)."""
    store, project, _ = imported
    clean = imported_texts(store)
    damaged = b'{"format": 1, "sources": {"/x": [1, 2'  # cut short by a full disk
    (store / ".notes" / "imports.json").write_bytes(damaged)
    dry = notes("import", "--claude", "--dry-run", cwd=project, store=store)
    assert "imports.json cannot be read" in dry.stdout, dry.stdout
    assert (store / ".notes" / "imports.json").read_bytes() == damaged  # a dry run writes nothing
    again = notes("import", "--claude", cwd=project, store=store)
    assert again.returncode == 0, again.stderr
    aside = list((store / ".notes").glob("imports.json.corrupt-*"))
    assert [p.read_bytes() for p in aside] == [damaged]
    assert f"note: {aside[0]} could not be read" in again.stdout, again.stdout
    assert imported_texts(store) == clean
    assert "0 notes created" in again.stdout
    assert json.loads((store / ".notes" / "imports.json").read_text())["sources"]


def test_kept_source_headings_are_neither_read_nor_recalled(
        imported: tuple[Path, Path, Path]) -> None:
    store, project, memory = imported
    text = (store / f"{NOTE}.md").read_text()
    assert "<!-- imported heading, kept as it was:\n## 2026-03-20 · Hotfix 4.2.1\n-->\n" in text
    read = notes("read", NOTE, "2026-03-20", "--json", cwd=project, store=store)
    assert read.returncode == 0, read.stderr
    section = json.loads(read.stdout)
    assert section["text"] == ("### 2026-03-20 · Hotfix 4.2.1\n"
                               "Rolled back the retry flag for PayPal only; see INC-88.\n")
    mapped = notes("map", NOTE, "--json", cwd=project, store=store)
    rows = {r["id"]: r for r in json.loads(mapped.stdout)["rows"]}
    assert rows[section["section"]]["tokens"] == section["tokens"]
    recalled = notes("recall", "hotfix paypal retry flag", cwd=project, store=store)
    assert recalled.returncode == 0, recalled.stderr
    assert "Rolled back the retry flag for PayPal" in recalled.stdout
    assert "<!--" not in recalled.stdout and "kept as it was" not in recalled.stdout
