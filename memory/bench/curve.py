"""The fragments curve, and each policy's margin over it at its own mean tokens.

The ``fragments@k`` policies trace what loose paragraphs reach for a given number of tokens.
A policy's **curve margin** is its hit rate minus that curve at the policy's mean tokens:
interpolated linearly in log(tokens) between the two fragments policies that bracket it; for a
policy cheaper than every fragments policy, the cheapest one's rate; for one dearer than all,
the dearest one's. Fragments policies lie on the curve (margin 0). With several backends in one
run (``policy [backend]``), each backend's policies are measured against its own curve.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

FRAGMENTS = "fragments@"
DENSE = "dense@"  # the dense fragments curve: the same paragraphs ranked by e5's cosine


@dataclass(frozen=True)
class CurvePoint:
    policy: str
    tokens: float
    rate: float


@dataclass(frozen=True)
class CurveReading:
    rate: float  # the curve's hit rate at the tokens asked
    below: str  # the fragments policy at or below those tokens (the cheapest when none is)
    above: str  # the one at or above them (the dearest when none is)


def is_fragments(policy: str, prefix: str = FRAGMENTS) -> bool:
    return backend_of(policy)[0].startswith(prefix)


def is_curve(policy: str) -> bool:
    """A point of either curve (BM25 fragments or dense fragments)."""
    return is_fragments(policy) or is_fragments(policy, DENSE)


def backend_of(policy: str) -> tuple[str, str | None]:
    """``'recall@500 [tantivy]'`` → ``('recall@500', 'tantivy')``; no suffix → None."""
    if policy.endswith("]") and " [" in policy:
        name, backend = policy[:-1].rsplit(" [", 1)
        return name, backend
    return policy, None


def curve_points(policies: dict[str, dict[str, Any]], prefix: str = FRAGMENTS
                 ) -> dict[str | None, list[CurvePoint]]:
    """The policies of one curve (``fragments@``, or ``dense@``) that ran, by backend,
    cheapest first."""
    curves: dict[str | None, list[CurvePoint]] = {}
    for name, figures in policies.items():
        if is_fragments(name, prefix) and figures["questions"]:
            point = CurvePoint(name, max(float(figures["mean_tokens"]), 1.0),
                               float(figures["hit_rate"]))
            curves.setdefault(backend_of(name)[1], []).append(point)
    return {b: sorted(points, key=lambda p: (p.tokens, p.rate)) for b, points in curves.items()}


def curve_at(points: list[CurvePoint], tokens: float) -> CurveReading:
    """The curve's hit rate at ``tokens`` (``points`` sorted by tokens, at least one)."""
    if not points:
        raise ValueError("the fragments curve needs at least one point")
    tokens = max(tokens, 1.0)
    if tokens <= points[0].tokens:
        return CurveReading(points[0].rate, points[0].policy, points[0].policy)
    if tokens >= points[-1].tokens:
        return CurveReading(points[-1].rate, points[-1].policy, points[-1].policy)
    upper = next(i for i, p in enumerate(points) if p.tokens >= tokens)
    low, high = points[upper - 1], points[upper]
    if high.tokens == tokens:
        return CurveReading(high.rate, high.policy, high.policy)
    share = (math.log(tokens) - math.log(low.tokens)) / (math.log(high.tokens)
                                                         - math.log(low.tokens))
    return CurveReading(low.rate + share * (high.rate - low.rate), low.policy, high.policy)


def curve_margins(policies: dict[str, dict[str, Any]], prefix: str = FRAGMENTS,
                  key: str = "curve") -> dict[str, dict[str, Any]]:
    """Per policy: ``curve_rate`` (the curve at its mean tokens), ``curve_margin`` (its hit
    rate minus that; both fractions, as ``hit_rate``) and ``curve_between`` (the two
    fragments policies used); all None when no fragments policy ran on its backend or the
    policy ran on no question. ``prefix``/``key``: the dense curve's (``dense@`` policies,
    ``dense_rate``, ``dense_margin``, ``dense_between``)."""
    curves = curve_points(policies, prefix)
    names = (f"{key}_rate", f"{key}_margin", f"{key}_between")
    out: dict[str, dict[str, Any]] = {}
    for name, figures in policies.items():
        points = curves.get(backend_of(name)[1])
        if not points or not figures["questions"]:
            out[name] = dict.fromkeys(names)
            continue
        reading = curve_at(points, float(figures["mean_tokens"]))
        if is_fragments(name, prefix):  # on the curve by definition, even where two share
            reading = CurveReading(float(figures["hit_rate"]), name, name)  # tokens
        out[name] = dict(zip(names, (round(reading.rate, 4),
                                     round(float(figures["hit_rate"]) - reading.rate, 4),
                                     [reading.below, reading.above]), strict=True))
    return out


def margin_text(margin: float | None) -> str:
    """A margin in points, signed: ``+7.5``, ``−3.0``, ``0.0``; ``–`` when there is none."""
    if margin is None:
        return "–"
    points = round(100 * margin, 1)
    if points == 0:
        return "0.0"
    return f"+{points:.1f}" if points > 0 else f"−{-points:.1f}"


# -- the ladder family ---------------------------------------------------------------------
FAMILY = ("ladder", "recall", "hybrid", "hook")  # the policies an agent's reads are made of
CEILINGS = ("ladder-oracle", "full")  # told the gold note, or reading everything


def in_ladder_family(policy: str) -> bool:
    """``ladder@N``, ``ladder-zoom@1``, ``recall*``, ``hybrid``, ``hook*``; not
    ``ladder-oracle`` (told the gold note) nor ``full``."""
    name = backend_of(policy)[0]
    return name not in CEILINGS and name.startswith(FAMILY)


def best_of_family(policies: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The ladder-family policy with the largest curve margin (ties: the higher hit rate);
    None when none ran or no fragments policy ran (no curve, no margin)."""
    ranked = [(name, f) for name, f in policies.items() if in_ladder_family(name)
              and f["questions"] and f.get("curve_margin") is not None]
    if not ranked:
        return None
    name, f = max(ranked, key=lambda item: (item[1]["curve_margin"], item[1]["hit_rate"]))
    return {"policy": name, "hit_rate": f["hit_rate"], "wilson95": f["wilson95"],
            "mean_tokens": f["mean_tokens"], "curve_margin": f["curve_margin"],
            "dense_margin": f.get("dense_margin")}
