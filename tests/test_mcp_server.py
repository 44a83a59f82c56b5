"""The MCP server in memory (fastmcp Client): every tool, its happy path and its errors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from memory import load_config
from memory.fronts.mcp.server import create_server


@pytest.fixture
async def client(store_dir: Path) -> AsyncIterator[Client]:
    async with Client(create_server(load_config(store_dir))) as c:
        yield c


async def text(client: Client, tool: str, **args: object) -> str:
    result = await client.call_tool(tool, args)
    assert not result.is_error
    return str(result.content[0].text)  # type: ignore[union-attr]


async def error(client: Client, tool: str, **args: object) -> str:
    with pytest.raises(ToolError) as info:
        await client.call_tool(tool, args)
    return str(info.value)


async def test_suggest_returns_a_table_and_says_what_it_cut(client: Client) -> None:
    out = await text(client, "suggest", query="rollback del canary", limit=2)
    lines = out.splitlines()
    assert lines[0].startswith("2 shown, ") and "hidden" in lines[0]
    assert lines[1] == "note | title | score | state/total tokens | matched"
    assert lines[2].startswith("howto/deploy-production | ")


async def test_map_then_read_the_best_section(client: Client) -> None:
    out = await text(client, "section_map", note="howto/deploy-production", query="rollback")
    best = out.splitlines()[-1]
    assert best.startswith("best match: ")
    section = best.removeprefix("best match: ").split(" ")[0]
    read = await text(client, "read_section", note="howto/deploy-production", section=section)
    assert read.startswith("### 2026-06-22 · Rollback procedure fixed\n")  # its own heading
    by_position = await text(client, "read_section", note="howto/deploy-production",
                             section="#2")
    assert by_position.startswith("## Current state\n")


async def test_writes_are_visible_to_the_next_suggest(client: Client) -> None:
    created = await text(client, "create_note", note="team/kiwi", title="Kiwi project",
                         tags="fruta,proyecto")
    assert created.startswith("created team/kiwi#state")
    await text(client, "write_state", note="team/kiwi", text="- Kiwi ships in March.")
    logged = await text(client, "append_history", note="team/kiwi", title="Kickoff",
                        text="Chose the name kiwi after a vote.", date="2026-11-02")
    assert "team/kiwi#2026-11-02-kickoff" in logged
    out = await text(client, "suggest", query="kiwi")
    assert out.splitlines()[1].startswith("team/kiwi | Kiwi project")
    state = await text(client, "read_section", note="team/kiwi", section="state")
    assert "Kiwi ships in March." in state


async def test_unknown_note_names_the_closest(client: Client) -> None:
    message = await error(client, "section_map", note="howto/deploy-prod")
    assert "closest: howto/deploy-production" in message


async def test_unknown_section_lists_sections_with_tokens(client: Client) -> None:
    message = await error(client, "read_section", note="infra/redis", section="nope")
    assert "sections are: header (" in message and "state (" in message


@pytest.mark.parametrize("args", [
    {"query": ""}, {"query": "   "}, {"query": "redis", "limit": 0},
    {"query": "redis", "limit": 500},
])
async def test_bad_suggest_arguments_are_errors(client: Client, args: dict[str, object]) -> None:
    message = await error(client, "suggest", **args)
    assert "query is empty" in message or "limit must be between 1 and 50" in message
    assert await text(client, "suggest", query="redis")  # the server is still fine


@pytest.mark.parametrize("note", ["../outside", "/etc/passwd", "a/../../b", "x\x00y"])
async def test_ids_leaving_the_store_are_errors(client: Client, note: str) -> None:
    assert "not allowed" in await error(client, "read_section", note=note, section="state")
    assert "not allowed" in await error(client, "append_history", note=note, title="t",
                                        text="x")


async def test_write_errors_name_the_next_step(client: Client) -> None:
    exists = await error(client, "create_note", note="infra/redis", title="again")
    assert "already exists" in exists
    heading = await error(client, "write_state", note="infra/redis", text="## Not allowed")
    assert "headings" in heading
    bad_date = await error(client, "append_history", note="infra/redis", title="t", text="x",
                           date="yesterday")
    assert "YYYY-MM-DD" in bad_date
    missing = await error(client, "write_state", note="nope/none", text="x")
    assert "notes new" in missing


async def test_wrong_types_are_errors_not_crashes(client: Client) -> None:
    with pytest.raises(ToolError):
        await client.call_tool("suggest", {"query": "redis", "limit": "many"})
    with pytest.raises(ToolError):
        await client.call_tool("read_section", {"note": "infra/redis"})
    assert await text(client, "suggest", query="redis")


async def test_read_only_server_has_only_the_ladder(store_dir: Path) -> None:
    async with Client(create_server(load_config(store_dir), read_only=True)) as c:
        names = {t.name for t in await c.list_tools()}
    assert names == {"suggest", "section_map", "read_section", "recall"}
