"""The tuning/test split of every bench (issue #34, item 2): by a hash of the id, the same in
every shape of a source and every run; reports show both halves and the gap."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from test_bench_policies import QUESTIONS, write_tiny_bench

from memory.bench.report import write_report
from memory.bench.run import run_bench
from memory.bench.split import HALVES, check_half, half_of

NOTES_BIN = Path(sys.executable).parent / "notes"


def test_the_split_is_by_id_alone_and_about_even() -> None:
    ids = [f"conv-{c}:{q}" for c in range(10) for q in range(200)]
    halves = [half_of(i) for i in ids]
    assert halves == [half_of(i) for i in ids]  # deterministic
    assert set(halves) == set(HALVES)
    assert 0.45 < halves.count("tuning") / len(ids) < 0.55
    # a follow-up of a question is asked under the same id: the same half
    assert half_of("conv-26:7") == half_of("conv-26:7")
    assert check_half("all") is None and check_half("test") == "test"


def test_a_run_of_one_half_runs_only_its_questions(tmp_path: Path) -> None:
    bench = write_tiny_bench(tmp_path / "bench")
    for half in HALVES:
        run = run_bench(bench, ["ladder@1", "fragments@5"], state_dir=tmp_path / half,
                        half=half)
        wanted = {q["id"] for q in QUESTIONS if half_of(str(q["id"])) == half}
        assert {r.id for r in run.results} <= wanted and run.read == len(wanted)
        assert run.half == half


def test_the_report_shows_both_halves_and_their_gap(tmp_path: Path) -> None:
    bench = write_tiny_bench(tmp_path / "bench")
    run = run_bench(bench, ["ladder@1", "ladder@2", "fragments@2", "fragments@5",
                            "fragments@10"], state_dir=tmp_path / "state")
    data = write_report(run, tmp_path / "report", "notes bench run tiny", plot=False)
    halves = data["halves"]
    counted = {h: sum(1 for r in run.results if half_of(r.id) == h) for h in HALVES}
    assert {h: halves[h]["questions"] for h in HALVES} == counted
    for half in HALVES:
        hits = sum(r.outcomes["ladder@1"].hit for r in run.results if half_of(r.id) == half)
        assert halves[half]["policies"]["ladder@1"]["hits"] == hits
    best = [halves[h]["best"] for h in HALVES]
    if all(best):
        assert halves["gap"] == round(best[0]["curve_margin"] - best[1]["curve_margin"], 4)
    text = (tmp_path / "report" / "report.md").read_text()
    assert "## Tuning and test halves" in text and "gap (tuning − test)" in text


def test_the_cli_takes_a_half_and_refuses_another_word(tmp_path: Path) -> None:
    bench = write_tiny_bench(tmp_path / "bench")
    done = subprocess.run([str(NOTES_BIN), "bench", "run", str(bench), "--half", "test",
                           "--policies", "ladder@1", "--json", "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    wanted = sum(1 for q in QUESTIONS if half_of(str(q["id"])) == "test")
    assert json.loads(done.stdout)["questions"]["read"] == wanted
    bad = subprocess.run([str(NOTES_BIN), "bench", "run", str(bench), "--half", "middle"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "middle" in bad.stderr
