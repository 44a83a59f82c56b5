"""`notes bench promote`: one promotion cycle replayed on a bench, measured
(docs/promotion.md; on every visible source: `python -m benchmarks promote-visible`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from memory.fronts.cli import _split, json_option, output_folder
from memory.fronts.cli.bench import (
    _bench_progress,
    _require_backends,
    bench,
)
from memory.services.promote_lines import DEFAULT_RULE


@bench.command("promote")
@click.argument("bench_dir", metavar="BENCH", type=click.Path(exists=True, file_okay=False,
                path_type=Path))
@click.option("--policies", help="Comma-separated, as for `notes bench run` (default: all).")
@click.option("--limit", type=click.IntRange(1), help="Use only the first N questions of the "
              "bench (before the earlier/later split).")
@click.option("--half", type=click.Choice(["tuning", "test", "all"]), default="all",
              show_default=True, help="Run only one half of the later questions (the "
              "tuning/test split of `notes bench run`).")
@click.option("--rules", default=DEFAULT_RULE, show_default=True, help="Comma-separated line "
              "rules to compare (overlap, outcome, last, terms): every candidate applied with "
              "each; the first is that of the other variants.")
@click.option("--top", type=click.IntRange(1), default=20, show_default=True,
              help="The variant that applies only the first N candidates.")
@click.option("--min-precision", type=click.FloatRange(0, 1), default=0.6, show_default=True,
              help="The variant that applies the candidates whose precision estimate is at "
              "least this (as `notes promote --apply-all --min-precision`).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("promotion-report"), show_default=True,
              help="Where to write promotion.md and promotion.json.")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path),
              help="Keep the scratch copies, logs and runs here (default: a temporary folder, "
              "removed at the end).")
@click.option("--backend", default="whoosh", show_default=True,
              help="The index backend (whoosh, tantivy).")
@click.option("--levers", help="Retrieval levers of every run, as for `notes bench run`.")
@json_option
def bench_promote(bench_dir: Path, policies: str | None, limit: int | None, half: str,
                  rules: str, top: int, min_precision: float, out: Path, work: Path | None,
                  backend: str, levers: str | None, as_json: bool) -> None:
    """One promotion cycle, replayed: the earlier half of the questions asked through the
    ladder on a copy of the notes (usage log on), the promoter's proposals applied, then every
    policy on the later half before and after. The bench is only read.

    \b
    Example:
      notes bench promote my-bench --backend tantivy --rules overlap,outcome
    """
    import shlex

    from memory.bench.promotion_report import FILES, variants_table, write
    from memory.bench.promotion_run import PromoteOptions, check_options, run_promotion
    from memory.bench.split import check_half
    from memory.retrieval.levers import parse_levers

    _require_backends([backend])
    options = PromoteOptions(_split(policies or "") or None, limit, check_half(half),
                             tuple(_split(rules)), top, min_precision, backend,
                             parse_levers(levers))
    check_options(options)
    output_folder(out, "--out")
    if work is not None:
        output_folder(work, "--work")
    run = run_promotion(bench_dir, options, work, lambda line: click.echo(line, err=True),
                        _bench_progress())
    data = write(run, out, "notes " + shlex.join(sys.argv[1:]))
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(variants_table(data, "all") + f"\n\nreport in {out / FILES['markdown']}")
