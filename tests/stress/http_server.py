"""A real `notes serve --http` process and raw MCP-over-HTTP requests (httpx), for the HTTP
tests in tests/ and tests/stress/."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2 as httpx

NOTES_BIN = Path(sys.executable).parent / "notes"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "http-test", "version": "0"}}}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A running server: its port, process and log file."""

    def __init__(self, port: int, process: subprocess.Popen[bytes], log: Path) -> None:
        self.port, self.process, self.log = port, process, log
        self.url = f"http://127.0.0.1:{port}/mcp"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def http_server(store: Path, log: Path, *args: str,
                env: dict[str, str] | None = None) -> Iterator[Server]:
    """`notes serve --http PORT ARGS…` on the store, until it accepts connections."""
    port = free_port()
    full_env = {**os.environ, "NOTES_DIR": str(store), **(env or {})}
    with open(log, "w") as out:
        process = subprocess.Popen([str(NOTES_BIN), "serve", "--http", str(port), *args],
                                   env=full_env, stdout=out, stderr=out)
    server = Server(port, process, log)
    try:
        _wait_for_port(server)
        yield server
    finally:
        process.terminate()
        process.wait(timeout=30)


def _wait_for_port(server: Server) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
            return
        except OSError:
            if server.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("the server did not start: " + server.log_text()) from None
            time.sleep(0.2)


def sse_json(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of a response (an SSE stream's last `data:` line, or JSON)."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return dict(response.json())
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    return dict(json.loads(data[-1]))


class McpHttp:
    """Raw MCP requests with chosen headers: initialize, then tool calls in that session."""

    def __init__(self, server: Server, headers: dict[str, str] | None = None) -> None:
        self.client = httpx.Client(timeout=30)
        self.url = server.url
        self.headers = {**ACCEPT, **(headers or {})}
        self.session: str | None = None

    def post(self, message: dict[str, Any]) -> httpx.Response:
        headers = dict(self.headers)
        if self.session:
            headers["mcp-session-id"] = self.session
        return self.client.post(self.url, json=message, headers=headers)

    def initialize(self) -> httpx.Response:
        response = self.post(INITIALIZE)
        if response.status_code == 200:
            self.session = response.headers["mcp-session-id"]
            self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return response

    def call(self, tool: str, **arguments: Any) -> httpx.Response:
        return self.post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": tool, "arguments": arguments}})

    def close(self) -> None:
        self.client.close()


def initialize(server: Server, headers: dict[str, str] | None = None) -> httpx.Response:
    """The answer to one ``initialize`` with these headers (its session left open)."""
    mcp = McpHttp(server, headers)
    try:
        return mcp.initialize()
    finally:
        mcp.close()
