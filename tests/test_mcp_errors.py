"""How MCP tool errors read: a bad argument is one plain sentence naming the fix (not
pydantic's text with a URL); a bug inside a tool is an internal error, logged with its
traceback, never "bad argument"."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import ROOT
from memory import Notes, load_config
from memory.fronts.mcp.server import create_server
from memory.retrieval.ladder import Suggestions


@pytest.fixture
async def client(store_dir: Path) -> AsyncIterator[Client]:
    async with Client(create_server(load_config(store_dir))) as c:
        yield c


async def error(client: Client, tool: str, args: dict[str, object]) -> str:
    with pytest.raises(ToolError) as info:
        await client.call_tool(tool, args)
    return str(info.value)


def assert_plain(message: str) -> None:
    assert "\n" not in message, message
    for raw in ("pydantic", "http", "validation error", "[type=", "input_value"):
        assert raw not in message, message


@pytest.mark.parametrize(("tool", "args", "words"), [
    ("suggest", {"query": "redis", "limit": "abc"}, ["limit", "whole number", "'abc'"]),
    ("suggest", {"query": "redis", "limit": 2.5}, ["limit", "whole number"]),
    ("read_section", {"note": "infra/redis"}, ["section", "missing"]),
    ("suggest", {"query": "redis", "bogus": 1}, ["bogus", "not a parameter"]),
    ("suggest", {"query": ["redis"]}, ["query", "text"]),
    ("suggest", {"query": None}, ["query", "text"]),
    ("append_history", {"note": "infra/redis", "title": 3, "text": {"a": 1}},
     ["title", "text"]),
])
async def test_bad_arguments_read_as_one_sentence(client: Client, tool: str,
                                                  args: dict[str, object],
                                                  words: list[str]) -> None:
    message = await error(client, tool, args)
    assert_plain(message)
    assert message.startswith(f"bad arguments to {tool}: "), message
    for word in words:
        assert word in message, message
    # the next step: the tool's parameters, with what each takes
    assert "parameters are" in message and "(text, required)" in message, message


class BrokenNotes(Notes):
    """A store whose suggest has a bug (stands for any unexpected exception in a tool)."""

    def suggest(self, query: str, limit: int = 5, context: str | None = None,
                session: str | None = None) -> Suggestions:
        raise KeyError("an internal bug")


async def test_a_bug_inside_a_tool_is_an_internal_error(
        store_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    config = load_config(store_dir)
    notes = BrokenNotes(config, notify=lambda message: None, front="mcp")
    with caplog.at_level(logging.ERROR, logger="notes.mcp"):
        async with Client(create_server(config, notes=notes)) as client:
            message = await error(client, "suggest", {"query": "redis"})
            assert await client.call_tool("section_map", {"note": "infra/redis"})
    notes.close()
    assert_plain(message)
    assert message.startswith("internal error in suggest"), message
    assert "server's log" in message and "argument" not in message, message
    logged = [r for r in caplog.records if r.exc_info]
    assert logged and isinstance(logged[0].exc_info[1], KeyError)  # type: ignore[index]


async def test_library_errors_still_read_as_before(client: Client) -> None:
    message = await error(client, "suggest", {"query": "redis", "limit": 500})
    assert message.startswith("limit must be between 1 and 50"), message


async def test_bad_arguments_over_stdio(store_dir: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(command=sys.executable,
                                   args=[str(ROOT / "mcp_server.py"), "--read-only"],
                                   env={**os.environ, "NOTES_DIR": str(store_dir)})
    with open(tmp_path / "server.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("suggest", {"query": "redis", "limit": "abc"})
                missing = await session.call_tool("read_section", {"note": "infra/redis"})
    assert result.is_error and missing.is_error
    for answer in (result, missing):
        message = answer.content[0].text  # type: ignore[union-attr]
        assert_plain(message)
        assert message.startswith("bad arguments to "), message
    assert "Traceback" not in (tmp_path / "server.log").read_text()
