"""`notes bench`: evidence reached per token on a store (`from-locomo`, `from-realmem`,
`from-transcripts`, then `run`). What measures the project itself (speed and scale, every
visible bench) runs from a checkout: ``python -m benchmarks`` (benchmarks/cli.py)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import click

from memory.errors import ConfigError, NotesError
from memory.fronts.cli import (
    _split,
    cli,
    json_option,
    output_folder,
)
from memory.retrieval.levers import DEFAULT as DEFAULT_LEVERS
from memory.retrieval.levers import NAMES as LEVER_NAMES


@cli.group()
def bench() -> None:
    """Evidence reached per token on a store: build a bench (from your own transcripts, or
    LoCoMo, RealMem), run the retrieval policies on it, report. (The project's own measures,
    perf and visible, run from a checkout: python -m benchmarks.)

    \b
    Examples:
      notes bench from-transcripts ~/.claude/projects/-home-me-app --notes ~/notes --out my-bench
      notes bench run my-bench
    """


_bench_out = click.option("--out", required=True, type=click.Path(file_okay=False,
                          path_type=Path), help="The bench folder to write (notes/ and "
                          "questions.jsonl).")
_bench_force = click.option("--force", is_flag=True, help="Replace a bench already in --out.")


@bench.command("from-locomo")
@click.argument("source", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_bench_out
@_bench_force
@click.option("--follow-ups", is_flag=True, help="Vague follow-ups: take the speakers' names "
              "out of each question; its context is the previous question and its answer.")
@click.option("--note-per-session", is_flag=True, help="One note per session "
              "(CONV/session-NN, 272 for locomo10), so routing must pick the session; a "
              "question whose evidence spans sessions has several gold notes.")
def bench_from_locomo(source: Path, out: Path, force: bool, follow_ups: bool,
                      note_per_session: bool) -> None:
    """LoCoMo's locomo10.json as a bench: a note per conversation (or per session), an entry
    per session, a line per turn; evidence turns become answer lines. Prints the counts.

    \b
    Example:
      notes bench from-locomo locomo10.json --out locomo-bench
    """
    from memory.bench.locomo import locomo_to_bench

    output_folder(out, "--out")
    click.echo(locomo_to_bench(source, out, force, follow_ups, note_per_session).summary())
    click.echo(f"bench written to {out}")


@bench.command("from-realmem")
@click.argument("source", metavar="DIR", type=click.Path(exists=True, file_okay=False,
                path_type=Path))
@_bench_out
@_bench_force
@click.option("--persona", help="Only this persona (e.g. Adeleke_Okonjo or adeleke-okonjo); "
              "default: all ten in one store.")
def bench_from_realmem(source: Path, out: Path, force: bool, persona: str | None) -> None:
    """RealMem's persona files (DIR: the folder of *_dialogues_256k.json, or its parent) as a
    bench: a note per session, a line per turn; each query turn is a question whose answer
    lines are the turns its reply's memory came from, asked without its own and later
    sessions. Prints the counts.

    \b
    Example:
      notes bench from-realmem RealMem/ --persona Adeleke_Okonjo --out realmem-bench
    """
    from memory.bench.realmem import realmem_to_bench

    output_folder(out, "--out")
    click.echo(realmem_to_bench(source, out, force, persona).summary())
    click.echo(f"bench written to {out}")


@bench.command("from-transcripts")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--notes", "notes_dir", required=True, type=click.Path(exists=True,
              file_okay=False, path_type=Path), help="Today's notes folder the agent used.")
@_bench_out
@_bench_force
@click.option("--path-map", "path_map", multiple=True, metavar="OLD=NEW",
              help="The sessions ran elsewhere: read their file paths under OLD as under NEW "
              "(e.g. /home/me/project=NOTES/project); repeatable, the first match wins.")
def bench_from_transcripts(paths: tuple[Path, ...], notes_dir: Path, out: Path,
                           force: bool, path_map: tuple[str, ...]) -> None:
    """Claude Code transcripts (.jsonl files or folders) as a bench: per turn, the memory lines
    the agent read and recalled in its reply; the notes are copied into the bench.

    \b
    Example:
      notes bench from-transcripts ~/.claude/projects/-home-me-app --notes ~/notes --out my-bench
    """
    from memory.bench.mining import transcripts_to_bench
    from memory.bench.transcripts import parse_path_map

    try:
        mapping = parse_path_map(path_map)
    except NotesError as exc:
        raise click.UsageError(str(exc)) from exc
    output_folder(out, "--out")
    counts = transcripts_to_bench(list(paths), notes_dir, out, force, mapping)
    click.echo(counts.summary())
    for line in counts.stale[:20]:
        click.echo(f"no longer in the notes: {line}")
    if len(counts.stale) > 20:
        click.echo(f"… and {len(counts.stale) - 20} more lines no longer in the notes")
    click.echo(f"bench written to {out}")


def _list_levers(ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """``--levers list``: the registered levers (:mod:`memory.retrieval.stages`), then exit."""
    if value is None or value.strip() != "list" or ctx.resilient_parsing:
        return value
    from memory.retrieval.levers import registered

    rows = registered()
    width = max(len(row.name) for row in rows)
    for row in rows:
        state = "on " if row.default else "off"
        click.echo(f"{row.name:<{width}}  {state}  {row.summary}  [{', '.join(row.points)}]")
    click.echo("\nturn them on or off with --levers NAME,+NAME,-NAME (or NOTES_LEVERS for a "
               "store); each is a stage in memory/retrieval/stages/")
    ctx.exit()


@bench.command("run")
@click.argument("bench_dir", metavar="BENCH", type=click.Path(exists=True, file_okay=False,
                path_type=Path))
@click.option("--policies", help="Comma-separated, from: ladder@1, ladder@2, ladder-oracle, "
              "ladder-zoom@1, recall@500, recall@1000, recall@2000, recall-flat@1000, "
              "fragments@2, fragments@5, fragments@10, fragments@20, fragments@40, "
              "fragments@80, hybrid, hook, states, full (default: all).")
@click.option("--limit", type=click.IntRange(1), help="Run only the first N questions.")
@click.option("--half", type=click.Choice(["tuning", "test", "all"]), default="all",
              show_default=True, help="Run only one half of the questions (split by a hash of "
              "their id): choose levers on tuning, report test.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Where to write the report (default: BENCH/report/).")
@click.option("--backend", "backends", default="whoosh", show_default=True,
              help="Comma-separated index backends (whoosh, tantivy); with several, every "
              "policy runs on each and one report shows them side by side.")
@click.option("--levers", help="Retrieval levers for this run: comma-separated names from "
              f"{', '.join(LEVER_NAMES)} (only those on), +NAME/-NAME (the default, "
              f"{', '.join(DEFAULT_LEVERS.on())}, with or without NAME), none, all "
              "(default: the library's default); `--levers list` lists them, what each "
              "does and where it acts.", is_eager=True, callback=_list_levers)
@click.option("--vectors", type=click.Path(file_okay=False, path_type=Path),
              help="With the semantic lever: keep the notes' vectors here, so that the next "
              "run embeds only notes it has not seen (default: a temporary folder).")
@json_option
def bench_run(bench_dir: Path, policies: str | None, limit: int | None, half: str,
              out: Path | None, backends: str, levers: str | None, vectors: Path | None,
              as_json: bool) -> None:
    """Run the policies on a bench (index in a temporary folder, usage log off) and write the
    report: Markdown, JSON, per-question results and a plot of hit rate against tokens.

    \b
    Example:
      notes bench run my-bench --policies ladder@1,recall@1000,fragments@5
    """
    import shlex

    from memory.bench.report import FILES, PLOT_HINT, policy_table, routing_text, write_report
    from memory.bench.run import run_backends
    from memory.bench.split import check_half
    from memory.retrieval.levers import parse_levers

    chosen = parse_levers(levers)
    _require_backends(_split(backends))
    if vectors is not None:
        output_folder(vectors, "--vectors")
    target = output_folder(out or bench_dir / "report", "--out" if out else "report")
    progress = _bench_progress()
    run = run_backends(bench_dir, _split(backends), _split(policies or "") or None, limit,
                       progress=progress, levers=chosen, vectors=vectors,
                       half=check_half(half))
    if progress is not None:
        click.echo("", err=True)
    data = write_report(run, target, "notes " + shlex.join(sys.argv[1:]))
    if data["plot"] is None:
        click.echo(f"no plot: {PLOT_HINT}", err=True)
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(policy_table(data["policies"]) + "\n\n" + routing_text(data))
    click.echo(f"\n{len(run.results)} questions in {run.seconds:.0f} s; report in "
               f"{target / FILES['markdown']}")


def _require_backends(names: list[str]) -> None:
    """Refuse, naming the flag, a --backend whose package is not installed (before any
    bench is built or run)."""
    from memory.config import BACKEND_PACKAGES, BACKEND_PINS, backend_installed

    for name in names:
        if name in BACKEND_PACKAGES and not backend_installed(name):
            raise ConfigError(f"--backend {name} needs the {BACKEND_PACKAGES[name]} package: "
                              f"install the extra (pip install 'notes-memory[{name}]'; with "
                              f"pipx: pipx inject notes-memory {BACKEND_PINS[name]}), or leave "
                              f"{name} out of --backend")


def _bench_progress() -> Callable[[int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int) -> None:
        if done % 50 == 0:
            click.echo(f"\r{done} questions run", err=True, nl=False)

    return show
