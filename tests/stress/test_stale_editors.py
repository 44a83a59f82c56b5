"""A careless editor among the agents (issue #33, item 5): the CLI, an MCP server over stdio,
one over HTTP, and an editor that saves stale buffers on the same notes.

The editor reads a note, waits while the tools write (its buffer goes stale), adds an entry of
its own and saves, dropping whatever the tools wrote meanwhile; it saves by rename, by
truncate-then-write, and in two parts (the file holds half of its new entry for a moment), and
now and then fixes a word in an older entry by hand. Nothing may be lost: every tool write
puts back what the editor's save dropped (the ledger is the common base of a three-way merge),
the editor's own entries and edits are kept, no half entry is ever recorded, and the agents are
not locked out: at least 99 % of tool writes land (a write that waited counts once it lands).

Duration per scenario: NOTES_STRESS_SECONDS (default 4; docs/reliability.md was made with 60).
"""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memory import Notes, load_config
from memory.model.note import ENTRY_HEADING, parse_note
from stress.helpers import NOTES_BIN, SECONDS, Figures, stdio_session, text_of
from stress.http_server import McpHttp, http_server, sse_json

REFUSED = "nothing was written"
DATE = "2026-11-30"

STALE_EDITOR = r'''
import os, random, sys, time
folder, names, seconds, seed, out = sys.argv[1:6]
names = names.split(",")
rng = random.Random(int(seed))
deadline = time.monotonic() + float(seconds)
done = open(out, "w")
n = 0
while time.monotonic() < deadline:
    path = os.path.join(folder, rng.choice(names) + ".md")
    with open(path, "rb") as handle:
        buffer = handle.read()
    time.sleep(rng.uniform(0.1, 0.6))  # the person types; the tools write meanwhile
    tag = f"editor-{n}"
    if n % 4 == 1 and b"\nby " in buffer:  # a word fixed by hand in an older entry
        buffer = buffer.replace(b"\nby ", b"\nwritten by ", 1)
    data = buffer.rstrip(b"\n") + b"\n\n" + (
        f"### 2026-11-30 \u00b7 {tag}\nsaved from a stale buffer\n").encode()
    mode = ("rename", "truncate", "parts")[n % 3]
    if mode == "rename":
        tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".swp")
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    else:
        with open(path, "r+b") as handle:
            handle.truncate(0)
            cut = rng.randrange(len(buffer), len(data)) if mode == "parts" else 0
            handle.write(data[:cut])
            handle.flush()
            time.sleep(rng.uniform(0.05, 0.3))
            handle.write(data[cut:])
    done.write(tag + "\n")
    done.flush()
    n += 1
    time.sleep(rng.uniform(0.05, 0.3))
'''


@dataclass
class Tally:
    written: list[str] = field(default_factory=list)  # tags of entries the tools wrote
    states: list[str] = field(default_factory=list)  # tags of states the tools wrote
    refused: int = 0  # attempts refused (each retried with the same tag)
    errors: list[str] = field(default_factory=list)

    def lock(self) -> threading.Lock:
        return _LOCK


_LOCK = threading.Lock()


def _cli_writer(store: Path, names: list[str], tally: Tally) -> None:
    env = {**os.environ, "NOTES_DIR": str(store)}
    deadline, n = time.monotonic() + SECONDS, 0
    while time.monotonic() < deadline:
        tag, name = f"cli-{n}", names[n % len(names)]
        if n % 4 == 3:
            args, body = ["state", name], f"- state set by {tag}\n"
        else:
            args, body = ["log", name, "--title", tag, "--date", DATE], f"by {tag}\n"
        result = subprocess.run([str(NOTES_BIN), *args], input=body, capture_output=True,
                                text=True, env=env, timeout=120)
        with _LOCK:
            if result.returncode == 0:
                (tally.states if args[0] == "state" else tally.written).append(tag)
            elif REFUSED in result.stderr:
                tally.refused += 1
                continue
            else:
                tally.errors.append(result.stderr)
        n += 1


async def _stdio_writer(store: Path, names: list[str], log: Path, tally: Tally) -> None:
    with open(log, "w") as errlog:
        async with stdio_session(store, errlog) as session:
            deadline, n = time.monotonic() + SECONDS, 0
            while time.monotonic() < deadline:
                tag = f"mcp-{n}"
                result = await session.call_tool("append_history", {
                    "note": names[n % len(names)], "title": tag, "text": f"by {tag}",
                    "date": DATE})
                if _tallied(tally, tag, not result.is_error, text_of(result)):
                    n += 1
                else:
                    await asyncio.sleep(0.05)


def _http_writer(store: Path, names: list[str], log: Path, tally: Tally) -> None:
    with http_server(store, log) as server:
        client = McpHttp(server)
        try:
            assert client.initialize().status_code == 200
            deadline, n = time.monotonic() + SECONDS, 0
            while time.monotonic() < deadline:
                tag = f"http-{n}"
                answer = sse_json(client.call("append_history", note=names[n % len(names)],
                                              title=tag, text=f"by {tag}", date=DATE))
                result = answer.get("result", {})
                text = result.get("content", [{}])[0].get("text", str(answer))
                if _tallied(tally, tag, not result.get("isError", True), text):
                    n += 1
                else:
                    time.sleep(0.05)
        finally:
            client.close()


def _tallied(tally: Tally, tag: str, ok: bool, text: str) -> bool:
    """Count one attempt; True when the writer goes on to its next tag."""
    with _LOCK:
        if ok:
            tally.written.append(tag)
        elif REFUSED in text:
            tally.refused += 1
            return False
        else:
            tally.errors.append(text)
    return True


def _recorded(store: Path, names: list[str]) -> list[tuple[str, str]]:
    db = sqlite3.connect(store / ".notes" / "ledger.sqlite")
    try:
        marks = ",".join("?" * len(names))
        return [(str(e), str(t)) for e, t in db.execute(
            f"SELECT entry, text FROM entries WHERE note IN ({marks})", names)]
    finally:
        db.close()


BODY = re.compile(r"^(?:(?:written )?by (?:cli|mcp|http)-\d+|saved from a stale buffer|"
                  r"the last word)$")


@pytest.mark.slow(16)
@pytest.mark.parametrize("count", [1, 10])
def test_tools_and_a_stale_editor_lose_nothing(store_dir: Path, tmp_path: Path,
                                               figures: Figures, count: int) -> None:
    """A stale-buffer editor among the CLI and MCP writers (stdio, HTTP)"""
    names = [f"stale/note-{n}" for n in range(count)]
    notes = Notes(load_config(store_dir), notify=lambda _: None)
    for name in names:
        notes.create_note(name, name.split("/")[1].title(), ["stale"])
        notes.write_state(name, "- the first state")
    tally = Tally()
    started = time.monotonic()
    editor = subprocess.Popen([sys.executable, "-c", STALE_EDITOR, str(store_dir / "stale"),
                               ",".join(n.split("/")[1] for n in names), str(SECONDS),
                               str(count), str(tmp_path / "editor.txt")])
    threads = [threading.Thread(target=_cli_writer, args=(store_dir, names, tally)),
               threading.Thread(target=_http_writer, args=(store_dir, names,
                                                           tmp_path / "http.log", tally))]
    for thread in threads:
        thread.start()
    asyncio.run(_stdio_writer(store_dir, names, tmp_path / "stdio.log", tally))
    for thread in threads:
        thread.join()
    assert editor.wait(timeout=120) == 0
    elapsed = time.monotonic() - started
    for name in names:  # the agents' next write, after the editor's last save
        notes.append_history(name, "the end", "the last word", DATE)
    assert tally.errors == []
    saved = (tmp_path / "editor.txt").read_text().split()
    titles: list[str] = []
    for name in names:
        note = parse_note(notes.store.path_for(name).read_text())
        assert note.front_matter and note.meta.get("title") == name.split("/")[1].title()
        assert note.state is not None and (note.state.body.strip() == "- the first state" or
                                           note.state.body.strip().startswith("- state set by"))
        titles += [e.title for e in note.entries]
    expected = tally.written + saved
    lost = sorted(set(expected) - set(titles))
    duplicated = sorted({t for t in titles if titles.count(t) > 1 and t != "the end"})
    half = [(entry, text) for entry, text in _recorded(store_dir, names)
            if not ENTRY_HEADING.match(text.split("\n", 1)[0].removeprefix("### "))
            or not all(BODY.match(line) for line in text.split("\n")[1:] if line.strip())]
    errors = [p for p in notes.check() if p.severity == "error" and p.path.startswith("stale")]
    notes.close()
    attempts = len(tally.written) + len(tally.states) + tally.refused
    accepted = (len(tally.written) + len(tally.states)) / attempts
    assert lost == [] and duplicated == [] and half == [] and errors == []
    assert accepted >= 0.99, (tally.refused, attempts)
    suffix = f"({count} note{'s' if count > 1 else ''}, {elapsed:.0f} s)"
    figures.add(f"tool writes landed / attempted {suffix}",
                f"{attempts - tally.refused} / {attempts} ({accepted:.1%})")
    figures.add(f"stale editor saves (rename, truncate, two parts) {suffix}", len(saved))
    figures.add(f"entries lost / duplicated / half-entries recorded {suffix}",
                f"{len(lost)} / {len(duplicated)} / {len(half)}")
    figures.add(f"notes with header and state intact {suffix}", f"{count} / {count}")
