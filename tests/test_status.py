"""`notes status` (alias `doctor`) and the store line of `notes serve`, through the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import NOTES_BIN, copy_initialised
from memory.state.tokens import count_exact


def notes(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "NOTES_DIR"}
    return subprocess.run([str(NOTES_BIN), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def status(cwd: Path, *args: str) -> tuple[int, dict[str, object]]:
    result = notes("status", "--json", *args, cwd=cwd)
    return result.returncode, json.loads(result.stdout)


def test_status_json_fields(tmp_path: Path, initialised_store: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    store = copy_initialised(initialised_store, project / "notes")  # as `notes init` makes it
    assert notes("suggest", "history entries", cwd=project).returncode == 0  # index + log
    code, data = status(project)
    assert code == 0, data
    assert set(data) == {"store", "project", "notes", "tokens", "index", "usage_log",
                         "claude_code", "nightly", "check", "problems", "ok"}
    assert data["store"] == {"path": str(store), "source": "found",
                             "why": f"store {store} (found walking up from the current "
                                    "folder)", "exists": True, "marked": True,
                             "example": False}
    assert data["notes"] == 1 and isinstance(data["tokens"], int) and data["tokens"] > 100
    index = data["index"]
    assert isinstance(index, dict)
    assert index["backend"] == "whoosh" and index["built"] is True
    assert index["stale"] == [] and index["removed"] == []
    log = data["usage_log"]
    assert isinstance(log, dict) and log["retention_days"] == 180 and log["enabled"] is True
    assert log["queries"] == "plain" and log["max_mb"] == 64
    assert log["bytes"] > 0 and log["path"] == str(store / ".notes" / "usage.sqlite")
    assert data["check"] == {"errors": 0, "warnings": 0}
    wiring = data["claude_code"]
    assert isinstance(wiring, dict)
    assert wiring["project"]["server"] == {"file": str(project / ".mcp.json"),
                                           "present": False, "command": "", "store": None}
    assert [p["severity"] for p in data["problems"]] == ["warning"]  # not wired yet
    assert "notes install claude-code" in data["problems"][0]["message"]

    assert notes("install", "claude-code", cwd=project).returncode == 0
    starter = store / "start-here.md"
    starter.write_text(starter.read_text().replace("no longer need it", "are done"))
    code, data = status(project)
    assert code == 0 and data["ok"] is True and data["problems"] == [
        {"severity": "warning", "message": "1 notes changed since they were indexed; the "
                                           "next command re-indexes them, or run `notes index`"}]
    assert data["index"]["stale"] == ["start-here"]
    server = data["claude_code"]["project"]["server"]
    assert server["present"] is True and server["store"] == str(store)
    assert data["claude_code"]["project"]["hook"]["store"] == str(store)
    assert data["claude_code"]["user"]["hook"]["present"] is False
    text = notes("doctor", cwd=project)
    assert text.returncode == 0 and text.stdout.startswith(f"store {store} (found")
    assert "claude code, project: server in" in text.stdout


def test_status_fails_when_something_is_broken(tmp_path: Path,
                                               initialised_store: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    code, data = status(project)
    assert code == 1 and data["ok"] is False
    assert data["store"]["source"] == "default" and data["store"]["exists"] is False
    assert "no store here" in data["problems"][0]["message"]
    elsewhere = copy_initialised(initialised_store, tmp_path / "elsewhere")  # a store
    assert notes("--notes", str(elsewhere), "install", "claude-code", cwd=project
                 ).returncode == 0
    shutil.rmtree(elsewhere)
    code, data = status(project)
    assert code == 1
    messages = " ".join(p["message"] for p in data["problems"] if p["severity"] == "error")
    assert f"names the store {elsewhere}, which does not exist" in messages
    text = notes("status", cwd=project)
    assert text.returncode == 1 and "error: " in text.stdout


@pytest.mark.slow(10)
async def test_serve_says_which_store_and_when_to_write(tmp_path: Path,
                                                       initialised_store: Path) -> None:
    store = copy_initialised(initialised_store, tmp_path / "mine")  # as `notes init` makes it
    env = {k: v for k, v in os.environ.items() if k != "NOTES_DIR"}
    server = StdioServerParameters(command=str(NOTES_BIN), args=["serve"], env=env,
                                   cwd=str(store))
    errors = tmp_path / "server.log"
    with open(errors, "w") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tools = await session.list_tools()
    instructions = init.instructions or ""
    assert "write_state" in instructions and "append_history" in instructions
    assert count_exact(instructions) <= 80
    assert {t.name for t in tools.tools} >= {"suggest", "write_state", "append_history"}
    assert f"serving the store {store} (found walking up from the current folder)" in \
        errors.read_text()
