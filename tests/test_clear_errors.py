"""Inputs a user can type end in one clear error, never a traceback (issue 13), through the
real CLI and the MCP tools; and files in odd but valid shapes keep their shape."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from conftest import NOTES_BIN, RunCli, copy_state
from memory import Notes, load_config
from memory.fronts.mcp.server import create_server
from memory.model.note import parse_note

NOTE = "infra/redis"
CJK_ID = "記" * 100  # 300 bytes in UTF-8: over the file-name limit, under 200 characters


def _clear(result: subprocess.CompletedProcess[str], status: int = 1) -> str:
    assert result.returncode == status, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("Error: ") or "Error: " in result.stderr
    return result.stderr


def test_a_huge_section_number_is_a_clear_error(run_cli: RunCli) -> None:
    message = _clear(run_cli("read", NOTE, "#" + "9" * 5000))
    assert "no section" in message and len(message) < 1500


def test_a_note_id_longer_than_a_file_name_can_be(run_cli: RunCli) -> None:
    for args in (["read", CJK_ID], ["new", CJK_ID, "--title", "x"], ["map", CJK_ID]):
        message = _clear(run_cli(*args))
        assert "bytes" in message and "shorter" in message


def test_invalid_utf8_in_title_or_stdin(store_dir: Path) -> None:
    env = {**os.environ, "NOTES_DIR": str(store_dir)}
    bad_title = subprocess.run([os.fsencode(NOTES_BIN), b"log", NOTE.encode(), b"--title",
                                b"caf\xe9"], input=b"body\n", capture_output=True, env=env,
                               timeout=120)
    assert bad_title.returncode == 1 and b"Traceback" not in bad_title.stderr
    assert b"not UTF-8" in bad_title.stderr
    bad_body = subprocess.run([str(NOTES_BIN), "log", NOTE, "--title", "ok"],
                              input=b"caf\xe9 au lait\n", capture_output=True, env=env,
                              timeout=120)
    assert bad_body.returncode == 2 and b"Traceback" not in bad_body.stderr
    assert b"not UTF-8" in bad_body.stderr
    assert b"caf" not in (store_dir / f"{NOTE}.md").read_bytes().split(b"## History")[-1][-200:]


def test_echoed_inputs_are_cut_to_an_excerpt(run_cli: RunCli) -> None:
    long_section = "s" * 5000
    message = _clear(run_cli("read", NOTE, long_section))
    assert long_section not in message and "…" in message
    message = _clear(run_cli("log", NOTE, "--title", "t", "--date", "2" * 3000, input="b\n"))
    assert "2" * 200 not in message


async def test_the_same_inputs_through_mcp_are_plain_tool_errors(store_dir: Path) -> None:
    async with Client(create_server(load_config(store_dir))) as client:
        for tool, args in (("read_section", {"note": NOTE, "section": "#" + "9" * 5000}),
                           ("read_section", {"note": CJK_ID, "section": "state"}),
                           ("create_note", {"note": CJK_ID, "title": "x"}),
                           ("read_section", {"note": NOTE, "section": "s" * 5000})):
            with pytest.raises(ToolError) as info:
                await client.call_tool(tool, args)
            message = str(info.value)
            assert len(message) < 1500 and "Traceback" not in message, message


# -- odd but valid files keep their shape ---------------------------------------------
def test_a_bom_prefixed_note_keeps_its_front_matter(notes: Notes) -> None:
    path = notes.store.path_for("bom")
    path.write_bytes("\ufeff---\ntitle: Con BOM\ntags: [x]\n---\n# Con BOM\n\n## Current "
                     "state\n- s\n\n## History\n".encode())
    note = parse_note(path.read_text(encoding="utf-8"))
    assert note.meta.get("title") == "Con BOM" and note.front_matter
    notes.append_history("bom", "entry", "body", "2026-11-01")
    notes.write_state("bom", "- new state")
    raw = path.read_bytes()
    assert raw.startswith("\ufeff---\ntitle: Con BOM\n".encode())
    assert notes.suggest("Con BOM").hits[0].note == "bom"
    assert [p.code for p in notes.check() if p.path == "bom.md"] == []


def test_writes_to_a_crlf_note_keep_crlf(notes: Notes) -> None:
    path = notes.store.path_for("crlf")
    path.write_bytes(b"---\r\ntitle: CRLF\r\n---\r\n# CRLF\r\n\r\n## Current state\r\n- s\r\n"
                     b"\r\n## History\r\n### 2026-11-01 \xc2\xb7 one\r\nbody\r\n")
    notes.append_history("crlf", "two", "line one\nline two", "2026-11-02")
    notes.write_state("crlf", "- new\n- state")
    raw = path.read_bytes()
    assert b"\n" not in raw.replace(b"\r\n", b"")  # every line still ends in CRLF
    assert b"### 2026-11-02 \xc2\xb7 two\r\nline one\r\nline two\r\n" in raw
    assert b"## Current state\r\n- new\r\n- state\r\n" in raw


def test_the_state_folder_is_never_taken_for_notes(tmp_path: Path, store_dir: Path) -> None:
    """A state folder inside the notes folder (NOTES_STATE_DIR, not hidden) holds Markdown
    of its own (what a restore took out): it is not indexed, and the watcher ignores it."""
    from memory.state.watch import Debouncer

    state = copy_state(store_dir, store_dir / "state")  # the example's index, not built again
    notes = Notes(load_config(store_dir, state), notify=lambda _: None)
    try:
        (state / "taken-out").mkdir(parents=True)
        (state / "taken-out" / "x.md").write_text("# X\n\n## State\n- zanahoria\n")
        assert not [n for n in notes.store.note_ids() if n.startswith("state/")]
        assert not notes.suggest("zanahoria").hits
        seen: list[list[Path]] = []
        debouncer = Debouncer(store_dir, seen.append, quiet=0.0, ignore=state)

        class Event:
            is_directory = False
            event_type = "modified"
            src_path = str(state / "taken-out" / "x.md")

        debouncer.on_any_event(Event())  # type: ignore[arg-type]
        time.sleep(0.01)
        assert debouncer.due() == []
    finally:
        notes.close()
