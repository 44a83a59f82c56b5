"""`notes bench`: evidence reached per token (`from-locomo`, `from-realmem`, `from-transcripts`,
`run`, `visible`), and speed and scale (`perf`, from a checkout of the project)."""

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
    """Evidence reached per token: build a bench, run the retrieval policies on it, report."""


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
    per session, a line per turn; evidence turns become answer lines. Prints the counts."""
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
    sessions. Prints the counts."""
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
    the agent read and recalled in its reply; the notes are copied into the bench."""
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
              "(default: the library's default).")
@click.option("--vectors", type=click.Path(file_okay=False, path_type=Path),
              help="With the semantic lever: keep the notes' vectors here, so that the next "
              "run embeds only notes it has not seen (default: a temporary folder).")
@json_option
def bench_run(bench_dir: Path, policies: str | None, limit: int | None, half: str,
              out: Path | None, backends: str, levers: str | None, vectors: Path | None,
              as_json: bool) -> None:
    """Run the policies on a bench (index in a temporary folder, usage log off) and write the
    report: Markdown, JSON, per-question results and a plot of hit rate against tokens."""
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


@bench.command("visible")
@click.option("--benches", help="Comma-separated, from: locomo, locomo-sessions, "
              "locomo-followups, locomo-sessions-followups, example-followups, realmem "
              "(default: all).")
@click.option("--policies", help="Comma-separated, as for `notes bench run` (default: all).")
@click.option("--limit", type=click.IntRange(1), help="Run only the first N questions of "
              "each bench.")
@click.option("--locomo", type=click.Path(dir_okay=False, path_type=Path),
              envvar="NOTES_BENCH_LOCOMO", show_envvar=True, help="LoCoMo's locomo10.json "
              "(default: shared/bench/locomo/locomo10.json beside the checkout, or two levels "
              "up from a worktree); only the LoCoMo benches need it.")
@click.option("--realmem", type=click.Path(file_okay=False, path_type=Path),
              envvar="NOTES_BENCH_REALMEM", show_envvar=True, help="RealMem's folder of "
              "*_dialogues_256k.json (or its parent; default: shared/bench/realmem beside the "
              "checkout, or two levels up from a worktree); only the realmem bench needs it.")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path),
              help="Build the benches here and keep them (default: a temporary folder, "
              "removed at the end).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("visible-report"), show_default=True,
              help="Where to write each bench's report (OUT/BENCH/) and summary.md|json.")
@click.option("--backend", default="whoosh", show_default=True,
              help="The index backend (whoosh, tantivy).")
@click.option("--levers", help="Retrieval levers of every run, as for `notes bench run`.")
@json_option
def bench_visible(benches: str | None, policies: str | None, limit: int | None,
                  locomo: Path | None, realmem: Path | None, work: Path | None, out: Path,
                  backend: str, levers: str | None, as_json: bool) -> None:
    """Rebuild every visible bench (LoCoMo, per session, both follow-up variants, the example
    store's follow-ups, RealMem), run the policies on each, write their reports and print one
    summary: best ladder-family margin over the fragments curve, routing, follow-up keep
    ratios."""
    import shlex

    _import_checkout_benchmarks("visible", Path("benchmarks") / "visible" / "run.py")
    from benchmarks.visible.run import (
        SUMMARY_FILES,
        VisibleOptions,
        check_options,
        parse_benches,
        run_visible,
    )
    from benchmarks.visible.summary import keep_table, summary_table

    try:
        names = parse_benches(benches)
    except NotesError as exc:
        raise click.UsageError(str(exc)) from exc
    from memory.retrieval.levers import parse_levers

    _require_backends([backend])
    options = VisibleOptions(names, out, _split(policies or "") or None, limit, locomo,
                             work=work, backend=backend, levers=parse_levers(levers),
                             realmem=realmem)
    check_options(options)  # the cheap checks first: a bad name leaves no folder behind
    output_folder(out, "--out")
    if work is not None:
        output_folder(work, "--work")
    progress = _bench_progress()
    summary = run_visible(options, "notes " + shlex.join(sys.argv[1:]),
                          lambda line: click.echo(line, err=True), progress)
    if as_json:
        click.echo(json.dumps(summary, indent=2, ensure_ascii=False))
        return
    kept = keep_table(summary)
    click.echo(summary_table(summary) + (f"\n\nKeep ratios per policy:\n\n{kept}" if kept
                                         else ""))
    click.echo(f"\nsummary in {out / SUMMARY_FILES['markdown']}")


@bench.command("perf")
@click.option("--scale", type=click.FloatRange(0, 100, min_open=True), default=1.0,
              show_default=True, help="Store size: 1 ≈ 220 notes and 1 M cl100k tokens.")
@click.option("--scales", help="Comma-separated scales for the growth table and plot (e.g. "
              "0.25,1,4,10); replaces --scale.")
@click.option("--backend", "backends", default="whoosh", show_default=True,
              help="Comma-separated index backends to measure side by side: whoosh, tantivy.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("perf-report"), show_default=True,
              help="Where to write performance.md, .json and .png.")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the generated stores here (default: a temporary folder, removed).")
@click.option("--queries", type=click.IntRange(5, 5000), default=200, show_default=True,
              help="Questions drawn from each store.")
@click.option("--seed", type=int, default=1, show_default=True, help="Generator seed.")
@click.option("--runs", type=click.IntRange(1, 100), default=7, show_default=True,
              help="Cold processes and one-note updates timed per figure.")
@click.option("--generate-only", is_flag=True,
              help="Write the store of --scale (notes/, queries.jsonl) into --work and stop.")
def bench_perf(scale: float, scales: str | None, backends: str, out: Path, work: Path | None,
               queries: int, seed: int, runs: int, generate_only: bool) -> None:
    """Speed and scale: generate stores, then measure index build, one-note freshness
    (library and `notes watch`), warm suggest/section_map/read_section, cold CLI processes,
    the prompt hook (cold and through the MCP server, beside a bare python), MCP round trips
    and server memory, beside ripgrep and SQLite FTS5."""
    import shlex

    _import_checkout_benchmarks("perf", Path("benchmarks") / "perf" / "run.py")
    from benchmarks.perf.generator import generate_store
    from benchmarks.perf.report import FILES, targets_table, write_report
    from benchmarks.perf.run import PerfOptions, parse_backends, parse_scales, run_perf

    if work is not None:
        output_folder(work, "--work")
    if generate_only:
        if work is None:
            raise click.UsageError("--generate-only writes the store into --work DIR")
        click.echo(json.dumps(generate_store(work, scale, seed, queries)))
        return
    try:
        chosen = parse_scales(scales) if scales else [scale]
        options = PerfOptions(chosen, parse_backends(backends), seed, queries, runs, runs,
                              work=work, hook_runs=min(queries, 3 * runs))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    _require_backends(options.backends)
    output_folder(out, "--out")
    data = run_perf(options, "notes " + shlex.join(sys.argv[1:]),
                    lambda line: click.echo(line, err=True))
    data = write_report(data, out)
    click.echo(targets_table(data) + f"\n\nreport in {out / FILES['markdown']}")


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


def _import_checkout_benchmarks(command: str, marker: Path) -> None:
    """`notes bench perf` and `notes bench visible` measure the project itself: their drivers
    live in the checkout's benchmarks/, outside the installed package."""
    import memory

    checkout = Path(memory.__file__).resolve().parent.parent
    if not (checkout / marker).is_file():
        raise NotesError(f"`notes bench {command}` measures the project from a checkout of it, "
                         f"where {marker.parent} lives (clone the project and `pip install -e "
                         ".`); an installed package does not carry it")
    if str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))
