"""HTTP sessions opened and abandoned by the thousand: the server keeps a bounded number."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

import httpx2 as httpx

from stress.helpers import Figures, rss_kb
from stress.http_server import ACCEPT, INITIALIZE, Server, http_server

SESSIONS = 3000
SAMPLE_EVERY = 250
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


def test_abandoned_http_sessions_stay_bounded(store_dir: Path, tmp_path: Path,
                                              figures: Figures) -> None:
    """HTTP sessions: 3,000 opened and abandoned; live sessions and memory stay bounded"""
    with http_server(store_dir, tmp_path / "server.log") as server:
        ids, samples, elapsed = asyncio.run(_flood(server))
        live = asyncio.run(_live(server, ids))
        after = rss_kb(server.process.pid)
    # from the 500th session on the cap is long reached: memory must stop growing
    settled = samples[500 // SAMPLE_EVERY]
    growth = (statistics.median(samples[-3:]) - settled) / settled
    assert len(set(ids)) == SESSIONS
    assert live <= MAX_SESSIONS
    assert growth < 0.10, samples
    figures.add("sessions opened and abandoned / still live afterwards",
                f"{SESSIONS} / {live} (cap {MAX_SESSIONS})")
    figures.add("time to open them (8 at a time)", f"{elapsed:.1f} s")
    figures.add("server memory (RSS)",
                f"{samples[0] / 1024:.0f} MB before, {settled / 1024:.0f} MB after 500 sessions, "
                f"{max(samples) / 1024:.0f} MB peak, {after / 1024:.0f} MB at the end "
                f"(growth after 500: {growth * 100:+.1f} %)")
