"""HTTP sessions opened and abandoned by the thousand: the server keeps a bounded number.

50 sessions per second of NOTES_STRESS_SECONDS (stress/helpers.py), at least 1,000: 1,000 in
the test command, 3,000 in docs/reliability.md. Memory growth is measured from the 500th
session on, long after the cap of 100 live sessions is reached."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

import httpx2 as httpx
import pytest

from stress.helpers import SECONDS, Figures, rss_kb
from stress.http_server import ACCEPT, INITIALIZE, Server, http_server

SAMPLE_EVERY = 250
SESSIONS = max(1000, SAMPLE_EVERY * round(50 * SECONDS / SAMPLE_EVERY))
MAX_SESSIONS = 100  # the server's default
PING = {"jsonrpc": "2.0", "id": 9, "method": "ping"}


async def _flood(server: Server) -> tuple[list[str], list[int], float]:
    """Open SESSIONS sessions (initialize, then never use them again), 8 at a time."""
    ids: list[str] = []
    samples = [rss_kb(server.process.pid)]
    gate = asyncio.Semaphore(8)
    started = time.monotonic()
    async with httpx.AsyncClient(timeout=60) as client:

        async def open_one() -> None:
            async with gate:
                response = await client.post(server.url, json=INITIALIZE, headers=ACCEPT)
                assert response.status_code == 200, response.text
                ids.append(response.headers["mcp-session-id"])

        for _ in range(SESSIONS // SAMPLE_EVERY):
            await asyncio.gather(*(open_one() for _ in range(SAMPLE_EVERY)))
            samples.append(rss_kb(server.process.pid))
    return ids, samples, time.monotonic() - started


async def _live(server: Server, ids: list[str]) -> int:
    """How many of the sessions still answer (the others answer 404)."""
    gate = asyncio.Semaphore(8)
    async with httpx.AsyncClient(timeout=60) as client:

        async def alive(session: str) -> bool:
            async with gate:
                response = await client.post(server.url, json=PING,
                                             headers={**ACCEPT, "mcp-session-id": session})
                assert response.status_code in (200, 404), response.text
                return response.status_code == 200

        return sum(await asyncio.gather(*(alive(s) for s in ids)))


def _growth(samples: list[int]) -> float:
    """Growth from the 500th session on (the cap long reached) to the end."""
    settled = samples[500 // SAMPLE_EVERY]
    return (statistics.median(samples[-3:]) - settled) / settled


def _memory(samples: list[int], growth: float) -> str:
    return (f"{samples[0] / 1024:.0f} MB before, {samples[500 // SAMPLE_EVERY] / 1024:.0f} MB "
            f"after 500 sessions, {samples[-1] / 1024:.0f} MB after {SESSIONS} "
            f"(growth after 500: {growth * 100:+.1f} %)")


@pytest.mark.slow(28)
def test_abandoned_http_sessions_stay_bounded(store_dir: Path, tmp_path: Path,
                                              figures: Figures) -> None:
    """HTTP sessions: thousands opened and abandoned; live sessions and memory stay bounded"""
    with http_server(store_dir, tmp_path / "server.log") as server:
        ids, samples, elapsed = asyncio.run(_flood(server))
        live = asyncio.run(_live(server, ids))
    growth = _growth(samples)
    assert len(set(ids)) == SESSIONS
    assert live <= MAX_SESSIONS
    assert growth < 0.10, samples
    # the same flood with the bound lifted, to show what it holds back (figures only)
    with http_server(store_dir, tmp_path / "unbounded.log", "--max-sessions",
                     str(10 * SESSIONS)) as server:
        unbounded_ids, unbounded, _ = asyncio.run(_flood(server))
        unbounded_live = asyncio.run(_live(server, unbounded_ids))
    figures.add("sessions opened and abandoned (8 at a time) / still live afterwards",
                f"{SESSIONS} in {elapsed:.1f} s / {live} (the default cap, {MAX_SESSIONS})")
    figures.add("server memory (RSS)", _memory(samples, growth))
    figures.add(f"the same with --max-sessions {10 * SESSIONS}: still live / memory",
                f"{unbounded_live} / {_memory(unbounded, _growth(unbounded))}")
