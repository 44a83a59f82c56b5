"""`notes install claude-code` and `notes uninstall claude-code`: our MCP server and prompt
hook in Claude Code's settings, in and out again.

Merges into the existing settings files, touching only our own entries: the ``notes`` MCP
server and the ``UserPromptSubmit`` hook whose command runs ``hook user-prompt``, in the file's
own indentation and key order. Idempotent; a file that changes is first copied to
``<file>.bak-<timestamp>`` (``-2``, ``-3``… when that name is taken: a backup never replaces
another) in the per-user state folder, under the file's own path
(``~/.local/state/notes-memory/backups/home/me/project/.mcp.json.bak-…``), never beside it
where it could be committed; a dry run only prints the diff. Uninstall removes exactly those
entries; when a backup holds exactly what is left, its bytes are put back, so install then
uninstall leaves a file as it was, formatting included; a file install created is deleted,
and its ``.claude`` folder with it when that is left empty.

The entries name the store so that they survive a clone of the project: a store inside the
project is named relative to it (``${CLAUDE_PROJECT_DIR:-.}/notes`` for the server,
``"$CLAUDE_PROJECT_DIR"/notes`` in the hook), the per-user default store is not named at all
(each user's own default, or the nearest store, is found when the server starts), and the
command is plain ``notes`` when that is the one on ``PATH``.

- scope ``project``: ``<project>/.mcp.json`` and ``<project>/.claude/settings.json``
- scope ``user``: ``~/.claude.json`` (top-level ``mcpServers``) and ``~/.claude/settings.json``
"""

from __future__ import annotations

import datetime as dt
import difflib
import glob
import json
import os
import re
import shlex
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import ConfigError
from memory.state.safe_files import write_atomic

SERVER_NAME = "notes"
HOOK_MARK = "hook user-prompt"
HOOK_TIMEOUT = 10
PROJECT_DIR_ARG = "${CLAUDE_PROJECT_DIR:-.}"  # expanded by Claude Code in .mcp.json
PROJECT_DIR_SHELL = '"$CLAUDE_PROJECT_DIR"'  # set by Claude Code for hook commands


@dataclass(frozen=True)
class FileChange:
    path: Path
    before: str
    after: str
    backup: Path | None = None
    remove: bool = False  # uninstall left nothing in a file install had created: delete it

    @property
    def changed(self) -> bool:
        return self.before != self.after or (self.remove and self.path.exists())

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


@dataclass(frozen=True)
class Wiring:
    """How the settings name the command and the store."""

    command: str  # ``notes`` when that is the one on PATH, else the absolute path
    server_store: list[str]  # the ``--notes X`` arguments of the server ([] for none)
    hook_store: str  # the hook command's ``--notes X`` part, shell-quoted ("" for none)
    notices: list[str] = field(default_factory=list)  # machine paths written, and why


def plan_wiring(scope: str, project: Path, notes_bin: str, store: Path, source: str,
                on_path: str | None) -> Wiring:
    """The command and store arguments for ``scope``; ``on_path`` is what ``notes``
    resolves to on PATH (None when it is not there)."""
    notices = []
    same = on_path is not None and os.path.realpath(on_path) == os.path.realpath(notes_bin)
    command = "notes" if same else notes_bin
    if not same and scope == "project":
        notices.append(f"the command is named by its path on this machine ({notes_bin}), as "
                       "`notes` on PATH is another or none; teammates need `notes` at that "
                       "path, or install the tool on PATH (pipx) and run install again")
    if source == "default":
        return Wiring(command, [], "", notices)
    inside = scope == "project" and (store == project or project in store.parents)
    if inside:
        rel = store.relative_to(project).as_posix()
        tail = "" if rel == "." else f"/{rel}"
        hook = PROJECT_DIR_SHELL + ("" if rel == "." else "/" + shlex.quote(rel))
        return Wiring(command, ["--notes", PROJECT_DIR_ARG + tail], f"--notes {hook}",
                      notices)
    if scope == "project":
        notices.append(f"the store is named by its path on this machine ({store}); a store "
                       "inside the project, or your default store, keeps the project's files "
                       "free of machine paths")
    return Wiring(command, ["--notes", str(store)], f"--notes {shlex.quote(str(store))}",
                  notices)


def server_entry(wiring: Wiring) -> dict[str, Any]:
    return {"type": "stdio", "command": wiring.command,
            "args": [*wiring.server_store, "serve"], "env": {}}


def hook_command(wiring: Wiring) -> str:
    parts = [shlex.quote(wiring.command), wiring.hook_store, HOOK_MARK]
    return " ".join(p for p in parts if p)


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
            if is_our_hook(hook):
                group["hooks"][index] = ours
                return settings
    groups.append({"hooks": [ours]})
    return settings


def is_our_hook(hook: object) -> bool:
    command = str(hook.get("command", "")) if isinstance(hook, dict) else ""
    return HOOK_MARK in command and "notes" in command


def is_our_server(entry: object) -> bool:
    """A ``notes`` server entry that install wrote: ``… serve`` run by a notes command."""
    if not isinstance(entry, dict) or not isinstance(entry.get("args"), list):
        return False
    command = Path(str(entry.get("command", ""))).name
    args = [str(a) for a in entry["args"]]
    return bool(args) and args[-1] == "serve" and (command.startswith("notes")
                                                    or any("mcp_server" in a for a in args))


def without_server(settings: dict[str, Any]) -> dict[str, Any]:
    servers = settings.get("mcpServers")
    if isinstance(servers, dict) and is_our_server(servers.get(SERVER_NAME)):
        del servers[SERVER_NAME]
        if not servers:
            del settings["mcpServers"]
    return settings


def without_hook(settings: dict[str, Any]) -> dict[str, Any]:
    hooks = settings.get("hooks")
    groups = hooks.get("UserPromptSubmit") if isinstance(hooks, dict) else None
    if not isinstance(hooks, dict) or not isinstance(groups, list):
        return settings
    kept = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list) or not any(is_our_hook(h) for h in inner):
            kept.append(group)
            continue
        rest = [h for h in inner if not is_our_hook(h)]
        if rest:
            kept.append({**group, "hooks": rest})
    if kept:
        hooks["UserPromptSubmit"] = kept
    else:
        del hooks["UserPromptSubmit"]
        if not hooks:
            del settings["hooks"]
    return settings


Update = Callable[[dict[str, Any]], dict[str, Any]]


def plan_change(path: Path, update: Update, command: str = "install") -> FileChange:
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        data = json.loads(before) if before.strip() else {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not valid JSON ({exc}); fix or move it, then run "
                          f"`notes {command} claude-code` again") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix or move it first")
    after = dump_like(update(data), before)
    if before.strip() and json.loads(before) == json.loads(after):
        after = before  # same content: leave the file (and its formatting) alone
    return FileChange(path, before, after)


def dump_like(data: dict[str, Any], before: str) -> str:
    """``data`` as JSON written the way ``before`` was (keys keep their order): its
    indentation (spaces or a tab; one line when it was one line), a space after ':' or not,
    a last newline or not. A new file: two spaces and a last newline."""
    text = before.strip()
    if not text:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    end = "\n" if before.endswith("\n") else ""
    colon = ": " if re.search(r'"\s*:\s', text) or not re.search(r'":', text) else ":"
    if "\n" not in text:
        comma = ", " if re.search(r",\s", text) or "," not in text else ","
        return json.dumps(data, ensure_ascii=False, separators=(comma, colon)) + end
    first = re.search(r"\n([ \t]+)\S", text)
    indent: str | int = first.group(1) if first else 2
    if isinstance(indent, str) and set(indent) == {" "}:
        indent = len(indent)
    return json.dumps(data, indent=indent, ensure_ascii=False, separators=(",", colon)) + end


def plan_removal(path: Path, update: Update, backups: Path) -> FileChange:
    """Our entries out of ``path``: the bytes of a backup (in ``backups``) that holds exactly
    what is left, else the rest re-written; a file left empty ({}) that no backup explains
    is deleted (install created it)."""
    change = plan_change(path, update, "uninstall")
    if not change.before or change.after == change.before:
        return change
    left = json.loads(change.after)
    for backup in sorted(backups_of(path, backups), key=lambda b: b.stat().st_mtime_ns,
                         reverse=True):
        text = _read_json_text(backup)
        if text is not None and (json.loads(text) if text.strip() else {}) == left:
            return FileChange(path, change.before, text)
    if left == {}:
        return FileChange(path, change.before, "", remove=True)
    return change


def _read_json_text(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
        json.loads(text) if text.strip() else None
    except (OSError, ValueError):
        return None
    return text


def backup_folder(path: Path, backups: Path) -> Path:
    """Where the backups of ``path`` go: its folder's absolute path below ``backups``."""
    folder = path.absolute().parent
    return backups / folder.relative_to(folder.anchor)


def backups_of(path: Path, backups: Path) -> list[Path]:
    folder = backup_folder(path, backups)
    return [b for b in folder.glob(f"{glob.escape(path.name)}.bak-*") if b.is_file()]


def apply_change(change: FileChange, backups: Path) -> FileChange:
    if not change.changed:
        return change
    backup = _backup(change.path, backups) if change.path.exists() else None
    if change.remove:
        change.path.unlink()
        _remove_if_empty(change.path.parent)
        return FileChange(change.path, change.before, change.after, backup, remove=True)
    write_atomic(change.path, change.after)
    return FileChange(change.path, change.before, change.after, backup)


def _remove_if_empty(folder: Path) -> None:
    """The ``.claude`` folder of a settings file that uninstall deleted (install made both),
    when nothing else is in it."""
    if folder.name != ".claude":
        return
    try:
        folder.rmdir()
    except OSError:  # not empty (or not ours to remove): leave it
        pass


def _backup(path: Path, backups: Path) -> Path:
    """Copy ``path`` to ``<name>.bak-<timestamp>``, ``-2``, ``-3``… in its backup folder,
    never over another."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = backup_folder(path, backups)
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(1, 1000):
        backup = folder / (f"{path.name}.bak-{stamp}" + (f"-{number}" if number > 1 else ""))
        try:
            with open(backup, "xb") as handle:
                handle.write(path.read_bytes())
        except FileExistsError:
            continue
        shutil.copystat(path, backup)
        return backup
    raise ConfigError(f"too many backups of {path} this second; remove old ones and retry")


def install_claude_code(scope: str, project: Path, home: Path, wiring: Wiring,
                        backups: Path, dry_run: bool = False) -> list[FileChange]:
    """Plan (and unless ``dry_run``, write) the two settings changes, backing up each file
    it changes below ``backups`` (the per-user state folder's ``backups``)."""
    mcp_file, settings_file = target_files(scope, project, home)
    entry = server_entry(wiring)
    command = hook_command(wiring)
    changes = [plan_change(mcp_file, lambda d: with_server(d, entry)),
               plan_change(settings_file, lambda d: with_hook(d, command))]
    return changes if dry_run else [apply_change(c, backups) for c in changes]


def uninstall_claude_code(scope: str, project: Path, home: Path, backups: Path,
                          dry_run: bool = False) -> list[FileChange]:
    """Plan (and unless ``dry_run``, make) the removal of exactly our two entries."""
    mcp_file, settings_file = target_files(scope, project, home)
    changes = [plan_removal(mcp_file, without_server, backups) if mcp_file.exists()
               else FileChange(mcp_file, "", ""),
               plan_removal(settings_file, without_hook, backups) if settings_file.exists()
               else FileChange(settings_file, "", "")]
    return changes if dry_run else [apply_change(c, backups) for c in changes]
