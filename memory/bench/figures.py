"""The figures of a bench run: hit rates with their 95 % Wilson intervals, per policy and per
split (category, where the answer lived, gold notes), routing, the tuning and test halves, and
each policy's margin over the fragments curve. Plain data: :mod:`memory.bench.report` writes
them out.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from memory.bench.curve import DENSE, best_of_family, curve_margins
from memory.bench.run import Positions, QuestionResult, RunResult
from memory.bench.split import HALVES, half_gap, half_of


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95 % by default)."""
    if n == 0:
        return 0.0, 0.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def policy_figures(results: list[QuestionResult], policy: str) -> dict[str, Any]:
    outcomes = [r.outcomes[policy] for r in results if policy in r.outcomes]
    n, hits = len(outcomes), sum(o.hit for o in outcomes)
    any_hits = sum(o.any_line for o in outcomes)
    tokens = [o.tokens for o in outcomes]
    low, high = wilson(hits, n)
    return {"questions": n, "hits": hits, "hit_rate": _ratio(hits, n),
            "wilson95": [round(low, 4), round(high, 4)], "any_line_hits": any_hits,
            "any_line_rate": _ratio(any_hits, n),
            "mean_tokens": round(statistics.fmean(tokens), 1) if tokens else 0.0,
            "median_tokens": statistics.median(tokens) if tokens else 0}


def _ratio(k: int, n: int) -> float:
    return round(k / n, 4) if n else 0.0


def split_figures(run: RunResult, key: str) -> dict[str, dict[str, Any]]:
    """Figures per policy for each value of ``key`` (``category`` or ``where``)."""
    groups: dict[str, list[QuestionResult]] = {}
    for result in run.results:
        groups.setdefault(str(getattr(result, key)), []).append(result)
    return {value: {p: policy_figures(rs, p) for p in run.policies}
            for value, rs in sorted(groups.items())}


def routing_figures(results: list[QuestionResult], backend: str | None = None) -> dict[str, Any]:
    """How often suggest put the gold note first and in its list (of ``backend``'s run when
    the run has several), over the questions with one gold note; those whose answer spans
    several notes are counted apart (``several_gold``)."""
    positions = [r.positions_by_backend.get(backend, r.gold_positions) if backend
                 else r.gold_positions for r in results if r.has_gold]
    ranks = [p[0] for p in positions if len(p) == 1]
    first = sum(rank == 1 for rank in ranks)
    top = sum(rank is not None for rank in ranks)
    return {"questions": len(ranks), "first": first, "first_rate": _ratio(first, len(ranks)),
            "first_wilson95": _interval(first, len(ranks)),
            "top4": top, "top4_rate": _ratio(top, len(ranks)),
            "top4_wilson95": _interval(top, len(ranks)),
            "several_gold": several_gold_routing([p for p in positions if len(p) > 1])}


def several_gold_routing(positions: list[Positions]) -> dict[str, Any]:
    """Routing for questions with several gold notes: a gold note first; every gold note
    within the 4 shown (impossible beyond 4 gold notes); at least one shown; and the mean
    share of a question's gold notes that were shown."""
    n = len(positions)
    first = sum(1 in p for p in positions)
    every = sum(all(x is not None for x in p) for p in positions)
    some = sum(any(x is not None for x in p) for p in positions)
    shares = [sum(x is not None for x in p) / len(p) for p in positions]
    return {"questions": n, "first": first, "first_rate": _ratio(first, n),
            "first_wilson95": _interval(first, n), "all_top4": every,
            "all_top4_rate": _ratio(every, n), "all_top4_wilson95": _interval(every, n),
            "any_top4": some, "any_top4_rate": _ratio(some, n),
            "shown_share": round(statistics.fmean(shares), 4) if shares else 0.0}


def _interval(k: int, n: int) -> list[float]:
    return [round(x, 4) for x in wilson(k, n)]


def halves_figures(run: RunResult) -> dict[str, Any]:
    """The tuning and the test half (:mod:`memory.bench.split`): each policy's figures and
    margin, routing and the best ladder-family policy of each; and the gap between them."""
    halves: dict[str, Any] = {}
    for half in HALVES:
        results = [r for r in run.results if half_of(r.id) == half]
        policies = with_margins({p: policy_figures(results, p) for p in run.policies})
        halves[half] = {"questions": len(results), "policies": policies,
                        "routing": routing_figures(results), "best": best_of_family(policies)}
    return halves | {"gap": half_gap(halves)}


def with_margins(policies: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each policy's figures with its margin over the fragments curve, and over the dense
    fragments curve when ``dense@k`` policies ran (see curve.py)."""
    margins = curve_margins(policies)
    dense = curve_margins(policies, DENSE, "dense")
    return {name: figures | margins[name] | dense[name] for name, figures in policies.items()}
