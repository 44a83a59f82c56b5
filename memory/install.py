"""`notes install claude-code`: register the MCP server and the prompt hook with Claude Code.

Merges into the existing settings files, touching only our own entries: the ``notes`` MCP
server and the ``UserPromptSubmit`` hook whose command runs ``hook user-prompt``. Idempotent; a
file that changes is first copied to ``<file>.bak-<timestamp>``; a dry run only prints the diff.

- scope ``project``: ``<project>/.mcp.json`` and ``<project>/.claude/settings.json``
- scope ``user``: ``~/.claude.json`` (top-level ``mcpServers``) and ``~/.claude/settings.json``
"""

from __future__ import annotations

import datetime as dt
import difflib
import json
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError

SERVER_NAME = "notes"
HOOK_MARK = "hook user-prompt"
HOOK_TIMEOUT = 10


@dataclass(frozen=True)
class FileChange:
    path: Path
    before: str
    after: str
    backup: Path | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        return "".join(difflib.unified_diff(
            self.before.splitlines(keepends=True), self.after.splitlines(keepends=True),
            fromfile=f"{self.path} (before)", tofile=f"{self.path} (after)"))


def target_files(scope: str, project: Path, home: Path) -> tuple[Path, Path]:
    """(MCP registration file, hook settings file) for a scope."""
    if scope == "project":
        return project / ".mcp.json", project / ".claude" / "settings.json"
    if scope == "user":
        return home / ".claude.json", home / ".claude" / "settings.json"
    raise ConfigError(f"unknown scope {scope!r}; use 'project' or 'user'")


def server_entry(notes_bin: str, notes_dir: Path) -> dict[str, Any]:
    return {"type": "stdio", "command": notes_bin,
            "args": ["--notes", str(notes_dir), "serve"], "env": {}}


def hook_command(notes_bin: str, notes_dir: Path) -> str:
    return shlex.join([notes_bin, "--notes", str(notes_dir), "hook", "user-prompt"])


def with_server(settings: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any]:
    servers = settings.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise ConfigError("'mcpServers' in the settings is not an object; fix it by hand first")
    servers[SERVER_NAME] = entry
    return settings


def with_hook(settings: dict[str, Any], command: str) -> dict[str, Any]:
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError("'hooks' in the settings is not an object; fix it by hand first")
    groups = hooks.setdefault("UserPromptSubmit", [])
    if not isinstance(groups, list):
        raise ConfigError("'hooks.UserPromptSubmit' is not a list; fix it by hand first")
    ours = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}
    for group in groups:
        for index, hook in enumerate(group.get("hooks", []) if isinstance(group, dict) else []):
            if isinstance(hook, dict) and HOOK_MARK in str(hook.get("command", "")) \
                    and "notes" in str(hook.get("command", "")):
                group["hooks"][index] = ours
                return settings
    groups.append({"hooks": [ours]})
    return settings


def plan_change(path: Path, update: Any) -> FileChange:
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        data = json.loads(before) if before.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix or move it, then run "
                          "`notes install claude-code` again") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix or move it first")
    after = json.dumps(update(data), indent=2, ensure_ascii=False) + "\n"
    if before.strip() and json.loads(before) == json.loads(after):
        after = before  # same content: leave the file (and its formatting) alone
    return FileChange(path, before, after)


def apply_change(change: FileChange) -> FileChange:
    if not change.changed:
        return change
    backup = None
    if change.path.exists():
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        backup = change.path.with_name(f"{change.path.name}.bak-{stamp}")
        shutil.copy2(change.path, backup)
    change.path.parent.mkdir(parents=True, exist_ok=True)
    tmp = change.path.with_name(f".{change.path.name}.tmp")
    tmp.write_text(change.after, encoding="utf-8")
    tmp.replace(change.path)
    return FileChange(change.path, change.before, change.after, backup)


def install_claude_code(scope: str, project: Path, home: Path, notes_bin: str,
                        notes_dir: Path, dry_run: bool = False) -> list[FileChange]:
    """Plan (and unless ``dry_run``, write) the two settings changes."""
    mcp_file, settings_file = target_files(scope, project, home)
    entry = server_entry(notes_bin, notes_dir)
    command = hook_command(notes_bin, notes_dir)
    changes = [plan_change(mcp_file, lambda d: with_server(d, entry)),
               plan_change(settings_file, lambda d: with_hook(d, command))]
    return changes if dry_run else [apply_change(c) for c in changes]
