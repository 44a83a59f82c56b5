"""`notes suggest`, `map`, `read`, `recall`, `list`: the ladder's rungs."""

from __future__ import annotations

import datetime as dt

import click

from memory.fronts import render
from memory.fronts.cli import (
    _day,
    _emit,
    _notes,
    all_projects_option,
    cli,
    context_option,
    date_option,
    json_option,
    project_key,
)


@cli.command()
@click.argument("query")
@click.option("--limit", "-n", default=5, show_default=True, type=click.IntRange(1, 50),
              help="How many notes to show.")
@context_option
@date_option
@all_projects_option
@json_option
@click.pass_context
def suggest(ctx: click.Context, query: str, limit: int, context: str | None,
            asked_on: dt.datetime | None, all_projects: bool, as_json: bool) -> None:
    """Rung 1: which notes may answer QUERY (Spanish or English, accents optional). Notes
    this shell session read in the last 30 minutes rank a little higher, and so do notes
    with an entry inside a day, week or month QUERY names ("on 3 November", "last week").
    Inside a project, only its notes and the notes of no project are searched.

    \b
    Examples:
      notes suggest "why did the invoice search time out"
      notes --example suggest "rollback" -c "the deploy of friday failed"
    """
    _emit(as_json, _notes(ctx, all_projects).suggest(query, limit, context,
                                                     today=_day(asked_on)),
          render.suggestions)


@cli.command(name="map")
@click.argument("note")
@click.option("--query", "-q", help="Score the sections against these words (and dates).")
@context_option
@date_option
@json_option
@click.pass_context
def map_(ctx: click.Context, note: str, query: str | None, context: str | None,
         asked_on: dt.datetime | None, as_json: bool) -> None:
    """Rung 2: every section of NOTE with its id, kind, date and token cost. With --query:
    match scores, the best entries only, and the matching blocks of long sections; with
    --context too, a vague query leans on the conversation (alone, it scores the sections).

    \b
    Example:
      notes --example map decisions/postgres-partitioning -q retention
    """
    _emit(as_json, _notes(ctx).section_map(note, query, today=_day(asked_on),
                                           context=context), render.section_map)


@cli.command()
@click.argument("note")
@click.argument("section", required=False)
@json_option
@click.pass_context
def read(ctx: click.Context, note: str, section: str | None, as_json: bool) -> None:
    """Rung 3: the text of one SECTION of NOTE: an id, unique prefix or #N; blocks of it
    (ID:b3 or ID:b3-5); or the history entries of a date or range (2026-11-03, 2026-11,
    2026-11-01..2026-11-15); a recall label's reference as it is (20261103:b2 is
    2026-11-03:b2). The whole note when SECTION is left out.

    \b
    Example:
      notes --example read decisions/postgres-partitioning state
    """
    _emit(as_json, _notes(ctx).read_section(note, section), render.section_text)


@cli.command()
@click.argument("query")
@click.option("--budget", "-b", default=1500, show_default=True,
              type=click.IntRange(100, 20_000), help="Most tokens to return.")
@context_option
@date_option
@all_projects_option
@json_option
@click.pass_context
def recall(ctx: click.Context, query: str, budget: int, context: str | None,
           asked_on: dt.datetime | None, all_projects: bool, as_json: bool) -> None:
    """The best evidence for QUERY that fits BUDGET tokens, across the top notes: the best
    note's state, then blocks by score, each labelled with note, section and date (inside
    a project: of its notes and the notes of no project).

    \b
    Example:
      notes --example recall "who rotates the secrets" --budget 800
    """
    _emit(as_json, _notes(ctx, all_projects).recall(query, budget, context,
                                                    today=_day(asked_on)),
          render.recalled)


@cli.command(name="list")
@click.option("--project", "project", metavar="KEY",
              help="Only the notes of this project: its key as `notes status` shows it, `.` "
              "for this folder's project, `none` for the notes of no project.")
@all_projects_option
@json_option
@click.pass_context
def list_(ctx: click.Context, project: str | None, all_projects: bool,
          as_json: bool) -> None:
    """Every note with its title, tokens, entries, last entry date and project (inside a
    project: its notes and the notes of no project).

    \b
    Example:
      notes --example list --all-projects
    """
    notes = _notes(ctx)
    key = None if project is None else project_key(notes, project)
    seen = notes.in_project(None) if all_projects or key is not None else notes
    _emit(as_json, seen.list_notes(key), render.note_list)
