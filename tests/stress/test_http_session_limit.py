"""The HTTP server at its session limit, every session holding its event stream open.

Two client processes open two sessions each on a server started with ``--max-sessions 4``
and hold each session's GET event stream open, so that no session is idle and none may be
closed to make room. New clients must then get a clear refusal at once (503, saying why and
what to do), never a hang, while the held sessions go on answering; once the streams close,
whether their client is killed (SIGKILL) or closes them, new sessions are served again.

New clients refused: REFUSED, 10 per NOTES_STRESS_SECONDS, at least 40 (40 in the test
command, 600 for docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest

from stress.helpers import SECONDS, Figures
from stress.http_server import ACCEPT, INITIALIZE, McpHttp, Server, http_server, sse_json

MAX_SESSIONS = 4
REFUSED = max(40, round(10 * SECONDS))
PING = {"jsonrpc": "2.0", "id": 9, "method": "ping"}

HOLDER = r'''
import sys, httpx2 as httpx
url, count = sys.argv[1], int(sys.argv[2])
accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "holder", "version": "0"}}}
client = httpx.Client(timeout=30)
held = []
for _ in range(count):
    session = client.post(url, json=hello, headers=accept).headers["mcp-session-id"]
    client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                headers={**accept, "mcp-session-id": session})
    stream = client.stream("GET", url, headers={"accept": "text/event-stream",
                                                "mcp-session-id": session})
    assert stream.__enter__().status_code == 200
    held.append((stream, session))
print(" ".join(session for _, session in held), flush=True)
if sys.stdin.readline().strip() == "close":
    for stream, _ in held:
        stream.__exit__(None, None, None)
    print("closed", flush=True)
sys.stdin.readline()
'''


def _holder(server: Server) -> tuple[subprocess.Popen[str], list[str]]:
    """A client process holding two sessions' event streams open; its session ids."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, server.url, "2"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().split()


async def _refusals(server: Server) -> list[float]:
    """REFUSED new clients, 8 at a time: each refused with 503; the seconds each waited."""
    gate = asyncio.Semaphore(8)
    waited: list[float] = []
    async with httpx.AsyncClient(timeout=30) as client:  # a hang fails on the timeout

        async def one() -> None:
            async with gate:
                started = time.monotonic()
                response = await client.post(server.url, json=INITIALIZE, headers=ACCEPT)
                waited.append(time.monotonic() - started)
                assert response.status_code == 503, response.text
                message = response.json()["error"]["message"]
                assert "too many sessions" in message and "retry later" in message, message

        await asyncio.gather(*(one() for _ in range(REFUSED)))
    return waited


def _opens(server: Server, tries: int = 60) -> int:
    """Initialize until a session opens (the server may take a moment to see a closed
    stream); the number of refusals before it did."""
    for refused in range(tries):
        mcp = McpHttp(server)
        try:
            if mcp.initialize().status_code == 200:
                assert not sse_json(mcp.call("suggest", query="redis"))["result"]["isError"]
                return refused
        finally:
            mcp.close()
        time.sleep(0.5)
    raise AssertionError(f"no session opened after {tries} tries: " + server.log_text()[-2000:])


def _still_served(server: Server, sessions: list[str]) -> None:
    with httpx.Client(timeout=30) as client:
        for session in sessions:
            response = client.post(server.url, json=PING,
                                   headers={**ACCEPT, "mcp-session-id": session})
            assert response.status_code == 200 and "result" in sse_json(response), response.text


@pytest.mark.slow(10)
def test_full_of_held_streams_refuses_then_serves_again(store_dir: Path, tmp_path: Path,
                                                        figures: Figures) -> None:
    """HTTP session limit: streams held open; new clients refused at once, served again after"""
    with http_server(store_dir, tmp_path / "server.log", "--max-sessions", str(MAX_SESSIONS),
                     "--no-hook-socket") as server:
        killed, killed_sessions = _holder(server)
        polite, polite_sessions = _holder(server)
        try:
            waited = asyncio.run(_refusals(server))
            _still_served(server, killed_sessions + polite_sessions)
            os.kill(killed.pid, signal.SIGKILL)
            killed.wait(timeout=30)
            after_kill = _opens(server)
            assert polite.stdin is not None and polite.stdout is not None
            polite.stdin.write("close\n")
            polite.stdin.flush()
            assert polite.stdout.readline().strip() == "closed"
            after_close = [_opens(server) for _ in range(MAX_SESSIONS)]
        finally:
            for process in (killed, polite):
                if process.poll() is None:
                    process.kill()
                process.wait(timeout=30)
                for pipe in (process.stdin, process.stdout):
                    if pipe is not None:
                        pipe.close()
        log = server.log_text()
    assert "Traceback" not in log
    refusals = [line for line in log.splitlines() if "refused a new session" in line]
    assert len(refusals) == 1, refusals  # a client retrying in a loop floods no log
    assert "all 4 are busy" in refusals[0] and "1 refused since" in refusals[0]
    figures.add("sessions held with their event stream open / --max-sessions",
                f"{len(killed_sessions) + len(polite_sessions)} / {MAX_SESSIONS}")
    figures.add("new clients meanwhile (8 at a time): refused with 503 / hung",
                f"{len(waited)} / 0")
    figures.add("refusal answered in (median / slowest)",
                f"{statistics.median(waited) * 1000:.0f} ms / {max(waited) * 1000:.0f} ms")
    figures.add("held sessions still answering while new ones are refused", "4 / 4")
    figures.add("lines in the server's log for the refusals", len(refusals))
    figures.add("refusals before a new session opened: after SIGKILL of a holder / after "
                "a holder closed its streams", f"{after_kill} / {max(after_close)}")
