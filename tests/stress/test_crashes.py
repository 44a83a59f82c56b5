"""Crashes and damage: a writer killed at random moments; an index broken under a server."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest

from memory import Notes, load_config
from memory.model.note import parse_note
from stress.helpers import SECONDS, Figures, stdio_session, text_of

NOTE = "crash/target"
KILLS = max(50, round(10 * SECONDS))  # 50 by default (the floor), 600 for docs/reliability.md


def _writer(store: str, state: str, start: int) -> None:
    """Append entries and rewrite the state, as fast as it can, until killed."""
    notes = Notes(load_config(store, state), notify=lambda _: None)
    for i in range(start, start + 10_000):
        if i % 3 == 0:
            notes.write_state(NOTE, _state(i))
        else:
            notes.append_history(NOTE, f"e{i}", _entry_body(i), date="2026-11-30")


def _state(i: int) -> str:
    return "\n".join(f"- state {i} line {n}" for n in range(30))


def _entry_body(i: int) -> str:
    return "\n".join(f"body of e{i} line {n}" for n in range(20))


def _check_note(path: Path, previous: list[str]) -> list[str]:
    """The note parses, keeps every earlier entry, and holds only whole entries and states."""
    note = parse_note(path.read_text())
    assert not [p for p in note.problems if p.severity == "error"], note.problems
    titles = [e.title for e in note.entries]
    assert titles[:len(previous)] == previous, "an entry was lost"
    for entry in note.entries:
        if entry.title.startswith("e"):
            assert entry.text.split("\n", 1)[1].rstrip() == _entry_body(int(entry.title[1:]))
    body = note.state.text.split("\n", 1)[1].strip() if note.state else ""
    assert body == "" or body == _state(int(body.split()[2])), "a mixed state"
    return titles


@pytest.mark.slow(15)
def test_sigkill_at_random_moments(store_dir: Path, figures: Figures) -> None:
    """Crashes: a writer killed with SIGKILL at random moments (10 per NOTES_STRESS_SECONDS)"""
    notes = Notes(load_config(store_dir), notify=lambda _: None)
    notes.create_note(NOTE, "Crash target", [])
    path = notes.store.path_for(NOTE)
    ctx = multiprocessing.get_context("fork")
    rng = random.Random(20261130)
    titles: list[str] = []
    started = time.monotonic()
    for kill in range(KILLS):
        child = ctx.Process(target=_writer, args=(str(store_dir), str(notes.config.state_dir),
                                                 kill * 10_000))
        child.start()
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(child.pid or 0, signal.SIGKILL)
        child.join()
        titles = _check_note(path, titles)
    elapsed = time.monotonic() - started
    leftovers = list(path.parent.glob(".*.tmp"))
    hits = notes.suggest("crash target").hits  # the index answers (rebuilt if it must)
    assert hits and hits[0].note == NOTE
    notes.append_history(NOTE, "after", "the store still takes writes", date="2026-11-30")
    assert not list(path.parent.glob(".*.tmp")), "stale temp files are cleaned by the next write"
    assert notes.check() == []
    figures.add("SIGKILLs", KILLS)
    figures.add("entries written before the kills / lost", f"{len(titles)} / 0")
    figures.add("notes that failed to parse / mixed states", "0 / 0")
    figures.add("temp files left by killed writers (removed by the next write)", len(leftovers))
    figures.add("index answers afterwards", "yes")
    figures.add("wall time", f"{elapsed:.1f} s")


def _damage(index_dir: Path, how: str) -> None:
    for path in index_dir.iterdir():
        if how == "truncate" and path.suffix in (".seg", ".toc"):
            path.write_bytes(path.read_bytes()[:16])
        elif how == "delete" and path.suffix == ".seg":
            path.unlink()
        elif how == "wipe":
            path.unlink()


async def _damage_while_serving(store: Path, log: Path, figures: Figures) -> None:
    index_dir = store / ".notes" / "index"
    with open(log, "w") as errlog:
        async with stdio_session(store, errlog) as session:
            baseline = text_of(await session.call_tool("suggest", {"query": "redis eviction"}))
            for how in ("truncate", "delete", "wipe"):
                _damage(index_dir, how)
                started = time.monotonic()
                again = await session.call_tool("suggest", {"query": "redis eviction"})
                elapsed = time.monotonic() - started
                assert not again.is_error, text_of(again)
                assert text_of(again) == baseline
                figures.add(f"index {how}d while serving: next suggest answered correctly in",
                            f"{elapsed:.2f} s")


@pytest.mark.slow(23)
def test_damaged_index_while_the_server_runs(store_dir: Path, tmp_path: Path,
                                             figures: Figures) -> None:
    """A damaged index: files truncated or deleted while the server runs"""
    Notes(load_config(store_dir), notify=lambda _: None).refresh_index()
    log = tmp_path / "server.log"
    asyncio.run(_damage_while_serving(store_dir, log, figures))
    text = log.read_text()
    assert "Traceback" not in text
    messages = [line for line in text.splitlines() if "building the index" in line]
    assert len(messages) == 3, text[-3000:]
    figures.add("messages in the server's log (one per damage)", len(messages))
    figures.add("example message", messages[0].split("WARNING", 1)[-1].strip()[:120])
