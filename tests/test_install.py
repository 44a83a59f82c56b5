"""`notes install claude-code` on a temporary home and project with existing settings."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import NOTES_BIN

OTHER_HOOK = {"hooks": [{"type": "command", "command": "echo other", "timeout": 5}]}


def install(store_dir: Path, home: Path, project: Path, *args: str
            ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "NOTES_DIR": str(store_dir)}
    return subprocess.run([str(NOTES_BIN), "install", "claude-code", "--project", str(project),
                           *args], capture_output=True, text=True, env=env, timeout=60)


def seed(home: Path, project: Path) -> None:
    (project / ".claude").mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"github": {"command": "gh-mcp", "args": []}}}, indent=2))
    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(ls)"]},
         "hooks": {"UserPromptSubmit": [OTHER_HOOK], "Stop": [OTHER_HOOK]}}, indent=2))
    (home / ".claude").mkdir(parents=True)
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "projects": {}}))


def test_project_install_merges_and_is_idempotent(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    first = install(store_dir, home, project)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("updated:") == 2 and first.stdout.count("backup:") == 2
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["github"] == {"command": "gh-mcp", "args": []}
    assert servers["notes"]["args"] == ["--notes", str(store_dir), "serve"]
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(ls)"]}
    assert settings["hooks"]["Stop"] == [OTHER_HOOK]
    groups = settings["hooks"]["UserPromptSubmit"]
    assert groups[0] == OTHER_HOOK
    ours = groups[1]["hooks"][0]
    assert ours["command"].endswith("hook user-prompt") and ours["timeout"] == 10
    backups = sorted(p.name for p in project.rglob("*.bak-*"))
    assert len(backups) == 2
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    second = install(store_dir, home, project)
    assert second.returncode == 0 and second.stdout.count("unchanged:") == 2
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before


def test_dry_run_prints_the_diff_and_writes_nothing(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    def files() -> dict[Path, bytes]:
        return {p: p.read_bytes() for d in (home, project) for p in d.rglob("*") if p.is_file()}

    before = files()
    result = install(store_dir, home, project, "--dry-run")
    assert result.returncode == 0, result.stderr
    assert '+    "notes": {' in result.stdout and "hook user-prompt" in result.stdout
    assert files() == before


def test_user_scope_writes_the_home_files(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    result = install(store_dir, home, project, "--scope", "user")
    assert result.returncode == 0, result.stderr
    claude = json.loads((home / ".claude.json").read_text())
    assert claude["numStartups"] == 3 and claude["mcpServers"]["notes"]["command"]
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert "hook user-prompt" in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]


def test_invalid_settings_are_left_alone(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(parents=True)
    home.mkdir()
    (project / ".mcp.json").write_text("{not json")
    result = install(store_dir, home, project)
    assert result.returncode == 1
    assert "is not valid JSON" in result.stderr
    assert (project / ".mcp.json").read_text() == "{not json"


def test_registered_command_really_starts(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    install(store_dir, home, project)
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["notes"]
    assert Path(entry["command"]).resolve() == NOTES_BIN.resolve()
    hook = json.loads((project / ".claude" / "settings.json").read_text())
    command = hook["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"]
    result = subprocess.run(command, shell=True, input=json.dumps({"prompt": "redis eviction"}),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "infra/redis" in result.stdout
