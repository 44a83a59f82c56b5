"""A running MCP server killed with SIGKILL while it writes, over stdio and over HTTP.

Each round starts the real server, sends it a burst of writes to one note (entries and whole
states, sent at once so that several are in flight), and kills it after a random number of
answers. Afterwards the note holds every write that was answered, only whole entries and
whole states (never a mix), no temp file shows as a note, no lock is left that blocks the
next write, `notes check` is clean, the index answers with the last entries, and the prompt
hook answers past the socket a killed server left behind.

Rounds: KILLS per transport, one per 2.5 NOTES_STRESS_SECONDS, at least 3 (3 in the test
command, 24 for docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from memory import Notes, load_config
from memory.model.note import parse_note
from stress.helpers import NOTES_BIN, ROOT, SECONDS, Figures
from stress.http_server import ACCEPT, McpHttp, http_server, sse_json

NOTE = "kill/target"
KILLS = max(3, round(SECONDS / 2.5))
BURST = 16  # writes sent at once in a round; killed after 0 to BURST // 3 answers


def _entry_body(tag: str) -> str:
    return "\n".join(f"{tag} body line {n} " + "x" * 60 for n in range(40))


def _state(tag: str) -> str:
    return "\n".join(f"- {tag} state line {n}" for n in range(30))


def _call(tag: str, index: int) -> dict[str, Any]:
    """The write number ``index`` of a round: every third one a whole new state."""
    if index % 3 == 2:
        arguments = {"note": NOTE, "text": _state(tag)}
        return {"name": "write_state", "arguments": arguments}
    return {"name": "append_history", "arguments": {
        "note": NOTE, "title": tag, "text": _entry_body(tag), "date": "2026-11-30"}}


class StdioServer:
    """``mcp_server.py`` over stdio with raw JSON lines; answers collected by a thread."""

    def __init__(self, store: Path, log: Path) -> None:
        with open(log, "a") as errlog:
            self.process = subprocess.Popen(
                [sys.executable, str(ROOT / "mcp_server.py")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog,
                env={**os.environ, "NOTES_DIR": str(store)})
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.reader.join(timeout=30)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.answers.put(json.loads(line))

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        return self.answers.get(timeout=60)

    def initialize(self) -> None:
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "kill-test", "version": "1"}}})
        assert "result" in self.answer()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _stdio_round(store: Path, log: Path, round_no: int, rng: random.Random) -> list[str]:
    """One stdio round: the tags whose writes were answered before the kill."""
    server = StdioServer(store, log)
    try:
        server.initialize()
        tags = {}
        for index in range(BURST):
            tag = f"s{round_no}-{index}"
            tags[index + 1] = tag
            server.send({"jsonrpc": "2.0", "id": index + 1, "method": "tools/call",
                         "params": _call(tag, index)})
        answered = []
        for _ in range(rng.randint(0, BURST // 3)):
            reply = server.answer()
            assert not reply["result"]["isError"], reply
            answered.append(tags[reply["id"]])
    finally:
        server.kill()
    return answered


def _http_round(store: Path, log: Path, round_no: int, rng: random.Random) -> list[str]:
    """One HTTP round: the writes go as concurrent POSTs in one session."""
    answered: list[str] = []
    with http_server(store, log) as server:
        mcp = McpHttp(server)
        assert mcp.initialize().status_code == 200
        wanted = rng.randint(0, BURST // 3)
        done = threading.Event()
        if wanted == 0:
            done.set()

        def write(index: int) -> None:
            tag = f"h{round_no}-{index}"
            try:
                response = mcp.client.post(server.url, headers={
                    **ACCEPT, "mcp-session-id": mcp.session or ""}, json={
                    "jsonrpc": "2.0", "id": index, "method": "tools/call",
                    "params": _call(tag, index)})
            except httpx.HTTPError:
                return  # killed before it answered
            if response.status_code == 200 and not done.is_set():
                reply = sse_json(response)
                assert not reply["result"]["isError"], reply
                answered.append(tag)
                if len(answered) >= wanted:
                    done.set()

        with ThreadPoolExecutor(8) as pool:
            for index in range(BURST):
                pool.submit(write, index)
            done.wait(timeout=60)
            os.kill(server.process.pid, signal.SIGKILL)
        mcp.close()
    return answered


def _check(path: Path, answered: list[str], before: list[str]) -> list[str]:
    """The note parses, keeps every earlier entry and every answered write, and holds only
    whole entries and one whole state."""
    note = parse_note(path.read_text())
    assert not [p for p in note.problems if p.severity == "error"], note.problems
    titles = [e.title for e in note.entries]
    assert titles[:len(before)] == before, "an entry was lost"
    for entry in note.entries:
        assert entry.text.split("\n", 1)[1].rstrip() == _entry_body(entry.title), entry.title
    state = note.state.text.split("\n", 1)[1].strip() if note.state else ""
    assert state == "" or state == _state(state.split()[1]), "a mixed state"
    entries_answered = {t for t in answered if int(t.split("-")[1]) % 3 != 2}
    assert entries_answered <= set(titles), "an answered entry is missing"
    return titles


@pytest.mark.slow(25)
def test_sigkill_of_a_server_while_it_writes(store_dir: Path, tmp_path: Path,
                                             figures: Figures) -> None:
    """Server crashes: the MCP server killed by SIGKILL in a burst of writes (stdio, HTTP)"""
    notes = Notes(load_config(store_dir), notify=lambda _: None)
    notes.create_note(NOTE, "Kill target", ["kill"])
    path = store_dir / f"{NOTE}.md"
    rng = random.Random(20261204)
    titles: list[str] = []
    answered_total = {"stdio": 0, "http": 0}
    leftovers = 0
    started = time.monotonic()
    for round_no in range(KILLS):
        for transport, run in (("stdio", _stdio_round), ("http", _http_round)):
            answered = run(store_dir, tmp_path / f"{transport}.log", round_no, rng)
            answered_total[transport] += len(answered)
            titles = _check(path, answered, titles)
            leftovers += len(list(path.parent.glob(".*.tmp")))
            listed = notes.store.note_ids()  # what `notes list` lists
            assert NOTE in listed and not [n for n in listed if ".tmp" in n], listed
    elapsed = time.monotonic() - started
    notes.close()
    after = _cli(store_dir, "log", NOTE, "--title", "after the kills", "--date", "2026-12-01",
                 input="the next write goes through\n")  # a stale lock would block it
    assert after.returncode == 0, after.stderr
    assert not list(path.parent.glob(".*.tmp")), "temp files of killed servers are removed"
    checked = _cli(store_dir, "check")
    assert checked.returncode == 0 and "no problems found" in checked.stdout, checked
    found = _cli(store_dir, "read", NOTE, "2026-12-01-after-the-kills")
    assert "the next write goes through" in found.stdout, found
    prompt = json.dumps({"prompt": "kill target", "session_id": "s", "cwd": str(store_dir)})
    hook = _cli(store_dir, "hook", "user-prompt", input=prompt)  # past the dead server's socket
    assert hook.returncode == 0 and NOTE in hook.stdout, hook
    hits = _cli(store_dir, "suggest", "kill target").stdout.splitlines()
    header = next(i for i, line in enumerate(hits) if line.startswith("note | "))
    assert hits[header + 1].startswith(f"{NOTE} | "), hits
    for transport in ("stdio", "http"):
        assert "Traceback" not in (tmp_path / f"{transport}.log").read_text()
    figures.add("servers killed (stdio / HTTP), each in a burst of "
                f"{BURST} writes", f"{KILLS} / {KILLS}")
    figures.add("writes answered before the kills (stdio / HTTP) / lost",
                f"{answered_total['stdio']} / {answered_total['http']} / 0")
    figures.add("entries in the note afterwards / mixed entries or states",
                f"{len(titles)} / 0")
    figures.add("temp files left by killed servers (hidden, removed by the next write)",
                leftovers)
    figures.add("next write after the kills / `notes check` / the prompt hook",
                "went through / clean / answered")
    figures.add("wall time", f"{elapsed:.1f} s")


def _cli(store: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(NOTES_BIN), *args], input=input, capture_output=True,
                          text=True, env={**os.environ, "NOTES_DIR": str(store)}, timeout=120)
