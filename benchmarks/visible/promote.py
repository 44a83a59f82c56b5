"""`notes bench promote-visible`: the promotion bench (`notes bench promote`) on every visible
bench, each built afresh, and one summary.

Benches run one after the other (the machine is shared); the summary is rewritten after each,
so an interrupted call still leaves the benches it finished. The summary's table is that of
docs/promotion.md: per bench and variant, on the test half of the later questions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.visible.run import (
    BENCHES,
    Say,
    Sources,
    _work_folder,
    build_bench,
    check_options,
)
from benchmarks.visible.run import VisibleOptions as _Visible
from memory.bench.promotion_report import TARGETS, variants_table, write
from memory.bench.promotion_run import PromoteOptions, run_promotion
from memory.bench.promotion_run import check_options as check_promote
from memory.bench.run import Progress

SUMMARY_FILES = {"markdown": "summary.md", "json": "summary.json"}


@dataclass(frozen=True)
class PromoteVisibleOptions:
    benches: list[str]
    out: Path
    promote: PromoteOptions
    locomo: Path | None = None
    search: tuple[Path, ...] | None = None  # where to look for LoCoMo (None: the defaults)
    work: Path | None = None
    realmem: Path | None = None
    realmem_search: tuple[Path, ...] | None = None


def check(options: PromoteVisibleOptions) -> Sources:
    """The cheap checks first (benches, policies, rules, the shared data); where the data
    lies."""
    check_promote(options.promote)
    return check_options(_Visible(options.benches, options.out, options.promote.policies,
                                  options.promote.limit, options.locomo, options.search,
                                  backend=options.promote.backend, realmem=options.realmem,
                                  realmem_search=options.realmem_search))


def run_promote_visible(options: PromoteVisibleOptions, command: str, say: Say,
                        progress: Progress | None = None) -> dict[str, Any]:
    sources = check(options)
    reports: dict[str, dict[str, Any]] = {}
    summary: dict[str, Any] = {}
    with _work_folder(options.work) as work:
        for name in options.benches:
            bench = BENCHES[name]
            say(f"{name}: building {bench.title}")
            say(f"{name}: {build_bench(bench, work / name, sources)}")
            run = run_promotion(work / name, options.promote, work / f"{name}-promotion",
                                _prefixed(say, name), progress)
            reports[name] = write(run, options.out / name, f"{command}  # bench {name}")
            say(f"{name}: done in {run.seconds:.0f} s; report in "
                f"{options.out / name / 'promotion.md'}")
            summary = summarize(reports, command)
            write_summary(summary, options.out)
    return summary


def _prefixed(say: Say, name: str) -> Say:
    def said(line: str) -> None:
        say(f"{name}: {line}")

    return said


def summarize(reports: dict[str, dict[str, Any]], command: str) -> dict[str, Any]:
    return {"command": command, "targets": TARGETS,
            "benches": {name: {"title": BENCHES[name].title, "report": report}
                        for name, report in reports.items()}}


def summary_markdown(summary: dict[str, Any], half: str = "test") -> str:
    lines = ["# Promotion bench on every visible bench", "", f"`{summary['command']}`", "",
             f"Figures on the {half} half of the later questions.", ""]
    for name, bench in summary["benches"].items():
        report = bench["report"]
        split = report["split"]
        lines += [f"## {bench['title']} (`{name}`)", "",
                  f"{split['earlier']} earlier questions replayed ({split['how']} split), "
                  f"{split['later_run']} later run; "
                  f"{report['store']['state_tokens']:,} state tokens before.", "",
                  variants_table(report, half), ""]
    return "\n".join(lines)


def write_summary(summary: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / SUMMARY_FILES["json"]).write_text(json.dumps(summary, indent=2, ensure_ascii=False)
                                             + "\n", encoding="utf-8")
    (out / SUMMARY_FILES["markdown"]).write_text(summary_markdown(summary), encoding="utf-8")
