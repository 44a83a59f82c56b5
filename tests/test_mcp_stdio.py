"""The real server over stdio, started as a subprocess, driven by the official MCP SDK client."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent


def params(store_dir: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=[str(ROOT / "mcp_server.py"), *extra],
                                 env={**os.environ, "NOTES_DIR": str(store_dir)})


async def test_climb_the_ladder_and_write_over_stdio(store_dir: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    with open(log, "w") as errlog:
        async with stdio_client(params(store_dir), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert init.server_info.name == "notes"
                tools = await session.list_tools()
                assert {t.name for t in tools.tools} >= {"suggest", "section_map",
                                                         "read_section", "append_history"}
                found = await session.call_tool("suggest", {"query": "redis eviction"})
                assert not found.is_error
                first = top_note(found.content[0].text)  # type: ignore[union-attr]
                mapped = await session.call_tool("section_map", {"note": first})
                assert "| state | state |" in mapped.content[0].text  # type: ignore[union-attr]
                wrote = await session.call_tool("append_history", {
                    "note": first, "title": "Stdio check", "text": "Written over stdio.",
                    "date": "2026-11-30"})
                assert not wrote.is_error
                back = await session.call_tool("read_section",
                                               {"note": first, "section": "2026-11-30-stdio"})
                assert "Written over stdio." in back.content[0].text  # type: ignore[union-attr]
                bad = await session.call_tool("read_section", {"note": "../x", "section": "s"})
                assert bad.is_error
                await _edit_and_wait_for_watcher(store_dir, log)
    assert "Traceback" not in log.read_text()


def top_note(table: str) -> str:
    lines = table.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("note | "))
    return lines[header + 1].split(" | ")[0]


async def _edit_and_wait_for_watcher(store_dir: Path, log: Path) -> None:
    """An edit on disk is re-indexed by the server's watcher, without any tool call."""
    path = store_dir / "glossary.md"
    path.write_text(path.read_text() + "\n- Ornitorrinco: a word for the watcher test.\n")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if "re-indexed glossary" in log.read_text():
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the server's watcher did not re-index glossary: "
                         + log.read_text()[-2000:])


@pytest.mark.slow(11)
async def test_stdout_carries_only_the_protocol(unindexed_store: Path, tmp_path: Path) -> None:
    """With the index missing, the rebuild message goes to stderr; the client still works."""
    log = tmp_path / "server.log"
    with open(log, "w") as errlog:
        async with stdio_client(params(unindexed_store, "--read-only"),
                                errlog=errlog) as (r, w):
            async with ClientSession(r, w) as session:
                await session.initialize()
                names = {t.name for t in (await session.list_tools()).tools}
                assert names == {"suggest", "section_map", "read_section", "recall"}
    assert "building the index" in log.read_text()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_streamable_http_on_localhost(store_dir: Path, tmp_path: Path) -> None:
    port = _free_port()
    with open(tmp_path / "http.log", "w") as log:
        server = subprocess.Popen([str(Path(sys.executable).parent / "notes"), "serve",
                                   "--http", str(port)],
                                  env={**os.environ, "NOTES_DIR": str(store_dir)},
                                  stdout=log, stderr=log)
        await _talk_over_http(server, port)


async def _talk_over_http(server: subprocess.Popen[bytes], port: int) -> None:
    from fastmcp import Client

    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    names = {t.name for t in await client.list_tools()}
                    answer = await client.call_tool("suggest", {"query": "redis eviction"})
                break
            except Exception:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                await asyncio.sleep(0.3)
        assert "append_history" in names
        assert "infra/redis" in answer.content[0].text  # type: ignore[union-attr]
    finally:
        server.terminate()
        server.wait(timeout=15)
