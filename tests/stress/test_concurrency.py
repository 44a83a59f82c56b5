"""Concurrent writers through the CLI and the MCP server: nothing lost, nothing mixed.

The eight writers append for NOTES_STRESS_SECONDS each, all at once (stress/helpers.py).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from conftest import worker_processes
from memory import Notes, load_config
from memory.model.note import parse_note
from stress.helpers import NOTES_BIN, SECONDS, Figures, stdio_session, text_of

TARGETS = [f"shared/note-{n}" for n in range(8)]
CLI_WRITERS = 2
MCP_WRITERS = 6
AT_LEAST = 5  # entries each writer appends, however slow the machine


def _cli_writer(store: Path, worker: int, until: float, written: list[str],
                errors: list[str]) -> None:
    env = {**os.environ, "NOTES_DIR": str(store)}
    i = 0
    while time.monotonic() < until or i < AT_LEAST:
        target = TARGETS[(i + worker) % len(TARGETS)]
        title = f"cli{worker}-{i}"
        result = subprocess.run([str(NOTES_BIN), "log", target, "--title", title, "--date",
                                 "2026-11-30"], input=f"body {title}\n", capture_output=True,
                                text=True, env=env, timeout=120)
        if result.returncode != 0:
            errors.append(result.stderr)
        written.append(title)
        i += 1


async def _mcp_writer(store: Path, worker: int, log: Path, until: float, written: list[str],
                      errors: list[str]) -> None:
    with open(log, "w") as errlog:
        async with stdio_session(store, errlog) as session:
            i = 0
            while time.monotonic() < until or i < AT_LEAST:
                title = f"mcp{worker}-{i}"
                result = await session.call_tool("append_history", {
                    "note": TARGETS[(i + worker) % len(TARGETS)], "title": title,
                    "text": f"body {title}", "date": "2026-11-30"})
                if result.is_error:
                    errors.append(text_of(result))
                written.append(title)
                i += 1


async def _all_mcp(store: Path, tmp: Path, until: float, written: list[str],
                   errors: list[str]) -> None:
    await asyncio.gather(*(_mcp_writer(store, w, tmp / f"mcp{w}.log", until, written, errors)
                           for w in range(MCP_WRITERS)))


@pytest.mark.slow(40)
def test_eight_writers_through_cli_and_mcp(store_dir: Path, tmp_path: Path,
                                           figures: Figures) -> None:
    """Concurrent writers: 2 CLI and 6 MCP server processes append to the same 8 notes"""
    notes = Notes(load_config(store_dir), notify=lambda _: None)
    for target in TARGETS:
        notes.create_note(target, target.split("/")[1], [])
    written: list[str] = []
    errors: list[str] = []
    started = time.monotonic()
    until = started + SECONDS
    threads = [threading.Thread(target=_cli_writer, args=(store_dir, w, until, written,
                                                          errors))
               for w in range(CLI_WRITERS)]
    for thread in threads:
        thread.start()
    asyncio.run(_all_mcp(store_dir, tmp_path, until, written, errors))
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    assert errors == []
    expected = set(written)
    found: list[str] = []
    for target in TARGETS:
        note = parse_note(notes.store.path_for(target).read_text())
        assert not [p for p in note.problems if p.severity == "error"]
        assert all(e.text.split("\n")[1] == f"body {e.title}" for e in note.entries)
        found += [e.title for e in note.entries]
    assert sorted(found) == sorted(expected)
    assert notes.check() == []
    cli = sum(t.startswith("cli") for t in written)
    figures.add("writers (processes)", f"{CLI_WRITERS} CLI + {MCP_WRITERS} MCP servers, "
                f"all writing for {SECONDS:.0f} s")
    figures.add("entries appended (CLI / MCP) / present afterwards",
                f"{len(expected)} ({cli} / {len(expected) - cli}) / {len(found)}")
    figures.add("notes that fail to parse", 0)
    figures.add("wall time", f"{elapsed:.1f} s ({len(expected) / elapsed:.1f} appends/s)")


def _state_writer(store: str, state: str, worker: int, rounds: int) -> None:
    notes = Notes(load_config(store, state), notify=lambda _: None)
    for r in range(rounds):
        notes.write_state("shared/alpha", _body(worker, r))
    notes.close()


def _body(worker: int, rnd: int) -> str:
    return "\n".join(f"- writer {worker} round {rnd} line {n}" for n in range(40))


STATE_ROUNDS = max(8, round(1.5 * SECONDS))  # 8 by default (the floor), 90 for docs/reliability.md


@pytest.mark.slow(20)
def test_concurrent_write_state_last_one_wins_whole(store_dir: Path, figures: Figures) -> None:
    """Concurrent write_state: 8 processes replace the same state, 1.5 times a stress second each"""
    notes = Notes(load_config(store_dir), notify=lambda _: None)
    notes.create_note("shared/alpha", "Alpha", [])
    notes.append_history("shared/alpha", "Kept", "this entry must survive", "2026-01-01")
    path = notes.store.path_for("shared/alpha")
    history = parse_note(path.read_text()).history
    ctx = worker_processes()
    workers = [ctx.Process(target=_state_writer, args=(str(store_dir),
                                                      str(notes.config.state_dir), w,
                                                      STATE_ROUNDS))
               for w in range(8)]
    for w in workers:
        w.start()
    snapshots, mixed = 0, 0
    valid = {_body(w, r) for w in range(8) for r in range(STATE_ROUNDS)}
    while any(w.is_alive() for w in workers):
        state = parse_note(path.read_text()).state
        body = state.text.split("\n", 1)[1].strip() if state else ""
        snapshots += 1
        mixed += body not in valid and body != ""
        time.sleep(0.002)  # a reader that looks often, not one that takes a core
    for w in workers:
        w.join(timeout=120)
        assert w.exitcode == 0
    final = parse_note(path.read_text())
    assert final.state is not None and final.state.text.split("\n", 1)[1].strip() in valid
    assert final.history is not None and history is not None
    assert final.history.text == history.text
    assert mixed == 0
    figures.add("writes", 8 * STATE_ROUNDS)
    figures.add("snapshots read while writing / mixed states seen", f"{snapshots} / {mixed}")
