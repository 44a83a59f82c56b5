"""`notes new`, `state`, `log`: the writes (text on stdin)."""

from __future__ import annotations

import click

from memory.fronts import render
from memory.fronts.cli import (
    _emit,
    _notes,
    _split,
    _stdin,
    cli,
    json_option,
)


@cli.command()
@click.argument("note")
@click.option("--title", "-t", required=True, help="The note's title.")
@click.option("--tags", default="", help="Comma-separated tags.")
@click.option("--aliases", default="", help="Comma-separated other names (e.g. Spanish).")
@click.option("--shared", is_flag=True, help="A note of no project, seen from every project "
              "(default inside a project: a note of that project).")
@json_option
@click.pass_context
def new(ctx: click.Context, note: str, title: str, tags: str, aliases: str, shared: bool,
        as_json: bool) -> None:
    """Create NOTE with an empty state and history; inside a project (see `notes status`),
    a note of that project unless --shared."""
    notes = _notes(ctx)
    result = notes.create_note(note, title, _split(tags), _split(aliases),
                               None if shared else notes.project)
    _emit(as_json, result, render.write_result)


allow_empty_option = click.option("--allow-empty", is_flag=True,
                                  help="Accept an empty text on stdin (otherwise refused, "
                                  "exit 2).")


@cli.command()
@click.argument("note")
@allow_empty_option
@json_option
@click.pass_context
def state(ctx: click.Context, note: str, allow_empty: bool, as_json: bool) -> None:
    """Replace NOTE's state with the text on stdin (the heading is kept). An empty text is
    refused unless --allow-empty (which clears the state)."""
    result = _notes(ctx).write_state(note, _stdin("the new state"), allow_empty)
    _emit(as_json, result, render.write_result)


@cli.command()
@click.argument("note")
@click.option("--title", "-t", required=True, help="The entry's title.")
@click.option("--date", "-d", help="YYYY-MM-DD or 'YYYY-MM-DD HH:MM' (default: today).")
@allow_empty_option
@json_option
@click.pass_context
def log(ctx: click.Context, note: str, title: str, date: str | None, allow_empty: bool,
        as_json: bool) -> None:
    """Append a dated history entry to NOTE; its body is read from stdin (an empty body is
    refused unless --allow-empty)."""
    result = _notes(ctx).append_history(note, title, _stdin("the entry's body"), date,
                                        allow_empty)
    _emit(as_json, result, render.write_result)
