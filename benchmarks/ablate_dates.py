"""Dates on and off: hit rates on the questions that hold a time expression.

Usage: .venv/bin/python benchmarks/ablate_dates.py BENCH

Runs `ladder@1` and `recall@1000` twice on the bench, with the date weights of
`memory.retrieval.section_scores` and `memory.retrieval.recall` at zero and at their values,
and prints the hit rate and mean tokens over the questions where
`memory.model.timeexpr.find_ranges` finds an expression (resolved at the question's date).
Everything else is the same code.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import memory.retrieval.recall as recall_module
import memory.retrieval.section_scores as section_scores
from memory.bench.run import run_bench
from memory.model.timeexpr import find_ranges

POLICIES = ["ladder@1", "recall@1000"]


def dated_questions(bench: Path) -> set[str]:
    found = set()
    with open(bench / "questions.jsonl", encoding="utf-8") as lines:
        for line in lines:
            question = json.loads(line)
            day = dt.date.fromisoformat(question["date"][:10]) if question.get("date") \
                else dt.date.today()
            if find_ranges(question["question"], day):
                found.add(question["id"])
    return found


def main(bench: Path) -> None:
    dated = dated_questions(bench)
    print(f"questions with a time expression: {len(dated)}")
    weights = (section_scores.DATE_WEIGHT, recall_module.DATE_WEIGHT)
    for label, scale in (("dates off", 0.0), ("dates on", 1.0)):
        section_scores.DATE_WEIGHT, recall_module.DATE_WEIGHT = (w * scale for w in weights)
        run = run_bench(bench, POLICIES)
        for policy in POLICIES:
            picked = [r.outcomes[policy] for r in run.results if r.id in dated]
            rate = sum(o.hit for o in picked) / max(1, len(picked))
            tokens = sum(o.tokens for o in picked) / max(1, len(picked))
            print(f"{label} | {policy} | {len(picked)} | {rate:.1%} | {tokens:,.0f} tokens")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
