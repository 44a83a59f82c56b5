"""Every line a client sends over stdio gets an answer (issue 33, item 6): the real server as
a subprocess, raw bytes on its stdin, its replies read line by line with a timeout. A line
that is not JSON-RPC gets the JSON-RPC 2.0 error (-32700 parse error, -32600 invalid
request) with the request's id when it can be read, else ``id: null``; the server logs one
line on stderr for it and goes on serving."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from reliability import Figures

ROOT = Path(__file__).resolve().parent.parent
REPLY_TIMEOUT = 60.0  # a bound on waiting, not a measure: a reply comes in milliseconds

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "garbage-test", "version": "1"}}}
SUGGEST = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"suggest",' \
          '"arguments":{"query":"%s"}}}'

# (raw line, expected code, expected id)
GARBAGE: list[tuple[bytes, int, Any]] = [
    (b"{", -32700, None),
    (b"null", -32600, None),
    (b"[]", -32600, None),
    (b"\xff\xfe\xfd", -32700, None),
    ((SUGGEST % (7, "\\ud800")).encode(), -32700, 7),
    ((SUGGEST % (8, "caf\xff")).encode("latin-1"), -32700, 8),  # a request that is not UTF-8
    (b'{"jsonrpc":"2.0","id":9}', -32600, 9),
    (b'{"jsonrpc":"2.0","id":"ten","method":10}', -32600, "ten"),
    (b'{"jsonrpc":"1.0","id":11,"method":"tools/list"}', -32600, 11),
    (b'[{"jsonrpc":"2.0","id":12,"method":"tools/list"}]', -32600, None),
    (b'"just a string"', -32600, None),
]


class Server:
    """``mcp_server.py`` over stdio, its stdout read by a thread into a queue of lines."""

    def __init__(self, store: Path, log: IO[str]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "mcp_server.py"), "--no-hook-socket"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            env={**os.environ, "NOTES_DIR": str(store)})
        self.replies: queue.Queue[bytes] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.put(line)

    def send(self, raw: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def reply(self) -> dict[str, Any]:
        try:
            line = self.replies.get(timeout=REPLY_TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"no reply within {REPLY_TIMEOUT} s") from None
        message: dict[str, Any] = json.loads(line)
        return message

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(json.dumps(message).encode())
        return self.reply()


@pytest.fixture
def server(store_dir: Path, tmp_path: Path) -> Iterator[Server]:
    with open(tmp_path / "server.log", "w") as log:
        running = Server(store_dir, log)
        try:
            yield running
        finally:
            if running.process.poll() is None:
                running.process.kill()
            running.process.wait(timeout=30)
            running.reader.join(timeout=30)
            for pipe in (running.process.stdin, running.process.stdout):
                if pipe is not None:
                    pipe.close()


def test_every_line_gets_an_answer_and_the_server_goes_on(server: Server, tmp_path: Path,
                                                          store_dir: Path,
                                                          figures: Figures) -> None:
    """Lines that are not JSON-RPC over stdio: each answered, the server goes on"""
    server.send(b"{")  # before initialize too
    early = server.reply()
    assert early["error"]["code"] == -32700 and early["id"] is None, early
    init = server.call(INITIALIZE)
    assert init["id"] == 0 and init["result"]["serverInfo"]["name"] == "notes"
    server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    server.send(b"")  # a blank line is no message: skipped, not answered
    for raw, code, request_id in GARBAGE:
        server.send(raw)
        reply = server.reply()
        assert reply["jsonrpc"] == "2.0" and "result" not in reply, (raw, reply)
        assert reply["error"]["code"] == code and reply["id"] == request_id, (raw, reply)
        assert reply["error"]["message"].split(":")[0] in ("Parse error", "Invalid Request")
        assert "; send " in reply["error"]["message"], reply  # and what to send instead
    found = server.call({"jsonrpc": "2.0", "id": 20, "method": "tools/call",
                         "params": {"name": "suggest", "arguments": {"query": "redis"}}})
    assert found["id"] == 20 and not found["result"]["isError"], found
    wrote = server.call({"jsonrpc": "2.0", "id": 21, "method": "tools/call",
                         "params": {"name": "append_history", "arguments": {
                             "note": "infra/redis", "title": "After garbage",
                             "text": "Still serving.", "date": "2026-11-30"}}})
    assert wrote["id"] == 21 and not wrote["result"]["isError"], wrote
    assert "Still serving." in (store_dir / "infra/redis.md").read_text()
    assert server.process.stdin is not None
    server.process.stdin.close()
    assert server.process.wait(timeout=60) == 0
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log
    refused = [line for line in log.splitlines() if "is not a JSON-RPC message" in line]
    assert len(refused) == len(GARBAGE) + 1, log[-3000:]  # one line each on stderr
    codes = [code for _, code, _ in GARBAGE]
    figures.add("lines sent that are not JSON-RPC ({, null, [], bytes not UTF-8, \\ud800, "
                "no method, …) / answered", f"{len(GARBAGE)} / {len(GARBAGE)}")
    figures.add("answered -32700 parse error / -32600 invalid request / with the request's "
                "id", f"{codes.count(-32700)} / {codes.count(-32600)} / "
                f"{sum(1 for *_, i in GARBAGE if i is not None)}")
    figures.add("lines in the server's log for them (and one before initialize) / tool "
                "calls served after them", f"{len(refused)} / 2")
