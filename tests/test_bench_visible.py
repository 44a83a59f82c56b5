"""`python -m benchmarks visible`: every visible bench rebuilt and run, one report each, one
summary.

On a small LoCoMo-shaped file written here (the shared file is not needed) and the example
store's follow-ups; the summary's figures are checked against the reports it was read from.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_bench_locomo_sessions import SAMPLES
from test_bench_realmem import ana, bo

from benchmarks.visible.run import (
    BENCHES,
    Sources,
    VisibleOptions,
    check_options,
    locate_locomo,
)
from benchmarks.visible.summary import (
    bench_summary,
    best_of_family,
    in_ladder_family,
    keep_ratios,
    split_against_fragments,
    switch_direct,
    without_category,
)
from conftest import run_lab
from memory.errors import InvalidArgument, NotesError

POLICIES = "ladder@1,ladder-oracle,recall@500,fragments@2,fragments@5"


def visible(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_lab(["visible", *args], env={**os.environ, **(env or {})})


@pytest.fixture
def small_locomo(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(SAMPLES), encoding="utf-8")
    return path


@pytest.fixture
def small_realmem(tmp_path: Path) -> Path:
    folder = tmp_path / "realmem"
    folder.mkdir()
    for name, data in (("Ana_Silva", ana()), ("Bo_Lind", bo())):
        (folder / f"{name}_dialogues_256k.json").write_text(json.dumps(data),
                                                            encoding="utf-8")
    return folder


def _report(out: Path, bench: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / bench / "report.json").read_text())
    return data


@pytest.mark.slow(22)
def test_every_bench_built_run_and_summarised(small_locomo: Path, small_realmem: Path,
                                              tmp_path: Path) -> None:
    out, work = tmp_path / "out", tmp_path / "work"
    ran = visible("--locomo", str(small_locomo), "--work", str(work),
                "--out", str(out), "--policies", POLICIES, "--limit", "4",
                env={"NOTES_BENCH_REALMEM": str(small_realmem)})
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["benches"]) == list(BENCHES)
    assert summary["policies"] == POLICIES.split(",") and summary["limit"] == 4
    # each bench was built as its adapter builds it, and run on its first 4 questions
    assert len(list((work / "locomo" / "notes").rglob("*.md"))) == 2
    assert len(list((work / "locomo-sessions-followups" / "notes").rglob("*.md"))) == 4
    assert len(list((work / "example-followups" / "notes").rglob("*.md"))) == 62
    first = json.loads((work / "locomo-sessions-followups" / "questions.jsonl")
                       .read_text().split("\n")[1])
    assert first["notes"] == ["conv-1/session-02", "conv-1/session-01"]
    assert first["context"] == ["What did Ana paint?", "A sunrise"]
    assert len(list((work / "realmem" / "notes").rglob("*.md"))) == 6
    asked = json.loads((work / "realmem" / "questions.jsonl").read_text().split("\n")[0])
    assert asked["exclude_notes"] == ["ana-silva/session-003", "ana-silva/session-004"]
    assert summary["benches"]["realmem"]["built"].startswith("2 personas, 6 sessions")
    for name in BENCHES:
        report = _report(out, name)
        assert list(report["policies"]) == POLICIES.split(","), name
        assert report["questions"]["read"] == (3 if name == "realmem" else 4), name
        assert (out / name / "report.md").stat().st_size > 0
        line = summary["benches"][name]
        assert line["routing"]["first_rate"] == report["routing"]["first_rate"]
        assert line["routing"]["top4_rate"] == report["routing"]["top4_rate"]
        family = {p: f for p, f in report["policies"].items()
                  if p in ("ladder@1", "recall@500")}
        best = max(family, key=lambda p: (family[p]["curve_margin"], family[p]["hit_rate"]))
        assert line["best"]["policy"] == best, name
        assert line["best"]["curve_margin"] == report["policies"][best]["curve_margin"]
        assert f"| {name} | {line['questions']} | {best} |" in ran.stdout
    # the several-note question of the per-session benches is routed apart
    assert summary["benches"]["locomo-sessions"]["several_gold"]["questions"] == 1
    assert summary["benches"]["locomo"]["several_gold"] is None
    # keep ratios: follow-up hit rate over the same policy's direct hit rate
    for follow, direct in (("locomo-followups", "locomo"),
                           ("locomo-sessions-followups", "locomo-sessions")):
        keep = summary["benches"][follow]["keep"]
        assert keep["direct"] == direct and keep["ran"]
        vague, plain = _report(out, follow)["policies"], _report(out, direct)["policies"]
        for policy in POLICIES.split(","):
            expected = (round(vague[policy]["hit_rate"] / plain[policy]["hit_rate"], 4)
                        if plain[policy]["hit_rate"] else None)
            assert keep["policies"][policy] == expected, (follow, policy)
        assert keep["oracle"] == keep["policies"]["ladder-oracle"]
    assert summary["benches"]["example-followups"]["keep"] is None
    assert summary["benches"]["locomo"]["keep"] is None
    text = (out / "summary.md").read_text()
    assert "## Follow-ups: hit rate kept from the direct questions" in text
    assert "| locomo-followups / locomo | locomo-sessions-followups / locomo-sessions |" in text


def test_a_subset_without_its_direct_bench(small_locomo: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    ran = visible("--benches", "locomo-followups", "--policies",
                "ladder@1,fragments@2", "--limit", "3", "--out", str(out), "--json",
                env={"NOTES_BENCH_LOCOMO": str(small_locomo)})
    assert ran.returncode == 0, ran.stderr
    summary = json.loads(ran.stdout)
    assert list(summary["benches"]) == ["locomo-followups"]
    assert summary["benches"]["locomo-followups"]["keep"] == {"direct": "locomo", "ran": False}
    assert "(run locomo too)" in (out / "summary.md").read_text()
    assert not (out / "locomo").exists()


def test_without_the_shared_file_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "locomo10.json"
    ran = visible("--locomo", str(missing), "--out", str(tmp_path / "o"))
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert ran.stderr.startswith(f"Error: LoCoMo file {missing} does not exist")
    assert "--benches example-followups" in ran.stderr
    assert not (tmp_path / "o").exists()  # nothing was built or run
    # no file named and none beside the checkout: where it looked, and what to do
    with pytest.raises(NotesError, match=r"was not found \(looked at .*nowhere.*--locomo"):
        check_options(VisibleOptions(["locomo"], tmp_path, search=(missing,)))
    # the example store's bench needs no shared data
    assert check_options(VisibleOptions(["example-followups"], tmp_path, search=(),
                                        realmem_search=())) == Sources(None, None)
    assert locate_locomo(None, [missing, Path(__file__)]) == Path(__file__)


def test_without_realmem_a_clear_error(small_realmem: Path, tmp_path: Path) -> None:
    nowhere = tmp_path / "nowhere"
    ran = visible("--benches", "realmem", "--realmem", str(nowhere), "--out",
                str(tmp_path / "o"))
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert ran.stderr.startswith(f"Error: RealMem: no RealMem files in {nowhere}")
    (tmp_path / "empty").mkdir()
    ran = visible("--benches", "realmem,example-followups", "--out",
                str(tmp_path / "o"), env={"NOTES_BENCH_REALMEM": str(tmp_path / "empty")})
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert ran.stderr.startswith("Error: RealMem: no RealMem files in")
    assert "--realmem DIR (or NOTES_BENCH_REALMEM)" in ran.stderr
    assert not (tmp_path / "o").exists()  # nothing was built or run
    with pytest.raises(NotesError, match=r"were not found \(looked at .*nowhere.*--realmem"):
        check_options(VisibleOptions(["realmem"], tmp_path, realmem_search=(nowhere,)))
    found = check_options(VisibleOptions(["realmem"], tmp_path,
                                         realmem_search=(nowhere, tmp_path / "empty",
                                                         small_realmem)))
    assert found == Sources(None, small_realmem)  # the first that holds its files


def test_wrong_names_fail_before_any_run(tmp_path: Path) -> None:
    wrong = visible("--benches", "locomo,nope", "--out", str(tmp_path / "o"))
    assert wrong.returncode == 2 and "nope" in wrong.stderr
    assert "locomo-sessions,example-followups" in wrong.stderr
    policy = visible("--benches", "example-followups", "--policies",
                   "ladder@9", "--out", str(tmp_path / "o"))
    assert policy.returncode == 1 and "unknown policies: ladder@9" in policy.stderr
    assert not (tmp_path / "o").exists()
    with pytest.raises(InvalidArgument, match="backend 'lucene'"):
        check_options(VisibleOptions(["example-followups"], tmp_path, backend="lucene"))


def _figures(rate: float, tokens: float, margin: float | None, n: int = 10) -> dict[str, Any]:
    return {"questions": n, "hit_rate": rate, "wilson95": [0.0, 1.0], "mean_tokens": tokens,
            "curve_margin": margin}


def test_summary_rules_on_hand_made_figures() -> None:
    assert [p for p in ("ladder@1", "ladder-zoom@1", "recall-flat@1000", "hybrid", "hook",
                        "ladder-oracle", "full", "fragments@40", "recall@500 [tantivy]")
            if in_ladder_family(p)] == ["ladder@1", "ladder-zoom@1", "recall-flat@1000",
                                        "hybrid", "hook", "recall@500 [tantivy]"]
    policies = {"ladder-oracle": _figures(0.9, 900, 0.4), "full": _figures(1.0, 9e5, 0.5),
                "ladder@1": _figures(0.6, 1200, 0.05), "recall@500": _figures(0.5, 450, 0.08),
                "hybrid": _figures(0.7, 1500, 0.08), "fragments@5": _figures(0.4, 160, 0.0)}
    best = best_of_family(policies)
    assert best is not None and best["policy"] == "hybrid"  # the tie goes to the higher rate
    assert best_of_family({"ladder@1": _figures(0.6, 1200, None)}) is None  # no curve
    assert keep_ratios({"ladder@1": _figures(0.3, 1, None), "recall@500": _figures(0.2, 1, None),
                        "hook": _figures(0.2, 1, None)},
                       {"ladder@1": _figures(0.6, 1, None), "recall@500": _figures(0.0, 1, None)}
                       ) == {"ladder@1": 0.5, "recall@500": None}
    mixed = {"ladder@1": {**_figures(0.5, 1, None, n=10), "hits": 5},
             "hook": _figures(0.2, 1, None)}
    switches = {"ladder@1": {**_figures(1.0, 1, None, n=2), "hits": 2}}
    alone = without_category(mixed, switches)  # 3 of the 8 follow-ups, the switches apart
    assert alone["ladder@1"]["questions"] == 8 and alone["ladder@1"]["hit_rate"] == 0.375
    assert alone["hook"] == mixed["hook"]
    split = {"recall@2000": _figures(0.3, 2100, None), "recall@1000": _figures(0.2, 990, None),
             "ladder-oracle": _figures(0.9, 800, None), "fragments@40": _figures(0.25, 1300, None)}
    found = split_against_fragments(split)
    assert found is not None and found["best"]["policy"] == "recall@1000"  # ≤ 2,000 tokens
    assert found["fragments@40"]["hit_rate"] == 0.25 and split_against_fragments(None) is None


def test_topic_switches_are_held_to_the_same_questions_asked_directly() -> None:
    """The switch ratio divides by the direct bench's rate on the questions asked again as
    switches (here 1 of 2 for the hook), not by its rate on every question (1 of 4)."""
    direct = [("c:q1", {"hook": True, "ladder@1": True}), ("c:q2", {"hook": False,
                                                                   "ladder@1": True}),
              ("c:q3", {"hook": False, "ladder@1": False}), ("c:q4", {"hook": False,
                                                                     "ladder@1": True})]
    follow = [("c:q1", {"hook": False}), ("c:q1:switch", {"hook": True, "ladder@1": False}),
              ("c:q2:switch", {"hook": False, "ladder@1": True})]
    paired = switch_direct(follow, direct)
    assert paired == {"hook": {"questions": 2, "hits": 1, "hit_rate": 0.5},
                      "ladder@1": {"questions": 2, "hits": 2, "hit_rate": 1.0}}
    fig = _figures
    report = {"policies": {"hook": fig(0.3, 60, -20.0), "ladder@1": fig(0.6, 1200, 5.0),
                           "fragments@5": fig(0.4, 160, None)},
              "routing": {"questions": 3, "first_rate": 1.0, "top4_rate": 1.0},
              "questions": {"run": 3}, "store": {"notes": 2},
              "by_category": {"topic-switch": {"hook": fig(0.5, 60, None, n=2),
                                               "ladder@1": fig(0.5, 1200, None, n=2)}}}
    plain = {"policies": {"hook": fig(0.25, 60, None, n=4), "ladder@1": fig(0.75, 1200, None,
                                                                            n=4)}}
    line = bench_summary(report, plain, "direct", paired)
    assert line["keep"]["switch_lowest"] == {"policy": "ladder@1", "ratio": 0.5}
    assert line["keep"]["switch_lowest_whole"] == {"policy": "ladder@1", "ratio": 0.6667}
    assert bench_summary(report, plain, "direct")["keep"]["switch_lowest"] == \
        line["keep"]["switch_lowest_whole"]  # without the outcomes, the whole bench's rate
