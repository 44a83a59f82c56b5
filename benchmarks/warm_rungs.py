"""Warm calls of three rungs over one store, in one process: ``suggest`` (5 notes),
``recall`` (1,000 tokens) and ``section_map`` (of the question's first note); median and
p95 of each. Run it at two commits to compare them (docs/performance.md, "Warm recall and
maps"); a figure against a baseline in the same run is ``benchmarks.lever_cost``'s job.

Usage: .venv/bin/python -m benchmarks.warm_rungs NOTES_DIR QUERIES.jsonl [--questions 150]

QUERIES.jsonl holds one ``{"question": …}`` a line (``python -m benchmarks perf --generate-only``
writes such a store and file). The index is built in a scratch folder first, and 15
questions warm each rung before its timed pass.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.perf.measure import percentiles, warm_then_time
from memory.api import Notes
from memory.bench.reader import bench_config

WARM = 15


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notes", type=Path)
    parser.add_argument("questions", type=Path)
    parser.add_argument("--questions", dest="count", type=int, default=150)
    args = parser.parse_args()
    questions = [json.loads(line)["question"] for line in
                 args.questions.read_text(encoding="utf-8").splitlines() if line][:args.count]
    notes = Notes(bench_config(args.notes, Path(tempfile.mkdtemp())), notify=lambda _: None)
    try:
        notes.index.refresh()
        first = {q: next((h.note for h in notes.suggest(q, limit=1).hits), None)
                 for q in questions}
        rungs: dict[str, Callable[[str], object]] = {
            "suggest": lambda q: notes.suggest(q, limit=5),
            "recall@1000": lambda q: notes.recall(q, 1000),
            "section_map": lambda q: first[q] and notes.section_map(first[q], q),
        }
        for name, call in rungs.items():
            got = percentiles(warm_then_time(call, questions, WARM))
            print(f"{name}: {got['n']} calls, median {got['p50_ms']:.1f} ms, "
                  f"p95 {got['p95_ms']:.1f} ms", flush=True)
    finally:
        notes.close()


if __name__ == "__main__":
    main()
