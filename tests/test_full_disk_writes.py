"""Writes with the state folder on a full disk (issue 13, item 6): the note is written, the
write says so (and that the index will catch up), a retry is never needed, and the server
neither wedges nor refuses to start. The disk is a real tmpfs, filled to the last byte.

The CLI runs as real processes here: Whoosh's writes that fail on a full disk leave files
open for the garbage collector, which an in-process run would see as warnings."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from disks import fill_disk, mounted_tmpfs
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import ROOT, RunCli, copy_state
from memory.model.note import parse_note
from reliability import Figures

NOTE = "infra/redis"


@pytest.fixture
def full_state(run_cli_process: RunCli, store_dir: Path, tmp_path: Path) -> Iterator[Path]:
    """The store's state (index, ledger, caches, a lock file) on a tmpfs, then filled."""
    with mounted_tmpfs(tmp_path / "disk", 48) as disk:
        env = {"NOTES_STATE_DIR": str(copy_state(store_dir, disk))}  # the index, not rebuilt
        assert run_cli_process("log", NOTE, "--title", "before", input="room left\n",
                               env=env).returncode == 0
        assert run_cli_process("suggest", "redis", env=env).returncode == 0
        fill_disk(disk)
        yield disk


def _entries(store_dir: Path, title: str) -> int:
    note = parse_note((store_dir / f"{NOTE}.md").read_text())
    return sum(e.title == title for e in note.entries)


def test_cli_writes_land_and_say_the_index_will_catch_up(
        run_cli_process: RunCli, store_dir: Path, full_state: Path, figures: Figures) -> None:
    """Writes with the state folder on a full disk"""
    env = {"NOTES_STATE_DIR": str(full_state)}
    logged = run_cli_process("log", NOTE, "--title", "on a full disk", input="still written\n",
                             env=env)
    assert logged.returncode == 0, logged.stderr
    assert "Traceback" not in logged.stderr and "wrote infra/redis#" in logged.stdout
    assert _entries(store_dir, "on a full disk") == 1
    state = run_cli_process("state", NOTE, input="- a state written on a full disk\n", env=env)
    assert state.returncode == 0 and "Traceback" not in state.stderr, state.stderr
    checked = run_cli_process("check", env=env)
    assert "Traceback" not in checked.stderr, checked.stderr
    (full_state / "filler").unlink()
    found = run_cli_process("suggest", "written on a full disk", env=env)
    assert found.returncode == 0 and NOTE in found.stdout  # the index caught up
    figures.add("`notes log` / `notes state` on a full disk", "exit 0, written once, "
                "no traceback")
    figures.add("`notes check` on a full disk", f"exit {checked.returncode}, no traceback")


async def _call(session: ClientSession, tool: str, args: dict[str, object],
                timings: list[float]) -> str:
    started = time.monotonic()
    result = await asyncio.wait_for(session.call_tool(tool, args), timeout=25)
    timings.append(time.monotonic() - started)
    assert not result.is_error, result.content
    return str(getattr(result.content[0], "text", ""))


async def _server_on_full_disk(store_dir: Path, state: Path, timings: list[float]) -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(ROOT / "mcp_server.py")],
                                   env={**os.environ, "NOTES_DIR": str(store_dir),
                                        "NOTES_STATE_DIR": str(state)})
    with open(state.parent / "server.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for n in range(3):
                    text = await _call(session, "append_history", {
                        "note": NOTE, "title": f"mcp full {n}", "text": "written"}, timings)
                    assert text.startswith("wrote "), text
                await _call(session, "suggest", {"query": "redis"}, timings)
                await _call(session, "read_section", {"note": NOTE, "section": "state"},
                            timings)


def test_the_server_starts_writes_and_answers_on_a_full_disk(
        store_dir: Path, full_state: Path, figures: Figures) -> None:
    """Writes with the state folder on a full disk"""
    timings: list[float] = []
    asyncio.run(_server_on_full_disk(store_dir, full_state, timings))
    assert [_entries(store_dir, f"mcp full {n}") for n in range(3)] == [1, 1, 1]
    log = (full_state.parent / "server.log").read_text()
    assert "Traceback" not in log, log
    figures.add("MCP server started on a full disk; append_history x3", "each written once, "
                "reported done (no retry, no duplicate)")
    figures.add("slowest MCP call on a full disk (was 60 s, a wedged lock)",
                f"{max(timings):.2f} s")
