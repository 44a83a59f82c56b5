"""What a lever costs ``suggest``: warm calls over one store, with the default levers and
with the levers given, interleaved (default, levers, default, levers) so that a drift of the
machine's speed falls on both; median and p95 of each, and their ratio (issue #15, the fourth
round in docs/benchmarks.md).

Usage: .venv/bin/python -m benchmarks.lever_cost NOTES_DIR QUERIES.jsonl [--levers +block-route]
       [--backend whoosh|tantivy] [--rounds 2]

QUERIES.jsonl holds one ``{"question": …}`` a line (``python -m benchmarks perf --generate-only``
writes such a store and file; a bench's questions.jsonl does too). The index is built in a
scratch folder first, with the levers given on (as a store that has them builds it: the
coverage lever makes its line terms then), and 20 questions warm it before each timed pass.
The build's seconds are printed too.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from benchmarks.perf.measure import percentiles, warm_then_time
from memory.api import Notes
from memory.bench.reader import bench_config
from memory.retrieval.levers import DEFAULT, Levers, parse_levers

WARM = 20


def timed_pass(notes: Notes, levers: Levers, questions: list[str]) -> list[float]:
    """Seconds of each ``suggest`` (5 notes) with ``levers``, after a warm-up."""
    notes._ladder.levers = levers
    return warm_then_time(lambda q: notes._ladder.suggest(q, 5), questions, WARM)


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
        notes._ladder.levers = chosen
        started = time.perf_counter()
        notes.index.refresh()
        print(f"index built with {args.levers} in {time.perf_counter() - started:.1f} s")
        times: dict[str, list[float]] = {"default": [], args.levers: []}
        for _ in range(args.rounds):
            times["default"] += timed_pass(notes, DEFAULT, questions)
            times[args.levers] += timed_pass(notes, chosen, questions)
    finally:
        notes.close()
    figures = {label: percentiles(values) for label, values in times.items()}
    for label, got in figures.items():
        print(f"{label}: {got['n']} suggests, median {got['p50_ms']:.1f} ms, "
              f"p95 {got['p95_ms']:.1f} ms")
    base, other = figures["default"], figures[args.levers]
    print(f"{args.levers} / default: median × {other['p50_ms'] / base['p50_ms']:.2f}, "
          f"p95 × {other['p95_ms'] / base['p95_ms']:.2f}")


if __name__ == "__main__":
    main()
