"""The `notes` commands that set a store up: init, import, status (doctor), install and
uninstall claude-code. Thin click commands over :mod:`memory.services.stores`,
:mod:`memory.services.importer`, :mod:`memory.services.status` and
:mod:`memory.services.install`; registered on the group in :mod:`memory.fronts.cli`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click

from memory.config import Config, load_config
from memory.errors import ConfigError
from memory.fronts import render
from memory.locate import StoreChoice, choose_store, default_store, user_state_dir

if TYPE_CHECKING:  # the modules behind the commands load when a command runs, so that the
    # hook and the ladder commands do not pay for them at start
    from memory.services.importer import ImportReport
    from memory.services.install import FileChange
    from memory.services.status import Status
    from memory.services.stores import InitResult

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")
project_option = click.option("--project", type=click.Path(file_okay=False, path_type=Path),
                              default=".", help="The project folder (default: this one).")
scope_option = click.option("--scope", type=click.Choice(["project", "user"]),
                            default="project", show_default=True,
                            help="project: .mcp.json + .claude/settings.json in the project; "
                                 "user: ~/.claude.json + ~/.claude/settings.json.")


class _Root(Protocol):
    notes_dir: str | None
    state_dir: str | None
    example: bool

    def config(self, cwd: Path | None = None) -> Config: ...


def _root(ctx: click.Context) -> _Root:
    root: _Root = ctx.find_root().obj
    return root


def _choice(root: _Root, cwd: Path | None = None) -> StoreChoice:
    return choose_store(root.notes_dir, os.environ, cwd, root.example)


def _config_for(root: _Root) -> Callable[[Path], Config]:
    return lambda store: load_config(store, root.state_dir)


def _store_or_new_default(ctx: click.Context, cwd: Path | None, dry_run: bool) -> Config:
    """The store in use, said on stderr's first line; when there is none and it would be
    the per-user default, that default is created first (as `notes init` would; a dry run
    only says it would be, and plans against the empty folder)."""
    from memory.services.stores import describe_store, init_store

    root = _root(ctx)
    choice = _choice(root, cwd)
    made = ""
    if choice.source == "default" and not choice.path.exists():
        made = f"your default store {choice.path} (as `notes init` does)"
        if dry_run:
            made = "would create " + made
            config = load_config(None, root.state_dir, cwd=cwd, must_exist=False)
        else:
            init_store(choice.path, config_for=_config_for(root))
            made = "created " + made
            config = root.config(cwd)
    else:
        config = root.config(cwd)
    click.echo(describe_store(config), err=True)
    if made:
        click.echo(made, err=True)
    return config


# -- init ---------------------------------------------------------------------------------
@click.command()
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Make a store even inside another store or in a "
              "folder holding files that are not notes.")
@json_option
@click.pass_context
def init(ctx: click.Context, folder: Path | None, force: bool, as_json: bool) -> None:
    """Make FOLDER a store (default: --notes, else your per-user store): the marker
    .notes.toml, a .gitignore for the derived .notes/ folder, and a starter note. Safe to run
    twice.

    \b
    Example:
      notes init ~/notes
    """
    from memory.services.stores import init_store

    root = _root(ctx)
    named = Path(root.notes_dir) if root.notes_dir else None
    target = folder or named or default_store(os.environ)
    result = init_store(target, force, _config_for(root))
    try:
        found_here = choose_store(None, os.environ).path == result.store
    except ConfigError:
        found_here = False
    click.echo(render.as_json(result) if as_json else _init_text(result, found_here))


def _init_text(result: InitResult, found_here: bool) -> str:
    if not result.created:
        return f"{result.store} is already a store; nothing to do"
    named = "" if found_here else f"--notes {result.store} "
    return (f"created the store {result.store}: {', '.join(result.written)}\n"
            f"next, in your project: `notes {named}import --claude` brings in the memory "
            f"Claude Code has of it, `notes {named}install claude-code` wires it")


# -- import -------------------------------------------------------------------------------
@click.command("import")
@click.argument("sources", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--claude", is_flag=True, help="This project's Claude Code memory: its auto "
              "memory folder (~/.claude/projects/…/memory) and its CLAUDE.md files.")
@project_option
@click.option("--prefix", help="Put the notes under this folder of the store (default: "
              "claude/<project> for --claude, the folder's name for a folder).")
@click.option("--dry-run", is_flag=True, help="Print what would be created; write nothing.")
@json_option
@click.pass_context
def import_(ctx: click.Context, sources: tuple[Path, ...], claude: bool, project: Path,
            prefix: str | None, dry_run: bool, as_json: bool) -> None:
    """Bring existing memory in: Markdown files or folders (front matter optional), or with
    --claude this project's Claude Code memory. Each file becomes a note with every line
    kept; the sources are only read. Importing again brings in what changed at the source
    (new dated lines as entries, a changed state with the old one kept in the history),
    never twice; Claude Code's memory is also followed by `notes watch` and the hook.

    \b
    Example:
      notes import --claude --dry-run
    """
    from memory.api import Notes
    from memory.services.importer import claude_sources, import_sources, path_sources
    from memory.state.imports import Folder

    if not sources and not claude:
        raise click.UsageError("give Markdown files or folders to import, or --claude for "
                               "this project's Claude Code memory")
    config = _store_or_new_default(ctx, None, dry_run)
    skip = config.notes_dir
    found = path_sources(list(sources), prefix, skip)
    notices: list[str] = []
    folders: dict[str, Folder] = {}
    if claude:
        more, notices, folders = claude_sources(project.resolve(), Path.home(), prefix, skip)
        found += more
    notes = None if dry_run else Notes(config, front="cli")
    try:
        report = import_sources(config, found, notes, notices, folders=folders)
    finally:
        if notes is not None:
            notes.close()
    click.echo(render.as_json(report) if as_json else _import_text(report))


def _import_text(report: ImportReport) -> str:
    from memory.services.import_sync import MOVED  # loaded by the import that ran

    rows = [(i.action, i.note, i.source, i.entries if i.note and i.action in
             ("create", "created", "update", "updated") else "", i.reason)
            for i in report.items]
    lines = [render.table(("action", "note", "source", "entries", "why"), rows)] if rows \
        else ["nothing to import"]
    lines += [f"note: {n}" for n in report.notices]
    made = report.count("create", "created")
    verb = "to create" if report.dry_run else "created"
    updates = [i for i in report.items if i.action in ("update", "updated")]
    moved = sum(i.reason == MOVED for i in updates)
    summary = (f"{made} notes {verb}, {report.count('unchanged')} unchanged, "
               f"{len(updates) - moved} {'to update' if report.dry_run else 'updated'} "
               f"(changed at the source), "
               + (f"{moved} with their provenance moved to the state folder, " if moved else "")
               + f"{report.count('skipped')} skipped")
    lines.append(summary + (" (dry run: nothing written)" if report.dry_run else ""))
    return "\n".join(lines)


# -- status -------------------------------------------------------------------------------
@click.command()
@project_option
@json_option
@click.pass_context
def status(ctx: click.Context, project: Path, as_json: bool) -> None:
    """The store in use and why, its notes and tokens, index freshness, the usage log,
    whether Claude Code is wired (which files), and every problem with the next step; exit 1
    when something is broken.

    \b
    Example:
      notes doctor
    """
    from memory.services.status import store_status

    root = _root(ctx)
    config: Config | None = None
    failure = None
    try:
        choice = _choice(root)
    except ConfigError as exc:
        choice, failure = StoreChoice(Path.cwd(), "found"), str(exc)
    if failure is None:
        try:
            config = root.config()
        except ConfigError as exc:
            failure = str(exc)
    found = store_status(config, choice, failure, project.resolve(), Path.home(), os.environ)
    click.echo(render.as_json({**_plain_status(found), "ok": found.ok}) if as_json
               else _status_text(found))
    if not found.ok:
        ctx.exit(1)


def _plain_status(found: Status) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(render.as_json(found))
    return data


def _status_text(found: Status) -> str:
    store = found.store
    lines = [str(store["why"] or f"store {store['path']}"), _project_text(found.project)]
    if found.index:
        stale = found.index["stale"] + found.index["removed"]
        fresh = "not built yet" if not found.index["built"] else (
            f"{len(stale)} notes changed since indexed: {', '.join(stale[:10])}" if stale
            else "up to date")
        lines += [f"notes: {found.notes} ({found.tokens:,} tokens, cl100k estimates)",
                  f"index: {found.index['backend']} at {found.index['path']}: {fresh}"]
    if found.usage_log:
        log = found.usage_log
        kept = {"plain": "queries kept as typed", "hashed": "queries kept hashed",
                 "off": "no query text kept"}[log["queries"]]
        lines.append(f"usage log: {'on' if log['enabled'] else 'off'}, {log['bytes']:,} "
                     f"bytes of at most {log['max_mb']} MB, rows kept {log['retention_days']} "
                     f"days, {kept} (NOTES_USAGE_QUERIES) ({log['path']})")
    for scope, parts in found.claude_code.items():
        shown = [f"{kind} in {w.file}" + (f" (store {w.store})" if w.store else "")
                 for kind, w in parts.items() if w.present]
        lines.append(f"claude code, {scope}: " + ("; ".join(shown) if shown else "not wired"))
    if found.nightly:
        lines.append(_nightly_text(found.nightly))
    if found.check:
        lines.append(f"check: {found.check['errors']} errors, {found.check['warnings']} "
                     "warnings")
    lines += [f"{p.severity}: {p.message}" for p in found.problems] or ["no problems"]
    return "\n".join(lines)


def _project_text(project: dict[str, Any]) -> str:
    if project.get("key") is None:
        return f"project: none ({project['why']})"
    counts = ""
    if "notes" in project:
        counts = (f"; {project['notes']} notes of it and {project['shared']} of no project "
                  f"are searched here, {project['other_projects']} of other projects are not")
    return f"project: {project['key']} (from {project['why']}){counts}"


def _nightly_text(nightly: dict[str, Any]) -> str:
    if not nightly["installed"]:
        return "nightly report: not installed (`notes install nightly`)"
    where = "cron" if nightly["scheduler"] == "cron" else f"systemd timer {nightly['where']}"
    ran = nightly["last_run"]
    if ran is None:
        last = "not run yet"
    elif ran["ok"]:
        last = f"last run {ran['ran']}, report {ran['report']}"
    else:
        last = f"last run {ran['ran']} failed ({nightly['log']})"
    return f"nightly report: installed ({where}); {last}"


# -- install / uninstall ------------------------------------------------------------------
@click.group()
def install() -> None:
    """Register this store with an agent front end.

    \b
    Example:
      notes install claude-code --scope user
    """


@install.command("claude-code")
@scope_option
@project_option
@click.option("--dry-run", is_flag=True, help="Print the changes without writing them.")
@click.pass_context
def install_claude(ctx: click.Context, scope: str, project: Path, dry_run: bool) -> None:
    """Register the MCP server and the UserPromptSubmit hook with Claude Code (merging into
    existing settings; a backup of each changed file; running it twice changes nothing).
    The store: --notes, NOTES_DIR, the nearest store from the project, or your default
    store (created if missing); never the example unless named.

    \b
    Example:
      notes install claude-code --dry-run
    """
    from memory.services.install import install_claude_code, plan_wiring

    project = project.resolve()
    config = _store_or_new_default(ctx, project, dry_run)
    source = config.store_source
    if scope == "user" and source == "found":  # never pin one project's store for all
        source = "default"
        default = default_store(os.environ)
        made = "" if default.exists() else _new_default_store(ctx, default, dry_run)
        click.echo(f"note: a user-scope install names no store: each project uses its "
                   f"nearest store (here {config.notes_dir}), any other your default store "
                   f"{default}{made}; to use one store everywhere, name it with --notes DIR",
                   err=True)
    wiring = plan_wiring(scope, project, _notes_bin(), config.notes_dir, source,
                         shutil.which("notes"))
    for notice in wiring.notices:
        click.echo(f"note: {notice}", err=True)
    _show(install_claude_code(scope, project, Path.home(), wiring, _backups(), dry_run),
          dry_run)


def _notes_bin() -> str:
    """The `notes` command running now, by its absolute path when it was run by one."""
    return os.path.abspath(sys.argv[0]) if os.sep in sys.argv[0] else \
        (shutil.which("notes") or sys.argv[0])


def _new_default_store(ctx: click.Context, default: Path, dry_run: bool) -> str:
    """Make the per-user default store (as `notes init` does); what was done, for a note."""
    from memory.services.stores import init_store

    if dry_run:
        return " (it would be created, as `notes init` does)"
    init_store(default, config_for=_config_for(_root(ctx)))
    return " (created now, as `notes init` does)"


@click.group()
def uninstall() -> None:
    """Remove what `notes install` added to an agent front end.

    \b
    Example:
      notes uninstall claude-code --dry-run
    """


@uninstall.command("claude-code")
@scope_option
@project_option
@click.option("--dry-run", is_flag=True, help="Print the changes without writing them.")
def uninstall_claude(scope: str, project: Path, dry_run: bool) -> None:
    """Remove exactly the MCP server and the prompt hook that install added (other servers,
    hooks and settings untouched; a backup of each changed file; a file install created and
    nothing else uses is deleted).

    \b
    Example:
      notes uninstall claude-code --dry-run
    """
    from memory.services.install import uninstall_claude_code

    _show(uninstall_claude_code(scope, project.resolve(), Path.home(), _backups(), dry_run),
          dry_run)


def _backups() -> Path:
    """Where install and uninstall keep the backups of the settings files they change."""
    return user_state_dir(os.environ) / "backups"


def _show(changes: list[FileChange], dry_run: bool) -> None:
    for change in changes:
        if not change.changed:
            click.echo(f"unchanged: {change.path}")
        elif dry_run:
            click.echo(change.diff() or f"would write {change.path}")
        else:
            saved = f" (backup: {change.backup})" if change.backup else ""
            click.echo(f"{'removed' if change.remove else 'updated'}: {change.path}{saved}")


def register(group: click.Group) -> None:
    """Add these commands to the `notes` group."""
    for command in (init, import_, status, install, uninstall):
        group.add_command(command)
    group.add_command(status, name="doctor")
