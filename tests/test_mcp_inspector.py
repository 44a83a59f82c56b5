"""A real external MCP client: the MCP Inspector CLI (npm) against `python mcp_server.py`.

scripts/install.sh installs it into .tools/inspector; in CI (CI=true) a missing Inspector is a
failure, not a skip.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSPECTOR = ROOT / ".tools" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"


def inspector(store_dir: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not INSPECTOR.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{INSPECTOR} is missing: scripts/install.sh installs it")
        pytest.skip("MCP Inspector not installed (run scripts/install.sh)")
    env = {**os.environ, "HOME": str(home), "NOTES_DIR": str(store_dir)}
    # the Inspector starts the server with its own small environment, not ours: the store is
    # named on the server's command line
    command = [str(INSPECTOR), "--cli", "-e", f"NOTES_DIR={store_dir}", sys.executable,
               str(ROOT / "mcp_server.py"), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=180)


def test_inspector_lists_the_tools(store_dir: Path, tmp_path: Path) -> None:
    result = inspector(store_dir, tmp_path, "--method", "tools/list")
    assert result.returncode == 0, result.stderr
    names = {t["name"] for t in json.loads(result.stdout)["tools"]}
    assert names == {"suggest", "section_map", "read_section", "recall", "create_note",
                     "write_state", "append_history"}


def test_inspector_calls_suggest(store_dir: Path, tmp_path: Path) -> None:
    result = inspector(store_dir, tmp_path, "--method", "tools/call", "--tool-name", "suggest",
                       "--tool-arg", "query=redis eviction", "--tool-arg", "limit=3")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["isError"] is False
    table = answer["content"][0]["text"]
    assert "note | title | score | state/total tokens | matched" in table
    assert "infra/redis" in table


def test_inspector_sees_tool_errors(store_dir: Path, tmp_path: Path) -> None:
    result = inspector(store_dir, tmp_path, "--method", "tools/call", "--tool-name",
                       "read_section", "--tool-arg", "note=../../etc/passwd",
                       "--tool-arg", "section=state")
    assert result.returncode == 5  # the Inspector's exit status for isError
    assert "not allowed" in result.stdout
