"""The `notes` command line: a thin front end over :mod:`memory.api`.

The only package that imports click. This module holds the group, the store it works on, and
what the commands share; the commands live by group: :mod:`.read` (the ladder), :mod:`.write`,
:mod:`.maintain` (index, embed, check, watch, promote), :mod:`.serve` (serve, tokens, hook),
:mod:`.bench` and :mod:`.setup` (init, import, status, install, uninstall). Errors from the
library (NotesError) become ``Error: …`` on stderr and exit status 1; usage errors exit 2.
"""

from __future__ import annotations

import datetime as dt
import importlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memory.config import Config, load_config
from memory.errors import EmptyInput, InvalidArgument, NotesError
from memory.project import HERE, SHARED, find_project
from memory.state.storage_errors import check_folder, path_error

if TYPE_CHECKING:  # memory.api is imported when a command first needs the store (start-up)
    from memory.api import Notes

# The modules that register each command on `cli`, imported when the command is asked for, so
# that `notes suggest` does not load the server's, the bench's or the set-up's modules
# (start-up time of a command: docs/performance.md). `notes --help` loads them all.
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("suggest", "map", "read", "recall", "list"), ("read",)),
    **dict.fromkeys(("new", "state", "log", "delete", "move"), ("write",)),
    **dict.fromkeys(("index", "embed", "check", "watch", "promote"), ("maintain",)),
    **dict.fromkeys(("serve", "tokens", "hook"), ("serve",)),
    "bench": ("bench", "bench_promote"),
    **dict.fromkeys(("init", "import", "status", "doctor", "install", "uninstall"),
                    ("setup", "nightly")),
}


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

    def __init__(self, *args: Any, lazy: Mapping[str, tuple[str, ...]] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})  # command name -> modules that register it

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(self.lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            for module in self.lazy.get(cmd_name, ()):
                _load(module)
        return super().get_command(ctx, cmd_name)

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


@click.group(cls=NotesGroup, lazy=COMMAND_MODULES,
             context_settings={"help_option_names": ["-h", "--help"]})
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
            from memory.api import Notes  # the store's modules load here (start-up time)

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
    from memory.fronts import render  # not loaded by --help and --version (start-up time)

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


_loaded: set[str] = set()


def _load(module: str) -> None:
    """Import a module of commands: importing it registers them on `cli`, or, for a module
    that does not import `cli` (setup), its ``register(cli)`` does."""
    if module in _loaded:
        return
    _loaded.add(module)
    register = getattr(importlib.import_module(f"memory.fronts.cli.{module}"), "register", None)
    if register is not None:
        register(cli)


def load_commands() -> NotesGroup:
    """`cli` with every command registered (`cli.commands` holds only those asked for)."""
    for modules in COMMAND_MODULES.values():
        for module in modules:
            _load(module)
    return cli


def main() -> None:
    cli(prog_name="notes")
