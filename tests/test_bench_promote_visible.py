"""`notes bench promote-visible`: the promotion bench on one bench of each visible source, one
summary, and the line rule chosen on the tuning half alone.

On a small LoCoMo-shaped file and two small RealMem personas written here (the shared data is
not needed) and the example store's follow-ups.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_bench_locomo_sessions import SAMPLES
from test_bench_realmem import ana, bo

from benchmarks.visible.promote import SOURCES, lift, parse_limits, rule_choice
from conftest import run_lab
from memory.errors import InvalidArgument

NOTES_BIN = Path(sys.executable).parent / "notes"


def lab(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m benchmarks ARGS``: what measures the project, run from the checkout."""
    return run_lab(args, {**os.environ, **(env or {})}, timeout=600)


def notes(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(NOTES_BIN), *args], capture_output=True, text=True,
                          timeout=600, env={**os.environ, **(env or {})})


def sources(tmp_path: Path) -> tuple[Path, Path]:
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps(SAMPLES), encoding="utf-8")
    realmem = tmp_path / "realmem"
    realmem.mkdir()
    for name, data in (("Ana_Silva", ana()), ("Bo_Lind", bo())):
        (realmem / f"{name}_dialogues_256k.json").write_text(json.dumps(data),
                                                             encoding="utf-8")
    return locomo, realmem


@pytest.mark.slow(40)
def test_one_command_runs_every_visible_source(tmp_path: Path) -> None:
    locomo, realmem = sources(tmp_path)
    out, work = tmp_path / "out", tmp_path / "work"
    ran = lab("promote-visible", "--locomo", str(locomo), "--work", str(work),
                "--out", str(out), "--policies", "ladder@1,states,fragments@2,fragments@5",
                "--rules", "overlap,last", "--limit", "12", "--bench-limit", "realmem=2",
                env={"NOTES_BENCH_REALMEM": str(realmem)})
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert tuple(summary["benches"]) == SOURCES  # one bench of each source by default
    reports = {name: b["report"] for name, b in summary["benches"].items()}
    # --limit for every bench, --bench-limit over it for its own
    assert reports["example-followups"]["split"]["earlier"] \
        + reports["example-followups"]["split"]["later"] == 12
    assert reports["realmem"]["split"]["earlier"] + reports["realmem"]["split"]["later"] == 2
    for name, report in reports.items():
        assert set(report["variants"]) >= {"all-overlap", "all-last"}, name
        assert json.loads((out / name / "promotion.json").read_text()) == report
    # the rule choice is read from the reports' tuning halves
    rules = summary["rules"]
    assert set(rules["lifts"]) == {"last", "overlap"}
    for rule, by_bench in rules["lifts"].items():
        for name, halves in by_bench.items():
            assert halves == {h: lift(reports[name], f"all-{rule}", h)
                              for h in ("tuning", "test")}
    assert rules["chosen"] == rule_choice(reports)["chosen"]
    text = (out / "summary.md").read_text()
    assert f"Chosen on the tuning half: `{rules['chosen']}`." in text
    assert "## LoCoMo (a note per conversation) (`locomo`)" in text


def test_a_bad_bench_limit_is_a_usage_error(tmp_path: Path) -> None:
    for value in ("realmem", "realmem=0", "nope=3", "realmem=x"):
        ran = lab("promote-visible", "--bench-limit", value,
                    "--out", str(tmp_path / "out"))
        assert ran.returncode == 2, (value, ran.stderr)
        assert f"--bench-limit {value}: give BENCH=N once per bench" in ran.stderr
    assert not (tmp_path / "out").exists()
    assert parse_limits(("realmem=400", "locomo=9"), list(SOURCES)) == {"realmem": 400,
                                                                         "locomo": 9}
    with pytest.raises(InvalidArgument):
        parse_limits(("realmem=4", "realmem=5"), list(SOURCES))


def report(lifts: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """A hand-made report: per rule, the (family gain at equal tokens, states gain) of both
    halves' every-candidate variant, the tuning half's doubled on the test half."""
    def half(family: float, states: float) -> dict[str, Any]:
        return {"best_family": "ladder@1", "policies": {
            "ladder@1": {"gain_equal_tokens": family}, "states": {"gain": states}}}

    return {"variants": {f"all-{rule}": {"kind": "all", "rule": rule, "halves": {
        "tuning": half(f, s), "test": half(2 * f, 2 * s)}} for rule, (f, s) in lifts.items()}}


def test_the_rule_chosen_lifts_most_without_losing_a_point_on_any_bench() -> None:
    reports = {"a": report({"overlap": (0.10, 0.20), "last": (0.02, 0.05), "terms": (0.0, 0.0)}),
               "b": report({"overlap": (-0.02, 0.0), "last": (0.01, 0.03), "terms": (0.0, 0.0)})}
    choice = rule_choice(reports)
    # overlap lifts a most, but loses two points on b; last lifts both
    assert choice["chosen"] == "last"
    assert choice["lifts"]["overlap"]["a"] == {"tuning": 0.3, "test": 0.6}
    assert choice["lifts"]["overlap"]["b"]["tuning"] == -0.02
    # half a point lost on b is within the tolerance: the larger sum wins
    reports["b"] = report({"overlap": (-0.005, 0.0), "last": (0.01, 0.03), "terms": (0.0, 0.0)})
    assert rule_choice(reports)["chosen"] == "overlap"
    # when every rule loses more than a point somewhere, the best worst case
    reports["b"] = report({"overlap": (-0.05, 0.0), "last": (-0.02, 0.0), "terms": (-0.03, 0)})
    assert rule_choice(reports)["chosen"] == "last"
    assert rule_choice({"a": report({"overlap": (0.1, 0.1)})})["chosen"] is None
