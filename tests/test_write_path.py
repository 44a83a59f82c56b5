"""The one write path (memory/state/commit.py): one parse per write.

A write reads the note (the snapshot its edit starts from) and writes a new text; the new text
is parsed once, by the edit that verifies it, and that parse is what the ledger and the index
get, and what the next read of the same bytes finds (the store keeps parsed notes by their
bytes' hash). So a `notes log` in a fresh process parses two texts, each once (the note as it
was, the note as written), and a write in a process that has the note parsed already (the MCP
server, a second write) parses one. They used to parse three and two: the edit's parse was
thrown away and the written text parsed again for the ledger and the index.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import RunCli
from memory import Notes
from memory.model import note as note_module


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every full parse of a note from now on, by the digest of the text parsed (the store
    imports the parser when it parses, and Note.reparsed calls it through its module)."""
    parsed: Counter[str] = Counter()
    real: Callable[..., note_module.Note] = note_module.parse_note

    def counted(text: str, *args: object, **kwargs: object) -> note_module.Note:
        parsed[hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()] += 1
        return real(text, *args, **kwargs)

    monkeypatch.setattr(note_module, "parse_note", counted)
    return parsed


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_notes_log_parses_the_note_before_and_the_note_written_once_each(
        run_cli: RunCli, store_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = store_dir / "infra" / "redis.md"
    before = _digest(path)
    parsed = _count_parses(monkeypatch)
    result = run_cli("log", "infra/redis", "--title", "Calabaza", "--date", "2026-12-01",
                     input="The pumpkin cache was warmed.\n")
    assert result.returncode == 0, result.stderr
    assert parsed == Counter({before: 1, _digest(path): 1}), parsed


@pytest.mark.parametrize("write", ["log", "state"])
def test_a_write_of_a_note_already_parsed_parses_once(
        notes: Notes, monkeypatch: pytest.MonkeyPatch, write: str) -> None:
    """In a process that read the note already (the MCP server), a write parses only the
    text it writes; and the next read of the note parses nothing."""
    notes.load_note("infra/redis")
    parsed = _count_parses(monkeypatch)
    if write == "log":
        notes.append_history("infra/redis", "Calabaza", "Warmed.", "2026-12-01")
    else:
        notes.write_state("infra/redis", "- Remolacha is the state now.\n")
    path = notes.store.path_for("infra/redis")
    assert parsed == Counter({_digest(path): 1})
    notes.load_note("infra/redis")
    assert sum(parsed.values()) == 1, parsed
