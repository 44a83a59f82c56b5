"""`notes install nightly` and `notes uninstall nightly`: the store's promotion report every
night, by a systemd user timer or a crontab line (:mod:`memory.services.nightly`)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memory.fronts.cli.setup import _choice, _root, _store_or_new_default, install, uninstall
from memory.locate import STATE_FOLDER

if TYPE_CHECKING:  # the service loads when a command runs (subprocess, hashlib: not at start)
    from memory.services.nightly import Change

dry_run_option = click.option("--dry-run", is_flag=True,
                              help="Print the changes without making them.")


@install.command("nightly")
@click.option("--at", "at", default="03:15", show_default=True, metavar="HH:MM",
              help="When it runs every day (local time).")
@click.option("--report-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where the reports go (default: the store's state folder, STATE/reports).")
@click.option("--scheduler", type=click.Choice(["auto", "systemd", "cron"]),
              default="auto",
              show_default=True, help="auto: a systemd user timer where systemd runs your "
              "session, else a line in your crontab.")
@dry_run_option
@click.pass_context
def install_nightly(ctx: click.Context, at: str, report_dir: Path | None, scheduler: str,
                    dry_run: bool) -> None:
    """Run the promotion report of the store in use every night (`notes promote --nightly`,
    every path absolute), with a systemd user timer or a crontab line; running it again
    replaces the store's entry, and `notes status` shows its last run.

    \b
    Example:
      notes install nightly --at 03:30 --dry-run
    """
    from memory.services.nightly import Job, Tools, choose_scheduler, parse_at
    from memory.services.nightly import install as install_job
    from memory.services.nightly_run import default_report_dir

    when = parse_at(at)
    tools = Tools.from_env(os.environ)
    chosen = choose_scheduler(tools, scheduler)  # before a default store is made for it
    config = _store_or_new_default(ctx, None, dry_run)
    own_state = config.state_dir == config.notes_dir / STATE_FOLDER
    reports = report_dir.resolve() if report_dir else default_report_dir(config.state_dir)
    job = Job(config.notes_dir, reports, _notes_command(),
              None if own_state else config.state_dir, when)
    changes = install_job(job, tools, chosen, dry_run)
    if not dry_run:
        reports.mkdir(parents=True, exist_ok=True)
    _show(changes, dry_run)
    how = "a systemd user timer" if chosen == "systemd" else "cron"
    click.echo(f"{'would run' if dry_run else 'runs'} every day at {job.at} ({how}): "
               f"{shlex.join(job.argv())}")
    click.echo(f"reports: {reports}; its last run: `notes status`")


@uninstall.command("nightly")
@dry_run_option
@click.pass_context
def uninstall_nightly(ctx: click.Context, dry_run: bool) -> None:
    """Remove the nightly report of the store in use: its crontab lines, or its timer and
    service (nothing else of your crontab or timers). The reports stay.

    \b
    Example:
      notes uninstall nightly --dry-run
    """
    from memory.services.nightly import Tools
    from memory.services.nightly import uninstall as uninstall_job

    store = _choice(_root(ctx)).path
    changes = uninstall_job(store, Tools.from_env(os.environ), dry_run)
    if not changes:
        click.echo(f"no nightly report of {store} is installed: nothing to do")
    _show(changes, dry_run)


def _notes_command() -> list[str]:
    """The `notes` executable running now, by its absolute path (a pipx install's
    ~/.local/bin/notes, kept as the link so that a reinstall still serves); ``python -m
    memory`` when it was run so."""
    ran = sys.argv[0]
    if os.sep in ran and not ran.endswith(".py") and os.access(ran, os.X_OK):
        return [os.path.abspath(ran)]
    found = shutil.which("notes")
    return [os.path.abspath(found)] if found else [sys.executable, "-m", "memory"]


def _show(changes: list[Change], dry_run: bool) -> None:
    import difflib

    for change in changes:
        if dry_run:
            if change.changed:
                click.echo("".join(difflib.unified_diff(
                    change.before.splitlines(keepends=True),
                    change.after.splitlines(keepends=True),
                    fromfile=f"{change.where} (before)", tofile=f"{change.where} (after)")))
            continue
        verb = ("unchanged" if not change.changed else "removed" if not change.after
                and change.where != "crontab" else "updated")
        click.echo(f"{verb}: {change.where}")
        for call in change.done:
            click.echo(f"ran: {call}")
