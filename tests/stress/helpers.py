"""Shared pieces of the stress suite: real servers, real clients, process memory."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from reliability import Figures

ROOT = Path(__file__).resolve().parent.parent.parent
__all__ = ["Figures", "ROOT", "SECONDS"]

# How long each timed scenario runs, in seconds: NOTES_STRESS_SECONDS, 4 by default (the test
# command); docs/reliability.md is made with 60. The scenarios sized by it say how in their
# docstrings; their assertions are the same at any length.
SECONDS = float(os.environ.get("NOTES_STRESS_SECONDS", "4"))

NOTES_BIN = Path(sys.executable).parent / "notes"


@asynccontextmanager
async def stdio_session(store: Path, errlog: IO[str], *args: str) -> AsyncIterator[ClientSession]:
    """A real `python mcp_server.py` over stdio, driven by the official MCP SDK client."""
    params = StdioServerParameters(command=sys.executable,
                                   args=[str(ROOT / "mcp_server.py"), *args],
                                   env={**os.environ, "NOTES_DIR": str(store)})
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


def rss_kb(pid: int) -> int:
    """Resident memory of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def text_of(result: object) -> str:
    content = getattr(result, "content", [])
    return str(getattr(content[0], "text", "")) if content else ""
