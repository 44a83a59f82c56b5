"""Whether a bench's answers depend on how its index was built: the same questions asked of
an index built in one process and of one built by two worker processes (a segment each).

Usage: .venv/bin/python benchmarks/tie_order.py BENCH [--every N]

For every N-th question (default 5) it compares ``suggest``'s 8 notes with their scores and
``recall``'s blocks at 1,000 tokens, and prints how many questions differ. Equal scores come
in :func:`memory.index.stored.tie_key` order, so it should print 0; before that order,
Whoosh gave tied hits in segment order (docs/benchmarks.md, "Ninth round").
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from memory.api import Notes
from memory.bench.questions import bench_paths, read_questions
from memory.bench.reader import bench_config

Answer = tuple[str, list[tuple[str, float]], list[tuple[str, str]]]


def answers(bench: Path, procs: int, every: int) -> tuple[int, list[Answer]]:
    """The build's process count and each sampled question's notes and recalled blocks."""
    notes_dir, questions = bench_paths(bench)
    notes = Notes(bench_config(notes_dir, Path(tempfile.mkdtemp())), notify=lambda _: None)
    notes.index.build_procs = procs
    notes.refresh_index(rebuild=True)
    out: list[Answer] = []
    for i, question in enumerate(read_questions(questions)):
        if i % every:
            continue
        hits = notes.suggest(question.question, limit=8).hits
        groups = notes.recall(question.question, budget=1000).groups
        out.append((question.id, [(h.note, h.score) for h in hits],
                    [(g.note, g.ref) for g in groups]))
    built = notes.index.last_build_procs
    notes.close()
    return built, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", type=Path)
    parser.add_argument("--every", type=int, default=5)
    args = parser.parse_args()
    one_procs, one = answers(args.bench, 1, args.every)
    two_procs, two = answers(args.bench, 2, args.every)
    differ = [a[0] for a, b in zip(one, two, strict=True) if a != b]
    print(f"built with {one_procs} and {two_procs} processes: {len(differ)} of {len(one)} "
          f"questions differ" + (f" (first: {', '.join(differ[:5])})" if differ else ""))


if __name__ == "__main__":
    main()
