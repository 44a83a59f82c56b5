"""The curve margin (a policy's hit rate minus the fragments curve at its mean tokens) and the
routing of questions with several gold notes, on hand-made numbers; and the report that
carries them."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from memory.bench.curve import CurvePoint, curve_at, curve_margins, margin_text
from memory.bench.figures import several_gold_routing
from memory.bench.report import write_report
from memory.bench.run import Outcome, QuestionResult, RunResult


def figures(rate: float, tokens: float, questions: int = 100) -> dict[str, Any]:
    return {"hit_rate": rate, "mean_tokens": tokens, "questions": questions}


CURVE = {"fragments@5": figures(0.40, 100), "fragments@10": figures(0.50, 400),
         "fragments@20": figures(0.60, 1600)}


def test_between_two_fragments_policies_the_curve_is_linear_in_log_tokens() -> None:
    margins = curve_margins(CURVE | {"recall@500": figures(0.60, 200)})
    # 200 tokens is half-way between 100 and 400 in log scale: the curve is at 45 %
    assert margins["recall@500"] == {"curve_rate": 0.45, "curve_margin": 0.15,
                                     "curve_between": ["fragments@5", "fragments@10"]}
    points = [CurvePoint("a", 100, 0.4), CurvePoint("b", 1000, 0.7)]
    at = curve_at(points, 300)
    assert at.rate == pytest.approx(0.4 + 0.3 * math.log(3) / math.log(10))
    assert curve_at(points, 1000).rate == 0.7 and curve_at(points, 100).rate == 0.4


def test_cheaper_than_every_fragments_policy_uses_the_cheapest() -> None:
    margins = curve_margins(CURVE | {"hook": figures(0.30, 60)})
    assert margins["hook"] == {"curve_rate": 0.40, "curve_margin": -0.10,
                               "curve_between": ["fragments@5", "fragments@5"]}


def test_dearer_than_every_fragments_policy_uses_the_dearest() -> None:
    margins = curve_margins(CURVE | {"full": figures(1.0, 200_000)})
    assert margins["full"]["curve_rate"] == 0.60 and margins["full"]["curve_margin"] == 0.40
    assert margins["full"]["curve_between"] == ["fragments@20", "fragments@20"]


def test_fragments_lie_on_the_curve_and_no_curve_means_no_margin() -> None:
    margins = curve_margins(CURVE | {"ladder@1": figures(0.7, 900, questions=0)})
    assert all(margins[f"fragments@{k}"]["curve_margin"] == 0.0 for k in (5, 10, 20))
    assert margins["ladder@1"]["curve_margin"] is None  # it ran on no question
    alone = curve_margins({"ladder@1": figures(0.7, 900)})
    assert alone["ladder@1"] == {"curve_rate": None, "curve_margin": None,
                                 "curve_between": None}
    # fragments policies listed out of order still make the curve in token order
    shuffled = curve_margins({"fragments@20": figures(0.6, 1600), "x": figures(0.5, 800),
                              "fragments@5": figures(0.4, 100)})
    assert shuffled["x"]["curve_rate"] == pytest.approx(0.4 + 0.2 * math.log(8) / math.log(16),
                                                        abs=1e-4)


def test_each_backend_has_its_own_curve() -> None:
    policies = {"fragments@5 [whoosh]": figures(0.4, 100),
                "fragments@10 [whoosh]": figures(0.5, 400),
                "fragments@5 [tantivy]": figures(0.2, 100),
                "fragments@10 [tantivy]": figures(0.3, 400),
                "recall@500 [whoosh]": figures(0.6, 200),
                "recall@500 [tantivy]": figures(0.6, 200)}
    margins = curve_margins(policies)
    assert margins["recall@500 [whoosh]"]["curve_margin"] == 0.15
    assert margins["recall@500 [tantivy]"]["curve_margin"] == 0.35
    assert margins["recall@500 [tantivy]"]["curve_between"] == ["fragments@5 [tantivy]",
                                                                "fragments@10 [tantivy]"]


def test_margin_text() -> None:
    assert [margin_text(m) for m in (0.075, -0.03, 0.0, 0.00001, None)] == \
        ["+7.5", "−3.0", "0.0", "0.0", "–"]


def test_several_gold_routing() -> None:
    routed = several_gold_routing([(1, 3), (2, None), (None, None), (4, 1, None, 2)])
    assert (routed["questions"], routed["first"], routed["all_top4"], routed["any_top4"]) == \
        (4, 2, 1, 3)
    assert routed["shown_share"] == round((1 + 0.5 + 0 + 0.75) / 4, 4)
    assert several_gold_routing([])["questions"] == 0


def _result(qid: str, positions: tuple[int | None, ...],
            outcomes: dict[str, tuple[bool, int]]) -> QuestionResult:
    return QuestionResult(qid, "single-hop", "history", positions,
                          {p: Outcome(hit, hit, tokens) for p, (hit, tokens) in
                           outcomes.items()})


def test_the_report_carries_margins_and_several_gold_routing(tmp_path: Path) -> None:
    # fragments@5: 1 hit of 4 at 100 tokens, fragments@10: 3 of 4 at 400; recall@500: 4 of
    # 4 at 200 (half-way in log tokens: the curve is at 50 %, so the margin is +50 points)
    rows = [("a", (1,), {"fragments@5": (True, 100), "fragments@10": (True, 400),
                         "recall@500": (True, 200)}),
            ("b", (2,), {"fragments@5": (False, 100), "fragments@10": (True, 400),
                         "recall@500": (True, 200)}),
            ("c", (None, 1), {"fragments@5": (False, 100), "fragments@10": (True, 400),
                              "recall@500": (True, 200)}),
            ("d", (), {"fragments@5": (False, 100), "fragments@10": (False, 400),
                       "recall@500": (True, 200)})]
    run = RunResult(Path("hand"), ["fragments@5", "fragments@10", "recall@500"],
                    [_result(*row) for row in rows], read=4, notes=3, store_tokens=999)
    data = write_report(run, tmp_path, "notes bench run hand", plot=False)
    recall = data["policies"]["recall@500"]
    assert (recall["curve_rate"], recall["curve_margin"]) == (0.5, 0.5)
    assert recall["curve_between"] == ["fragments@5", "fragments@10"]
    assert data["policies"]["fragments@10"]["curve_margin"] == 0.0
    assert json.loads((tmp_path / "report.json").read_text())["policies"] == data["policies"]
    assert data["routing"]["questions"] == 2 and data["routing"]["first"] == 1
    assert data["routing"]["several_gold"]["questions"] == 1
    assert data["routing"]["several_gold"]["first"] == 1
    text = (tmp_path / "report.md").read_text()
    assert "| curve margin |" in text and "| recall@500 | 100.0 % |" in text
    assert "| +50.0 | 4 |" in text and "| curve | 4 |" in text
    assert "Answer in several notes (1 questions): a gold note first 100.0 %" in text

