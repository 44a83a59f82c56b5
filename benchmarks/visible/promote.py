"""`notes bench promote-visible`: the promotion bench (`notes bench promote`) on every visible
source (by default one bench each: LoCoMo per conversation, the example store's follow-ups,
RealMem), each built afresh, and one summary.

Benches run one after the other (the machine is shared); the summary is rewritten after each,
so an interrupted call still leaves the benches it finished. The summary's table is that of
docs/promotion.md: per bench and variant, on the test half of the later questions. With
several line rules, the summary also chooses one on the *tuning* half alone (the test half
only reports): of the rules whose lift (the best ladder-family policy's gain at equal tokens
plus the states policy's gain) loses at most a point on every bench, the one with the largest
sum of lifts; when none, the one whose worst lift is highest.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
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
from memory.errors import InvalidArgument

SUMMARY_FILES = {"markdown": "summary.md", "json": "summary.json"}
SOURCES = ("locomo", "example-followups", "realmem")  # one bench of each visible source
TOLERANCE = 0.01  # a rule may lose this much lift on a bench (as no policy may lose > 1 pt)


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
    limits: dict[str, int] = field(default_factory=dict)  # per bench, over promote.limit


def parse_limits(values: tuple[str, ...], benches: list[str]) -> dict[str, int]:
    """``BENCH=N`` pairs (e.g. ``realmem=400``): that bench runs on its first N questions."""
    out: dict[str, int] = {}
    for value in values:
        name, _, number = value.partition("=")
        if name not in benches or not number.isdigit() or int(number) < 1 or name in out:
            raise InvalidArgument(f"--bench-limit {value}: give BENCH=N once per bench, with "
                                  f"BENCH one of {', '.join(benches)} and N ≥ 1, e.g. "
                                  f"--bench-limit realmem=400")
        out[name] = int(number)
    return out


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
            promote = dataclasses.replace(options.promote,
                                          limit=options.limits.get(name, options.promote.limit))
            run = run_promotion(work / name, promote, work / f"{name}-promotion",
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
                        for name, report in reports.items()},
            "rules": rule_choice(reports)}


def lift(report: dict[str, Any], variant: str, half: str) -> float | None:
    """What a variant lifts on a half: the best ladder-family policy's gain at equal tokens
    plus the states policy's gain (None when the variant or a figure is missing)."""
    figures = report["variants"].get(variant, {}).get("halves", {}).get(half)
    if not figures or not figures["best_family"]:
        return None
    family = figures["policies"][figures["best_family"]].get("gain_equal_tokens")
    states = figures["policies"].get("states", {}).get("gain")
    return None if family is None or states is None else round(family + states, 4)


def rule_choice(reports: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per line rule (its every-candidate variant), the lift on each bench's tuning and test
    halves, and the rule chosen on the tuning half alone (see the module's docstring)."""
    rules = sorted({v["rule"] for r in reports.values() for v in r["variants"].values()
                    if v["kind"] == "all"})
    rows = {rule: {name: {half: lift(report, f"all-{rule}", half) for half in ("tuning", "test")}
                   for name, report in reports.items()} for rule in rules}

    def key(rule: str) -> tuple[bool, float]:
        lifts = [b["tuning"] or 0.0 for b in rows[rule].values()]
        worst = min(lifts, default=0.0)
        # within a point on every bench (as a policy may lose): the sum; else the worst
        return (worst >= -TOLERANCE, sum(lifts) if worst >= -TOLERANCE else worst)

    chosen = max(rules, key=key) if len(rules) > 1 else None
    return {"lifts": rows, "chosen": chosen}


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
    return "\n".join(lines + rules_markdown(summary["rules"]))


def rules_markdown(rules: dict[str, Any]) -> list[str]:
    if rules["chosen"] is None:
        return []
    benches = list(next(iter(rules["lifts"].values())))
    lines = ["## Line rules: lift on the tuning half (test half)", "",
             "Lift: the best ladder-family policy's gain at equal tokens plus the states "
             "policy's gain, in points.", "",
             "| rule | " + " | ".join(benches) + " |", "|---|" + "---:|" * len(benches)]
    for rule, by_bench in rules["lifts"].items():
        lines.append(f"| {rule} | " + " | ".join(
            f"{_pts(b['tuning'])} ({_pts(b['test'])})" for b in by_bench.values()) + " |")
    return lines + ["", f"Chosen on the tuning half: `{rules['chosen']}`.", ""]


def _pts(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:+.1f}"


def write_summary(summary: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / SUMMARY_FILES["json"]).write_text(json.dumps(summary, indent=2, ensure_ascii=False)
                                             + "\n", encoding="utf-8")
    (out / SUMMARY_FILES["markdown"]).write_text(summary_markdown(summary), encoding="utf-8")
