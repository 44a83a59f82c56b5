"""What measures the project, from a checkout: ``python -m benchmarks perf|visible``.

The line between the two homes of the benches: ``notes bench`` (:mod:`memory.fronts.cli.bench`,
shipped) builds and runs a bench on a user's own memory (``from-transcripts``, ``from-locomo``,
``from-realmem``, ``run``); this group measures the project itself, with drivers that live in
the checkout's ``benchmarks/`` and are not installed: ``perf`` (speed and scale on generated
stores, beside ripgrep and SQLite FTS5) and ``visible`` (every visible bench rebuilt and run).
It runs from the checkout's root, where ``benchmarks`` is importable (``python -m`` puts the
current folder first on the path). Errors read as ``notes``'s do: ``Error: …``, exit status 1.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import click

from memory.errors import NotesError
from memory.fronts.cli import NotesGroup, _split, json_option, output_folder
from memory.fronts.cli.bench import _bench_progress, _require_backends
from memory.services.promote_lines import DEFAULT_RULE

PROG = "python -m benchmarks"


@click.group(cls=NotesGroup, context_settings={"help_option_names": ["-h", "--help"]})
def lab() -> None:
    """Measure the project itself, from a checkout (run from its root): speed and scale
    (`perf`) and every visible bench (`visible`). What a user runs on their own memory is
    `notes bench`.

    \b
    Example:
      python -m benchmarks perf --scale 0.25 --out perf-report
    """


def _command_line() -> str:
    """The command as typed, for the reports (``python -m benchmarks perf …``)."""
    return f"{PROG} {shlex.join(sys.argv[1:])}"


def _bench_options(work_help: str, out: Path) -> Callable[[Callable[..., None]],
                                                          Callable[..., None]]:
    """The options every command that builds the visible benches takes: where the shared
    data lies, the work and report folders, the backend and the levers."""
    options = [
        click.option("--locomo", type=click.Path(dir_okay=False, path_type=Path),
                     envvar="NOTES_BENCH_LOCOMO", show_envvar=True, help="LoCoMo's "
                     "locomo10.json (default: shared/bench/locomo/locomo10.json beside the "
                     "checkout, or two levels up from a worktree); only the LoCoMo benches "
                     "need it."),
        click.option("--realmem", type=click.Path(file_okay=False, path_type=Path),
                     envvar="NOTES_BENCH_REALMEM", show_envvar=True, help="RealMem's folder of "
                     "*_dialogues_256k.json (or its parent; default: shared/bench/realmem beside "
                     "the checkout, or two levels up from a worktree); only the realmem bench "
                     "needs it."),
        click.option("--work", type=click.Path(file_okay=False, path_type=Path),
                     help=work_help),
        click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=out,
                     show_default=True, help="Where to write each bench's report (OUT/BENCH/) "
                     "and summary.md|json."),
        click.option("--backend", default="whoosh", show_default=True,
                     help="The index backend (whoosh, tantivy)."),
        click.option("--levers", help="Retrieval levers of every run, as for `notes bench "
                     "run`."),
    ]

    def apply(command: Callable[..., None]) -> Callable[..., None]:
        for option in reversed(options):
            command = option(command)
        return command
    return apply


@lab.command("visible")
@click.option("--benches", help="Comma-separated, from: locomo, locomo-sessions, "
              "locomo-followups, locomo-sessions-followups, example-followups, realmem "
              "(default: all).")
@click.option("--policies", help="Comma-separated, as for `notes bench run` (default: all).")
@click.option("--limit", type=click.IntRange(1), help="Run only the first N questions of "
              "each bench.")
@_bench_options("Build the benches here and keep them (default: a temporary folder, "
                "removed at the end).", Path("visible-report"))
@json_option
def bench_visible(benches: str | None, policies: str | None, limit: int | None,
                  locomo: Path | None, realmem: Path | None, work: Path | None, out: Path,
                  backend: str, levers: str | None, as_json: bool) -> None:
    """Rebuild every visible bench (LoCoMo, per session, both follow-up variants, the example
    store's follow-ups, RealMem), run the policies on each, write their reports and print one
    summary: best ladder-family margin over the fragments curve, routing, follow-up keep
    ratios.

    \b
    Example:
      python -m benchmarks visible --benches example-followups --limit 20
    """
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
    summary = run_visible(options, _command_line(),
                          lambda line: click.echo(line, err=True), progress)
    if as_json:
        click.echo(json.dumps(summary, indent=2, ensure_ascii=False))
        return
    kept = keep_table(summary)
    click.echo(summary_table(summary) + (f"\n\nKeep ratios per policy:\n\n{kept}" if kept
                                         else ""))
    click.echo(f"\nsummary in {out / SUMMARY_FILES['markdown']}")


@lab.command("perf")
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
    and server memory, beside ripgrep and SQLite FTS5.

    \b
    Example:
      python -m benchmarks perf --scales 0.25,1,4 --backend whoosh,tantivy
    """
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
    data = run_perf(options, _command_line(),
                    lambda line: click.echo(line, err=True))
    data = write_report(data, out)
    click.echo(targets_table(data) + f"\n\nreport in {out / FILES['markdown']}")


@lab.command("promote-visible")
@click.option("--benches", help="Comma-separated, as for `python -m benchmarks visible` "
              "(default: one of each source: locomo, example-followups, realmem).")
@click.option("--policies", help="Comma-separated, as for `notes bench run` (default: all).")
@click.option("--limit", type=click.IntRange(1), help="Use only the first N questions of "
              "each bench.")
@click.option("--bench-limit", "bench_limits", multiple=True, metavar="BENCH=N",
              help="Use only the first N questions of this bench (repeatable; over --limit), "
              "e.g. realmem=400.")
@click.option("--half", type=click.Choice(["tuning", "test", "all"]), default="all",
              show_default=True, help="Run only one half of the later questions.")
@click.option("--rules", default=DEFAULT_RULE, show_default=True,
              help="Comma-separated line rules to compare, as for `notes bench promote`.")
@click.option("--top", type=click.IntRange(1), default=20, show_default=True,
              help="The variant that applies only the first N candidates.")
@click.option("--min-precision", type=click.FloatRange(0, 1), default=0.6, show_default=True,
              help="The variant that applies the candidates whose precision estimate is at "
              "least this.")
@_bench_options("Build the benches and keep the scratch copies here (default: a "
                "temporary folder, removed at the end).", Path("promotion-visible"))
@json_option
def bench_promote_visible(benches: str | None, policies: str | None, limit: int | None,
                          bench_limits: tuple[str, ...], half: str, rules: str, top: int,
                          min_precision: float,
                          locomo: Path | None, realmem: Path | None, work: Path | None,
                          out: Path, backend: str, levers: str | None, as_json: bool) -> None:
    """`notes bench promote` on every visible source (its benches rebuilt as `notes bench
    visible` builds them), with one summary: per bench and variant, the test half's figures,
    and with several --rules the rule chosen on the tuning half.

    \b
    Example:
      python -m benchmarks promote-visible --backend tantivy --bench-limit realmem=200
    """
    from benchmarks.visible.promote import (
        SOURCES,
        SUMMARY_FILES,
        PromoteVisibleOptions,
        check,
        parse_limits,
        run_promote_visible,
        summary_markdown,
    )
    from benchmarks.visible.run import parse_benches
    from memory.bench.promotion_run import PromoteOptions
    from memory.bench.split import check_half
    from memory.retrieval.levers import parse_levers

    try:
        names = parse_benches(benches) if benches else list(SOURCES)
        limits = parse_limits(bench_limits, names)
    except NotesError as exc:
        raise click.UsageError(str(exc)) from exc
    _require_backends([backend])
    promote = PromoteOptions(_split(policies or "") or None, limit, check_half(half),
                             tuple(_split(rules)), top, min_precision, backend,
                             parse_levers(levers))
    options = PromoteVisibleOptions(names, out, promote, locomo, work=work, realmem=realmem,
                                    limits=limits)
    check(options)  # the cheap checks first: a bad name leaves no folder behind
    output_folder(out, "--out")
    if work is not None:
        output_folder(work, "--work")
    summary = run_promote_visible(options, _command_line(),
                                  lambda line: click.echo(line, err=True), _bench_progress())
    if as_json:
        click.echo(json.dumps(summary, indent=2, ensure_ascii=False))
        return
    click.echo(summary_markdown(summary) + f"\nsummary in {out / SUMMARY_FILES['markdown']}")
