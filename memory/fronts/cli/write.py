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
    project_key,
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
    a note of that project unless --shared.

    \b
    Example:
      notes new infra/redis --title "Redis" --tags cache,infra
    """
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
    refused unless --allow-empty (which clears the state).

    \b
    Example:
      echo "- Redis 7 on the cache hosts, allkeys-lru." | notes state infra/redis
    """
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
    refused unless --allow-empty).

    \b
    Example:
      echo "Sessions moved to their own Redis." | notes log infra/redis --title "Sessions split"
    """
    result = _notes(ctx).append_history(note, title, _stdin("the entry's body"), date,
                                        allow_empty)
    _emit(as_json, result, render.write_result)


# -- managing notes ------------------------------------------------------------------------
@cli.command()
@click.argument("note")
@click.option("--restore", is_flag=True, help="Put NOTE back from the trash (its last "
              "deleted copy) instead.")
@json_option
@click.pass_context
def delete(ctx: click.Context, note: str, restore: bool, as_json: bool) -> None:
    """Move NOTE to a dated trash in the state folder (<state>/trash/<date-time>/), out of
    the index and of what `notes check` expects; --restore puts it back.

    \b
    Examples:
      notes delete people/old-contractor
      notes delete --restore people/old-contractor"""
    from memory.services.manage import delete_note, restore_note

    notes = _notes(ctx)
    done = restore_note(notes, note) if restore else delete_note(notes, note)
    _emit(as_json, done, render.managed)


@cli.command()
@click.argument("old", metavar="NOTE")
@click.argument("new", required=False)
@click.option("--project", "project", metavar="KEY",
              help="Make it a note of this project: its key as `notes status` shows it, `.` "
              "for this folder's project, `none` for a note of no project.")
@json_option
@click.pass_context
def move(ctx: click.Context, old: str, new: str | None, project: str | None,
         as_json: bool) -> None:
    """Rename NOTE to NEW (the file, its recorded history, its usage rows, the links to it
    and where it was imported from follow), or change its project with --project.

    \b
    Examples:
      notes move shop/deploy howto/deploy
      notes move people/ana --project none"""
    from memory.services.manage import move_note

    notes = _notes(ctx)
    key = None if project is None else project_key(notes, project)
    _emit(as_json, move_note(notes, old, new, key), render.managed)
