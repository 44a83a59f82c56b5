"""HTTP sessions are bounded: at most --max-sessions live at once (the least recently used
idle one is closed to make room; a new one is refused when all are busy), and a session idle
for --session-idle seconds is closed. A real `notes serve --http` process, real requests."""

from __future__ import annotations

import asyncio
import time
from contextlib import ExitStack
from pathlib import Path

import httpx2 as httpx
from fastmcp import Client

from conftest import RunCli
from stress.http_server import ACCEPT, McpHttp, Server, http_server, initialize

PING = {"jsonrpc": "2.0", "id": 9, "method": "ping"}


def opened(server: Server) -> str:
    mcp = McpHttp(server)
    assert mcp.initialize().status_code == 200
    mcp.close()
    assert mcp.session
    return mcp.session


def ping(server: Server, session: str) -> int:
    response = httpx.post(server.url, json=PING, timeout=30,
                          headers={**ACCEPT, "mcp-session-id": session})
    return response.status_code


def test_at_the_cap_the_least_recently_used_idle_session_is_closed(
        store_dir: Path, tmp_path: Path) -> None:
    with http_server(store_dir, tmp_path / "server.log", "--max-sessions", "3") as server:
        a, b, c = (opened(server) for _ in range(3))
        assert ping(server, a) == 200  # now b is the least recently used
        d = opened(server)
        assert ping(server, b) == 404
        assert [ping(server, s) for s in (a, c, d)] == [200, 200, 200]
        e = opened(server)  # used in the order a, c, d since: a goes
        assert ping(server, a) == 404
        assert [ping(server, s) for s in (c, d, e)] == [200, 200, 200]
        assert "closed the least recently used idle session" in server.log_text()


def test_busy_sessions_are_kept_and_a_new_one_is_refused_when_all_are_busy(
        store_dir: Path, tmp_path: Path) -> None:
    with http_server(store_dir, tmp_path / "server.log", "--max-sessions", "2") as server:
        sessions = [opened(server), opened(server)]
        with httpx.Client(timeout=30) as client, ExitStack() as streams:
            for session in sessions:  # an open GET stream keeps a session busy
                stream = streams.enter_context(client.stream(
                    "GET", server.url, headers={"accept": "text/event-stream",
                                                "mcp-session-id": session}))
                assert stream.status_code == 200
            refused = initialize(server)
            assert refused.status_code == 503
            body = refused.text.strip()
            assert "\n" not in body and "--max-sessions" in body, body
            assert [ping(server, s) for s in sessions] == [200, 200]
            # a client of a sessionless protocol version (fastmcp's) is not held back
            assert "suggest" in asyncio.run(_tool_names(server))
        deadline = time.monotonic() + 30  # the streams are closed: room again
        while initialize(server).status_code != 200:
            assert time.monotonic() < deadline, server.log_text()[-2000:]
            time.sleep(0.3)


async def _tool_names(server: Server) -> set[str]:
    async with Client(server.url) as client:
        return {tool.name for tool in await client.list_tools()}


def test_an_idle_session_is_closed_and_a_used_one_is_kept(
        store_dir: Path, tmp_path: Path) -> None:
    with http_server(store_dir, tmp_path / "server.log", "--session-idle", "2") as server:
        idle, used = opened(server), opened(server)
        until = time.monotonic() + 5
        while time.monotonic() < until:
            assert ping(server, used) == 200
            time.sleep(0.2)
        assert ping(server, idle) == 404
        assert ping(server, used) == 200


def test_session_limits_must_be_positive(run_cli: RunCli) -> None:
    for option in ("--max-sessions", "--session-idle"):
        done = run_cli("serve", "--http", "8", option, "0")
        assert done.returncode == 2, done.stderr
        assert f"Invalid value for '{option}'" in done.stderr
