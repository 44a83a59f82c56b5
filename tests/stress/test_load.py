"""Load: the HTTP server under 4 concurrent clients, and sequential stdio calls, each for
NOTES_STRESS_SECONDS (stress/helpers.py; 60 s in docs/reliability.md)."""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastmcp import Client

from stress.helpers import SECONDS, Figures, children_of, rss_kb, stdio_session, text_of

HTTP_SECONDS = SECONDS
STDIO_SECONDS = SECONDS
SAMPLE_EVERY = 50  # stdio calls between two memory samples (at least 20 samples)
HTTP_SAMPLE_SECONDS = 0.5  # between two memory samples of the HTTP server
WARM_UP = 0.2  # memory is compared from this fraction of the run on
CYCLE = 20  # _calls(i) repeats every 20 calls: each query, note and section asked once


def _calls(i: int) -> tuple[str, dict[str, object]]:
    """A mix of the three rungs, with varied queries."""
    words = ["redis", "deploy", "verifactu", "postgres", "celery", "factura", "canary",
             "backup", "dns", "on-call"]
    query = f"{words[i % len(words)]} {words[(i * 7) % len(words)]}"
    match i % 4:
        case 0:
            return "suggest", {"query": query}
        case 1:
            return "section_map", {"note": "infra/redis", "query": query}
        case 2:
            return "read_section", {"note": "howto/deploy-production", "section": "state"}
        case _:
            return "read_section", {"note": "infra/redis", "section": f"#{2 + i % 5}"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _http_client(port: int, until: float, stats: dict[str, int]) -> None:
    async with Client(f"http://127.0.0.1:{port}/mcp") as client:
        i = 0
        while time.monotonic() < until:
            name, args = _calls(i)
            result = await client.call_tool(name, args, raise_on_error=False)
            stats["calls"] += 1
            stats["errors"] += bool(result.is_error)
            i += 1


async def _warm_up(port: int) -> None:
    """Every call of the mix once, before memory is sampled: the first calls load the index's
    readers, the tokenizer and the caches, and on a busy machine they can land after the
    run's first fifth, which then reads as growth."""
    async with Client(f"http://127.0.0.1:{port}/mcp") as client:
        for i in range(CYCLE):
            name, args = _calls(i)
            await client.call_tool(name, args, raise_on_error=False)


async def _http_load(port: int, pid: int, stats: dict[str, int]) -> list[int]:
    await _warm_up(port)
    samples: list[int] = []
    until = time.monotonic() + HTTP_SECONDS
    clients = [asyncio.create_task(_http_client(port, until, stats)) for _ in range(4)]
    while time.monotonic() < until:
        samples.append(rss_kb(pid))
        await asyncio.sleep(HTTP_SAMPLE_SECONDS)
    await asyncio.gather(*clients)
    samples.append(rss_kb(pid))
    return samples


async def _wait_for_http(port: int, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                await client.list_tools()
            return
        except Exception:
            if time.monotonic() > deadline or server.poll() is not None:
                raise
            await asyncio.sleep(0.3)


def _memory_figure(samples: list[int]) -> str:
    warm = samples[int(len(samples) * WARM_UP)]
    return (f"{warm / 1024:.0f} MB after warm-up, {max(samples) / 1024:.0f} MB peak, "
            f"sustained growth {_growth(samples) * 100:+.1f} %")


def _growth(samples: list[int]) -> float:
    """Sustained growth after warm-up: the median of the last fifth of the run against the
    median of the fifth right after warm-up (single samples jump with garbage collection)."""
    fifth = max(1, len(samples) // 5)
    warm = int(len(samples) * WARM_UP)
    start = statistics.median(samples[warm:warm + fifth])
    return (statistics.median(samples[-fifth:]) - start) / start


@pytest.mark.slow(12)
def test_http_server_with_four_clients(store_dir: Path, tmp_path: Path,
                                       figures: Figures) -> None:
    """Load: the server over HTTP with 4 concurrent clients"""
    port = _free_port()
    env = {**os.environ, "NOTES_DIR": str(store_dir)}
    with open(tmp_path / "http.log", "w") as log:
        server = subprocess.Popen([str(Path(sys.executable).parent / "notes"), "serve",
                                   "--http", str(port)], env=env, stdout=log, stderr=log)
        try:
            asyncio.run(_wait_for_http(port, server))
            stats = {"calls": 0, "errors": 0}
            samples = asyncio.run(_http_load(port, server.pid, stats))
        finally:
            server.terminate()
            server.wait(timeout=30)
    growth = _growth(samples)
    assert stats["errors"] == 0 and stats["calls"] > 100
    assert growth < 0.10, samples
    figures.add(f"calls in {HTTP_SECONDS:.0f} s by 4 clients / errors",
                f"{stats['calls']} / {stats['errors']}")
    figures.add("throughput", f"{stats['calls'] / HTTP_SECONDS:.0f} calls/s")
    figures.add("server memory (RSS)", _memory_figure(samples))


async def _stdio_run(store: Path, log: Path) -> tuple[list[int], int, int, float]:
    samples: list[int] = []
    errors = calls = 0
    with open(log, "w") as errlog:
        async with stdio_session(store, errlog) as session:
            server = [p for p in children_of(os.getpid()) if _is_server(p)]
            started = time.monotonic()
            while time.monotonic() < started + STDIO_SECONDS or calls < 20 * SAMPLE_EVERY:
                name, args = _calls(calls)
                result = await session.call_tool(name, args)
                errors += bool(result.is_error) or not text_of(result)
                if calls % SAMPLE_EVERY == 0:
                    samples.append(rss_kb(server[0]))
                calls += 1
            elapsed = time.monotonic() - started
            samples.append(rss_kb(server[0]))
    return samples, errors, calls, elapsed


def _is_server(pid: int) -> bool:
    try:
        return "mcp_server.py" in Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return False


@pytest.mark.slow(16)
def test_sequential_stdio_calls(store_dir: Path, tmp_path: Path, figures: Figures) -> None:
    """Load: sequential calls over stdio"""
    samples, errors, calls, elapsed = asyncio.run(_stdio_run(store_dir,
                                                             tmp_path / "stdio.log"))
    growth = _growth(samples)
    assert errors == 0
    assert growth < 0.10, samples
    figures.add("calls / errors", f"{calls} / {errors}")
    figures.add("time", f"{elapsed:.0f} s ({1000 * elapsed / calls:.1f} ms per call)")
    figures.add("server memory (RSS)", _memory_figure(samples))
