"""Every bench is split into a tuning half and a test half, by a hash of each question's id.

Levers, weights and constants are chosen on the tuning half; figures are reported on the test
half, and the gap between the two halves is shown (a large gap is overfitting). The split is
deterministic and depends on the id alone, so a question is in the same half in every shape
of a source (LoCoMo's direct questions, its per-session notes and its follow-ups share their
ids) and in every run.
"""

from __future__ import annotations

import hashlib
from typing import Any

HALVES = ("tuning", "test")


def half_of(question_id: str) -> str:
    """``tuning`` or ``test``: the low bit of the first byte of the id's SHA-256."""
    return HALVES[hashlib.sha256(question_id.encode("utf-8")).digest()[0] & 1]


def check_half(half: str | None) -> str | None:
    """``None`` (every question), ``tuning`` or ``test``; anything else is refused."""
    if half in (None, "all"):
        return None
    if half not in HALVES:
        from memory.errors import InvalidArgument

        raise InvalidArgument(f"half {half!r} is not one of tuning, test, all; give --half "
                              "tuning to choose levers, --half test to report")
    return half


def half_gap(halves: dict[str, dict[str, Any]]) -> float | None:
    """The tuning half's best ladder-family margin minus the test half's, in fractions (None
    when either has no margin): how much better the half that choices were made on looks."""
    tuning, test = (halves.get(h, {}).get("best") for h in HALVES)
    if tuning is None or test is None:
        return None
    return round(float(tuning["curve_margin"]) - float(test["curve_margin"]), 4)
