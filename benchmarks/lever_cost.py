"""What a lever costs ``suggest``: warm calls over one store, with the default levers and
with the levers given, interleaved (default, levers, default, levers) so that a drift of the
machine's speed falls on both; median and p95 of each, and their ratio (issue #15, the fourth
round in docs/benchmarks.md).

Usage: .venv/bin/python benchmarks/lever_cost.py NOTES_DIR QUERIES.jsonl [--levers +block-route]
       [--backend whoosh|tantivy] [--rounds 2]

QUERIES.jsonl holds one ``{"question": …}`` a line (``notes bench perf --generate-only``
writes such a store and file; a bench's questions.jsonl does too). The index is built in a
scratch folder first, and 20 questions warm it before each timed pass.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from memory.api import Notes
from memory.bench.reader import bench_config
from memory.retrieval.levers import DEFAULT, Levers, parse_levers

WARM = 20


def timed_pass(notes: Notes, levers: Levers, questions: list[str]) -> list[float]:
    """Milliseconds of each ``suggest`` (5 notes) with ``levers``, after a warm-up."""
    notes.ladder.levers = levers
    for question in questions[:WARM]:
        notes.ladder.suggest(question, 5)
    times = []
    for question in questions:
        started = time.perf_counter()
        notes.ladder.suggest(question, 5)
        times.append((time.perf_counter() - started) * 1000)
    return times


def p95(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.95)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notes", type=Path)
    parser.add_argument("questions", type=Path)
    parser.add_argument("--levers", default="+block-route")
    parser.add_argument("--backend", default="whoosh")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    questions = [json.loads(line)["question"]
                 for line in args.questions.read_text(encoding="utf-8").splitlines() if line]
    chosen = parse_levers(args.levers)
    notes = Notes(bench_config(args.notes, Path(tempfile.mkdtemp()), args.backend),
                  notify=lambda _: None)
    try:
        notes.index.refresh()
        times: dict[str, list[float]] = {"default": [], args.levers: []}
        for _ in range(args.rounds):
            times["default"] += timed_pass(notes, DEFAULT, questions)
            times[args.levers] += timed_pass(notes, chosen, questions)
    finally:
        notes.close()
    for label, values in times.items():
        print(f"{label}: {len(values)} suggests, median {statistics.median(values):.1f} ms, "
              f"p95 {p95(values):.1f} ms")
    base, other = times["default"], times[args.levers]
    ratio = statistics.median(other) / statistics.median(base)
    print(f"{args.levers} / default: median × {ratio:.2f}, p95 × {p95(other) / p95(base):.2f}")


if __name__ == "__main__":
    main()
