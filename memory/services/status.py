"""`notes status` (alias `doctor`): the store in use and why, what it holds, how fresh its
index is, the usage log, whether Claude Code is wired to it, and every problem with the next
step. Read-only, except that an index built by another version is rebuilt on first read.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.api import Notes
from memory.config import Config
from memory.errors import NotesError
from memory.locate import EXAMPLE_STORE, STORE_MARKER, StoreChoice, choose_store
from memory.project import find_project
from memory.services.install import (
    PROJECT_DIR_ARG,
    PROJECT_DIR_SHELL,
    SERVER_NAME,
    is_our_hook,
    target_files,
)
from memory.services.stores import describe_store


@dataclass(frozen=True)
class Problem:
    severity: str  # "error" (exit 1) or "warning"
    message: str  # what is wrong and the next step


@dataclass(frozen=True)
class Wired:
    """One Claude Code settings file and what our entry in it names."""

    file: str
    present: bool
    command: str = ""
    store: str | None = None  # the store it resolves to ("" when it names none it can find)


@dataclass
class Status:
    store: dict[str, Any]
    project: dict[str, Any] = field(default_factory=dict)
    notes: int = 0
    tokens: int = 0
    index: dict[str, Any] = field(default_factory=dict)
    usage_log: dict[str, Any] = field(default_factory=dict)
    claude_code: dict[str, dict[str, Wired]] = field(default_factory=dict)
    nightly: dict[str, Any] = field(default_factory=dict)
    check: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)


def store_status(config: Config | None, choice: StoreChoice, failure: str | None,
                 project: Path, home: Path, env: Mapping[str, str]) -> Status:
    """The whole report; ``config`` is None when the store could not be opened (``failure``
    says why)."""
    path = config.notes_dir if config else choice.path
    status = Status(store={
        "path": str(path), "source": config.store_source if config else choice.source,
        "why": describe_store(config) if config else failure,
        "exists": path.is_dir(), "marked": (path / STORE_MARKER).is_file(),
        "example": path == EXAMPLE_STORE.resolve()})
    found = find_project(project, config.notes_dir if config else None, home)
    status.project = {"key": found.key if found else None,
                      "root": str(found.root) if found else None,
                      "why": found.why if found else _no_project(project, path, home)}
    if config is None:
        status.problems.append(Problem("error", failure or f"no store at {path}"))
    else:
        _store_problems(status, config)
        _fill_from_store(status, config)
    status.claude_code = {"project": _wiring("project", project, home, env),
                          "user": _wiring("user", project, home, env)}
    _wiring_problems(status, path, project)
    if config is not None:
        status.nightly = _nightly(config, env)
        if status.nightly["last_run"] and not status.nightly["last_run"]["ok"]:
            status.problems.append(Problem("warning", "the last nightly report failed: "
                                           f"{status.nightly['last_run']['error']} (its log: "
                                           f"{status.nightly['log']})"))
    return status


def _nightly(config: Config, env: Mapping[str, str]) -> dict[str, Any]:
    """Whether the store's nightly report is scheduled (where, the command), and its last
    run (when, whether it worked, the report it wrote)."""
    from memory.services.nightly import Tools, installed
    from memory.services.nightly_run import LOG, last_run

    entry = installed(config.notes_dir, Tools.from_env(env))
    return {"installed": entry is not None, **(entry or {}),
            "last_run": last_run(config.state_dir), "log": str(config.state_dir / LOG)}


def _store_problems(status: Status, config: Config) -> None:
    if status.store["example"]:
        status.problems.append(Problem("warning", "this is the bundled example store, not "
                                       "your memory; `notes init` makes your own"))
    elif not status.store["marked"]:
        status.problems.append(Problem("warning", f"{config.notes_dir} is not marked as a "
                                       f"store (no {STORE_MARKER}), so it is used only when "
                                       f"named; `notes init {config.notes_dir}` marks it"))


def _fill_from_store(status: Status, config: Config) -> None:
    notes = Notes(config, notify=lambda _: None, front="cli")
    try:
        status.index = notes.index_figures()
        status.notes = status.index.pop("notes")
        status.tokens = status.index.pop("tokens")
        status.usage_log = _usage_figures(config)
        projects = notes.note_projects() if status.index["built"] else {}
        found = notes.check()
    except NotesError as exc:
        status.problems.append(Problem("error", str(exc)))
        return
    finally:
        notes.close()
    _project_figures(status, projects)
    errors = sum(p.severity == "error" for p in found)
    status.check = {"errors": errors, "warnings": len(found) - errors}
    if errors:
        status.problems.append(Problem("error", f"{errors} problems in the notes; "
                                       "`notes check` lists them with file and line"))
    if status.check["warnings"]:
        status.problems.append(Problem("warning", f"{status.check['warnings']} warnings in "
                                       "the notes; `notes check` lists them"))
    stale = len(status.index["stale"]) + len(status.index["removed"])
    if not status.index["built"]:
        status.problems.append(Problem("warning", "no index yet: the first command builds it, "
                                       "or run `notes index`"))
    elif stale:
        status.problems.append(Problem("warning", f"{stale} notes changed since they were "
                                       "indexed; the next command re-indexes them, or run "
                                       "`notes index`"))


def _no_project(folder: Path, store: Path, home: Path) -> str:
    """Why ``folder`` is in no project, in words."""
    real = Path(os.path.realpath(folder))
    if real == Path(os.path.realpath(store)) or Path(os.path.realpath(store)) in real.parents:
        return f"{folder} is inside the store: every note is searched"
    return f"{folder} is the home folder or the root, in no project: every note is searched"


def _project_figures(status: Status, projects: Mapping[str, str]) -> None:
    """How many indexed notes are this project's, of no project, and of other projects
    (left out of every search here)."""
    key = status.project["key"]
    own = sum(p == key for p in projects.values())
    status.project.update(notes=own, shared=status.notes - len(projects),
                          other_projects=0 if key is None else len(projects) - own,
                          projects=len(set(projects.values())))



def _usage_figures(config: Config) -> dict[str, Any]:
    path = config.state_dir / "usage.sqlite"
    size = sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal"))
               if p.exists())
    return {"enabled": config.usage_log, "path": str(path), "bytes": size,
            "retention_days": config.usage_retention_days, "queries": config.usage_queries,
            "max_mb": config.usage_max_mb}


def _wiring(scope: str, project: Path, home: Path,
            env: Mapping[str, str]) -> dict[str, Wired]:
    server_file, hook_file = target_files(scope, project, home)
    return {"server": _server_wired(server_file, project, env),
            "hook": _hook_wired(hook_file, project, env)}


def _server_wired(path: Path, project: Path, env: Mapping[str, str]) -> Wired:
    entry = _read_json(path).get("mcpServers", {})
    entry = entry.get(SERVER_NAME) if isinstance(entry, dict) else None
    if not isinstance(entry, dict):
        return Wired(str(path), False)
    args = [str(a).replace(PROJECT_DIR_ARG, str(project)) for a in entry.get("args") or []]
    return Wired(str(path), True, str(entry.get("command", "")),
                 _named_store(args, project, env))


def _hook_wired(path: Path, project: Path, env: Mapping[str, str]) -> Wired:
    hooks = _read_json(path).get("hooks", {})
    groups = hooks.get("UserPromptSubmit", []) if isinstance(hooks, dict) else []
    for group in groups if isinstance(groups, list) else []:
        for hook in group.get("hooks", []) if isinstance(group, dict) else []:
            if is_our_hook(hook):
                command = str(hook["command"]).replace(PROJECT_DIR_SHELL,
                                                       shlex.quote(str(project)))
                try:
                    words = shlex.split(command)
                except ValueError:
                    return Wired(str(path), True, command, "")
                return Wired(str(path), True, words[0] if words else "",
                             _named_store(words[1:], project, env))
    return Wired(str(path), False)


def _named_store(args: list[str], project: Path, env: Mapping[str, str]) -> str:
    """The store a command line resolves to when Claude Code runs it in ``project``."""
    try:
        if "--notes" in args and args.index("--notes") + 1 < len(args):
            return str(choose_store(args[args.index("--notes") + 1], env, project).path)
        return str(choose_store(None, env, project, "--example" in args).path)
    except NotesError:
        return ""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _wiring_problems(status: Status, store: Path, project: Path) -> None:
    wired = [(scope, kind, w) for scope, parts in status.claude_code.items()
             for kind, w in parts.items() if w.present]
    if not wired:
        status.problems.append(Problem("warning", "Claude Code is not wired to a store for "
                                       f"{project}: `notes install claude-code` (add --scope "
                                       "user for every project)"))
    for scope, kind, w in wired:
        what = f"the {scope} {'MCP server' if kind == 'server' else 'prompt hook'} ({w.file})"
        if not _runnable(w.command):
            status.problems.append(Problem("error", f"{what} runs {w.command!r}, which is not "
                                           "there; run `notes install claude-code` again"))
        if w.store is not None and not Path(w.store or "/nonexistent").is_dir():
            status.problems.append(Problem("error", f"{what} names the store {w.store or '?'}"
                                           ", which does not exist; `notes init` it, or run "
                                           "`notes install claude-code` again"))
        elif w.store and Path(w.store) != store:
            status.problems.append(Problem("warning", f"{what} uses the store {w.store}, not "
                                           f"{store}"))
    for scope, parts in status.claude_code.items():
        if parts["server"].present != parts["hook"].present:
            have = "server" if parts["server"].present else "hook"
            status.problems.append(Problem("warning", f"only the {have} is wired at {scope} "
                                           "scope; `notes install claude-code"
                                           + (" --scope user" if scope == "user" else "")
                                           + "` adds both"))


def _runnable(command: str) -> bool:
    if not command:
        return False
    if os.sep in command:
        return os.access(command, os.X_OK)
    return shutil.which(command) is not None
