"""Hostile notes against the index's bounds, and rebuilds killed again and again.

The issue's billion-laughs front matter (811 bytes, 49 aliases, `tags` worth 26 M strings)
took the first `notes suggest` 107 s and 467 MB; a note of 100,000 headings took 70 s and
460 MB to index. Both are now bounded (memory/note.py) and reported by `notes check`; this
records what the real CLI costs with them, cold (the index built on the way).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from test_index_safety import (
    _kill_mid_build,
    _leftovers,
    _using_state,
    _wait_gone,
    alias_bomb,
)

from memory.model.note import MAX_BLOCKS, MAX_LINES, MAX_SECTIONS
from stress.helpers import NOTES_BIN, Figures

HANG = 300


def _measured(args: list[str], env: dict[str, str],
              stdin: str = "") -> tuple[int, str, float, float]:
    """Run the real `notes`: exit code, stdout, seconds, peak resident MB of that process."""
    started = time.monotonic()
    with open(os.devnull, "w") as devnull, subprocess.Popen(
            [str(NOTES_BIN), *args], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=devnull, text=True) as child:
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(stdin)
        child.stdin.close()
        out = child.stdout.read()
        deadline = time.monotonic() + HANG
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            assert time.monotonic() < deadline, f"notes {args[0]} hung"
            time.sleep(0.02)
        child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, out, time.monotonic() - started, usage.ru_maxrss / 1024


def _hostile_store(store: Path) -> None:
    (store / "bomb.md").write_text(alias_bomb())
    (store / "headings.md").write_text("---\ntitle: Headings\n---\n# Headings\n\n"
                                       + "".join(f"## H{i}\n" for i in range(100_000)))
    (store / "items.md").write_text("---\ntitle: Items\n---\n# Items\n\n## Current state\n"
                                    + "".join(f"- item {i}\n" for i in range(100_000)))


@pytest.mark.slow(30)
def test_hostile_notes_cost_bounded_time_and_memory(store_dir: Path, tmp_path: Path,
                                                    figures: Figures) -> None:
    """Index bounds: a billion-laughs front matter, 100,000 headings, 100,000 list items"""
    _hostile_store(store_dir)
    env = {**os.environ, "NOTES_DIR": str(store_dir), "NOTES_STATE_DIR": str(tmp_path / "s")}
    code, out, seconds, peak = _measured(["suggest", "lol", "--json"], env)
    assert code == 0
    assert "bomb" not in [h["note"] for h in json.loads(out)["hits"]]  # its tags are not read
    figures.add("first `notes suggest`, building the index of the example store and the three "
                "notes (the issue: 107 s, 467 MB with the bomb alone)",
                f"{seconds:.1f} s, {peak:.0f} MB")
    code, out, seconds, peak = _measured(["check", "--json"], env)
    found = {(p["path"], p["code"]) for p in json.loads(out)}
    assert code == 1
    assert {("bomb.md", "front-matter-too-large"), ("headings.md", "too-many-sections"),
            ("items.md", "too-many-blocks")} <= found
    figures.add("`notes check` (each note parsed; index warm)", f"{seconds:.1f} s, {peak:.0f} MB")
    prompt = json.dumps({"prompt": "which item is the list about?", "session_id": "stress"})
    code, out, seconds, peak = _measured(["hook", "user-prompt"], env, prompt)
    assert code == 0
    figures.add("the prompt hook (the issue: 104 s)", f"{seconds:.1f} s, {peak:.0f} MB")
    code, out, seconds, peak = _measured(["suggest", "item", "--json"], env)
    assert code == 0 and json.loads(out)["hits"][0]["note"] == "items"
    figures.add("warm `notes suggest`", f"{seconds:.1f} s, {peak:.0f} MB")
    figures.add("lines parsed / sections / blocks of a note, at most",
                f"{MAX_LINES:,} / {MAX_SECTIONS:,} / {MAX_BLOCKS:,}")


@pytest.mark.slow(15)
def test_rebuilds_killed_again_and_again(store_dir: Path, tmp_path: Path,
                                         figures: Figures) -> None:
    """Index builds killed with SIGKILL mid-build, 10 times"""
    state = tmp_path / "state"
    env = {**os.environ, "NOTES_DIR": str(store_dir), "NOTES_STATE_DIR": str(state),
           "NOTES_BACKEND": "whoosh"}
    orphans = left = 0
    try:
        for _ in range(10):
            _killed, workers = _kill_mid_build(env, state, "whoosh")
            orphans += len(_wait_gone(workers, 5))
            left = max(left, len(_leftovers(state)))
        started = time.monotonic()
        shutil.rmtree(state / "index", ignore_errors=True)
        found = subprocess.run([str(NOTES_BIN), "suggest", "redis eviction", "--json"], env=env,
                               capture_output=True, text=True, timeout=HANG)
        seconds = time.monotonic() - started
    finally:
        for pid in _using_state(state):
            os.kill(pid, signal.SIGKILL)
    assert orphans == 0
    assert found.returncode == 0 and json.loads(found.stdout)["hits"]
    assert _leftovers(state) == []
    figures.add("worker processes alive 5 s after their parent was killed", orphans)
    figures.add("most half-built folders present at once (each removed by the next build)",
                left)
    figures.add("`notes suggest` after deleting the index, with the killed builds' lock",
                f"answered in {seconds:.1f} s")
