"""The `notes` command line: a thin front end over :mod:`memory.api`.

The only package that imports click. This module holds the group, the store it works on, and
what the commands share; the commands live by group: :mod:`.read` (the ladder), :mod:`.write`,
:mod:`.maintain` (index, embed, check, watch, promote), :mod:`.serve` (serve, tokens, hook),
:mod:`.bench` and :mod:`.setup` (init, import, status, install, uninstall). Errors from the
library (NotesError) become ``Error: …`` on stderr and exit status 1; usage errors exit 2.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from memory.api import Notes
from memory.config import Config, load_config
from memory.errors import EmptyInput, InvalidArgument, NotesError
from memory.fronts import render
from memory.fronts.cli.setup import register as register_setup_commands
from memory.project import HERE, SHARED, find_project
from memory.state.storage_errors import check_folder, path_error


class NotesCommand(click.Command):
    """A command whose usage error from the library (an empty text on stdin) shows its own
    usage (``notes state [OPTIONS] NOTE``), not the group's."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except EmptyInput as exc:  # a usage error: exit 2, with the way to do it on purpose
            raise click.UsageError(str(exc), ctx) from exc


class NotesGroup(click.Group):
    """Turns library errors into ``Error: …`` and exit status 1; its commands are
    :class:`NotesCommand` and its groups are of this class."""

    command_class = NotesCommand
    group_class = type  # a group made with @group.group() is a NotesGroup too

    def invoke(self, ctx: click.Context) -> Any:
        return translated(ctx, lambda: super(NotesGroup, self).invoke(ctx))


def translated(ctx: click.Context, call: Callable[[], Any]) -> Any:
    """``call()``, with the library's errors as the command line shows them: a usage error
    (exit 2), else ``Error: …`` (exit 1)."""
    try:
        return call()
    except EmptyInput as exc:
        raise click.UsageError(str(exc), ctx) from exc
    except NotesError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:  # a path given on the command line that the OS refuses
        if exc.filename is None or isinstance(exc, BrokenPipeError):
            raise
        raise click.ClickException(str(path_error(exc))) from exc


@click.group(cls=NotesGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--notes", "notes_dir", type=click.Path(file_okay=False),
              help="Notes folder (default: $NOTES_DIR, else the nearest store walking up "
                   "from here, else your default store; see `notes status`).")
@click.option("--example", is_flag=True,
              help="Use the bundled example store notes_example/ (a demo, not your memory).")
@click.option("--state-dir", type=click.Path(file_okay=False), envvar="NOTES_STATE_DIR",
              help="Where the index lives (default: NOTES/.notes, or a cache folder when "
                   "the notes folder is read-only).")
@click.version_option(package_name="notes-memory")
@click.pass_context
def cli(ctx: click.Context, notes_dir: str | None, example: bool,
        state_dir: str | None) -> None:
    """A note-based memory for coding agents: suggest notes, map them, read one section.

    \b
    Example:
      notes --example suggest "how do we deploy to production"
    """
    ctx.obj = _LazyNotes(notes_dir, state_dir, example)


class _LazyNotes:
    """Resolves the configuration once, when a command first needs the store."""

    def __init__(self, notes_dir: str | None, state_dir: str | None,
                 example: bool = False) -> None:
        self.notes_dir, self.state_dir, self.example = notes_dir, state_dir, example
        self._notes: Notes | None = None

    def config(self, cwd: Path | None = None) -> Config:
        return load_config(self.notes_dir, self.state_dir, cwd=cwd, example=self.example)

    def get(self) -> Notes:
        """The store, seen from the project of the current folder (docs/projects.md)."""
        if self._notes is None:
            notes = Notes(self.config(), front="cli")
            found = find_project(Path.cwd(), notes.config.notes_dir)
            self._notes = notes.in_project(found.key if found else None)
        return self._notes


def _notes(ctx: click.Context, all_projects: bool = False) -> Notes:
    """The store as this folder's project sees it (every note with ``all_projects``)."""
    lazy: _LazyNotes = ctx.obj
    notes = lazy.get()
    return notes.in_project(None) if all_projects else notes


all_projects_option = click.option(
    "--all-projects", is_flag=True,
    help="Search the notes of every project, not only this folder's project and the "
    "notes of no project.")


def project_key(notes: Notes, value: str) -> str:
    """What ``--project`` names: a project key as `notes status` shows it, ``.`` for this
    folder's project, ``none`` for the notes of no project ("")."""
    if value == SHARED:
        return ""
    if value == HERE:
        if notes.project is None:
            raise InvalidArgument("this folder is in no project (see `notes status`); name "
                                  "the project's key, or `none` for the notes of no project")
        return notes.project
    return " ".join(value.split())


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for programs.")


def _emit(as_json: bool, value: Any, text: Callable[[Any], str]) -> None:
    click.echo(render.as_json(value) if as_json else text(value))


context_option = click.option("--context", "-c", metavar="TEXT",
                              help="Recent conversation: it helps a vague query, never "
                              "outranks what the query names.")
date_option = click.option("--date", "asked_on", type=click.DateTime(["%Y-%m-%d"]),
                           help="The day the question is asked, for 'last week', 'en "
                           "octubre' (default: today).")


def _day(asked_on: dt.datetime | None) -> dt.date | None:
    return asked_on.date() if asked_on else None



def output_folder(path: Path, option: str) -> Path:
    """Check, before any work, that the folder an option names can be made (nothing is made
    yet): a path that cannot be a folder is one clear error at once, not a traceback after a
    long run."""
    return check_folder(path, f"the {option} folder")


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _stdin(what: str) -> str:
    if sys.stdin is None or sys.stdin.isatty():
        raise click.UsageError(f"give {what} on standard input (for example: echo '…' | notes "
                               "…)")
    raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read()
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.UsageError(f"{what} on standard input is not UTF-8 text (byte "
                               f"0x{raw[exc.start]:02x} at offset {exc.start}); re-encode it "
                               "as UTF-8 and retry") from None


register_setup_commands(cli)  # init, import, status/doctor, install, uninstall
# the other command groups register themselves on `cli` when imported
from memory.fronts.cli import (  # noqa: E402, F401
    bench,
    bench_promote,
    maintain,
    nightly,
    read,
    serve,
    write,
)


def main() -> None:
    cli(prog_name="notes")
