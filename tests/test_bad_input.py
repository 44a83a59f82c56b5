"""Broken files are reported with file and line, and never stop the rest from indexing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import RunCli
from memory import InvalidArgument, NoteFormatError, Notes, load_config

GOOD = "---\ntitle: Good note\n---\n# Good note\n\n## Current state\n- zanahoria azul\n"
BROKEN: dict[str, bytes] = {
    "bad-yaml.md": b"---\ntitle: [unclosed\ntags: x\n---\n# Bad\n\n"
                   b"## Current state\n- pepino verde\n",
    "no-state.md": b"---\ntitle: No state\n---\n# No state\n\n## History\n"
                   b"### 2026-01-01 \xc2\xb7 Only history\n- tomate rojo\n",
    "latin1.md": "---\ntitle: Latin\n---\n# Latin\n\n## Estado\n- configuración berenjena\n"
                 .encode("latin-1"),
    "empty.md": b"",
    "binary.md": bytes(range(256)) * 40,
}


@pytest.fixture
def messy_store(tmp_path: Path) -> Path:
    root = tmp_path / "messy"
    root.mkdir()
    (root / "good.md").write_text(GOOD)
    for name, data in BROKEN.items():
        (root / name).write_bytes(data)
    line = "- calabaza " + "x" * 90 + "\n"
    big = "---\ntitle: Huge\n---\n# Huge\n\n## Current state\n" + line * (20_000_000 // len(line))
    (root / "huge.md").write_text(big)
    return root


def test_check_reports_each_broken_file(messy_store: Path, run_cli: RunCli) -> None:
    result = run_cli("check", "--json", notes_dir=messy_store)
    assert result.returncode == 1
    found = {(p["path"], p["code"]) for p in json.loads(result.stdout)}
    assert ("bad-yaml.md", "bad-yaml") in found
    assert ("no-state.md", "missing-state") in found
    assert ("latin1.md", "not-utf8") in found
    assert ("empty.md", "empty") in found
    assert ("binary.md", "binary") in found
    assert ("huge.md", "too-large") in found
    assert not [p for p in json.loads(result.stdout) if p["path"] == "good.md"]
    text = run_cli("check", notes_dir=messy_store).stdout
    assert "latin1.md:7: error: bytes that are not UTF-8" in text


def test_broken_files_never_stop_indexing(messy_store: Path, tmp_path: Path) -> None:
    notes = Notes(load_config(messy_store), notify=lambda _: None)
    assert notes.suggest("zanahoria").hits[0].note == "good"
    assert notes.suggest("pepino").hits[0].note == "bad-yaml"  # indexed as far as it can be
    assert notes.suggest("tomate").hits[0].note == "no-state"
    assert notes.suggest("berenjena configuracion").hits[0].note == "latin1"
    assert notes.suggest("calabaza").hits[0].note == "huge"  # its start is indexed
    assert len(notes.list_notes()) == 7


def test_tools_refuse_to_write_into_a_file_they_would_damage(messy_store: Path) -> None:
    notes = Notes(load_config(messy_store), notify=lambda _: None)
    before = (messy_store / "latin1.md").read_bytes()
    with pytest.raises(NoteFormatError, match="latin1.md:7"):
        notes.append_history("latin1", "x", "y")
    assert (messy_store / "latin1.md").read_bytes() == before
    with pytest.raises(NoteFormatError):
        notes.write_state("binary", "- x")


@pytest.mark.parametrize("body", ["a\x00b", "bell\x07", "## Heading", "# Top"])
def test_bodies_that_would_break_a_note_are_refused(notes: Notes, body: str) -> None:
    with pytest.raises(InvalidArgument):
        notes.append_history("howto/deploy-production", "x", body)


def test_unclosed_fence_in_an_entry_is_refused(notes: Notes) -> None:
    note = "howto/deploy-production"
    notes.write_state(note, "- short state")
    with pytest.raises(InvalidArgument, match="unclosed"):
        notes.write_state(note, "```\nunclosed fence")
    with pytest.raises(InvalidArgument, match="unclosed"):
        notes.append_history(note, "open fence", "```bash\nls")
    written = notes.append_history(note, "closed fence", "```bash\nls\n```")
    assert notes.read_section(note, written.section).text.rstrip().endswith("```")
    assert notes.read_section(note, "state").text.endswith("- short state\n\n")
