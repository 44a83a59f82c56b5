"""MCP round trips over stdio with the official SDK client, and the server's memory.

The server (``python -m mcp_server``) is started the way Claude Code starts it; round trips
are timed from the client (request written to the pipe → answer parsed). Memory is read
from ``/proc/<pid>/status`` of the server process: ``VmHWM`` (peak RSS) and ``VmRSS``
(sampled during the load, and again once it has been idle for a while).

Start → first answer is a ratio (issue #36, item 8): importing fastmcp and the MCP SDK alone
takes most of a second on a small machine, so the server's start is measured against a bare
fastmcp server with one tool (:data:`BARE_SERVER`), started and asked the same way, in pairs
(bare, ours) :data:`STARTS` times in the same run; the medians and their ratio are reported.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks.perf.generator import PerfQuery
from benchmarks.perf.measure import percentiles

IDLE_SECONDS = 2.0
STARTS = 5  # paired starts (bare, ours) for the first-answer ratio, by default

BARE_SERVER = """\
from fastmcp import FastMCP

mcp = FastMCP("bare")


@mcp.tool
def suggest(query: str) -> str:
    \"\"\"One tool, answering at once.\"\"\"
    return "nothing"


if __name__ == "__main__":
    mcp.run(show_banner=False)
"""


def _status_mb(pid: int, key: str) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _server_pid() -> int | None:
    """The MCP server among this process's children."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and b"mcp_server" in cmdline:
            return int(entry.name)
    return None


class _Sampler:
    """Reads the server's RSS every 50 ms while the load runs."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak = pid, 0.0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(0.05):
            self.peak = max(self.peak, _status_mb(self.pid, "VmRSS") or 0.0)

    def __enter__(self) -> _Sampler:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()


async def _session(env: dict[str, str], queries: list[PerfQuery], log: Path) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server"], env=env)
    times: dict[str, list[float]] = {"suggest": [], "section_map": [], "read_section": []}
    with open(log, "w") as errlog:
        started = time.perf_counter()
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("suggest", {"query": queries[0].question})
                first_answer = time.perf_counter() - started
                pid = _server_pid()
                if pid is None:
                    raise RuntimeError("could not find the MCP server process")
                with _Sampler(pid) as sampler:
                    for query in queries:
                        await _round_trips(session, query, times)
                await asyncio.sleep(IDLE_SECONDS)
                steady = _status_mb(pid, "VmRSS")
                peak = _status_mb(pid, "VmHWM")
    return {"first_answer_s": first_answer,
            **{name: percentiles(values) for name, values in times.items()},
            "peak_rss_mb": max(peak or 0.0, sampler.peak), "steady_rss_mb": steady,
            "calls": sum(len(v) for v in times.values())}


async def _round_trips(session: Any, query: PerfQuery, times: dict[str, list[float]]) -> None:
    calls = (("suggest", {"query": query.question}),
             ("section_map", {"note": query.note, "query": query.question}),
             ("read_section", {"note": query.note, "section": "state"}))
    for name, arguments in calls:
        start = time.perf_counter()
        answer = await session.call_tool(name, arguments)
        times[name].append(time.perf_counter() - start)
        if answer.is_error:
            raise RuntimeError(f"MCP {name} failed: {answer.content}")


async def _first_answer(params: Any, query: str, log: Path) -> float:
    """Seconds from starting the server to the answer of its first ``suggest``."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    with open(log, "a") as errlog:
        started = time.perf_counter()
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                answer = await session.call_tool("suggest", {"query": query})
                took = time.perf_counter() - started
    if answer.is_error:
        raise RuntimeError(f"MCP suggest failed at start: {answer.content}")
    return took


async def _starts(env: dict[str, str], query: str, log: Path, starts: int = STARTS
                  ) -> dict[str, float]:
    """Median start → first answer of this server and of a bare fastmcp one, paired."""
    from mcp import StdioServerParameters

    bare_file = log.with_name("bare_mcp_server.py")
    bare_file.write_text(BARE_SERVER)
    ours = StdioServerParameters(command=sys.executable, args=["-m", "mcp_server"], env=env)
    bare = StdioServerParameters(command=sys.executable, args=[str(bare_file)], env=env)
    ours_s, bare_s = [], []
    for _ in range(starts):
        bare_s.append(await _first_answer(bare, query, log))
        ours_s.append(await _first_answer(ours, query, log))
    median_ours, median_bare = statistics.median(ours_s), statistics.median(bare_s)
    return {"first_answer_s": median_ours, "bare_first_answer_s": median_bare,
            "first_answer_ratio": median_ours / median_bare}


def mcp_load(env: dict[str, str], queries: list[PerfQuery], log: Path, starts: int = STARTS
             ) -> dict[str, Any]:
    """Round trips for every query (suggest, section_map, read_section), server memory, and
    the start → first answer against a bare fastmcp server's."""
    figures = asyncio.run(_session(env, queries, log))
    return {**figures, **asyncio.run(_starts(env, queries[0].question, log, starts))}
