"""Copy a bench without its questions' ``context``: the baseline of policies that ignore it.

The policies pass a question's context to ``suggest``; the same bench with the context taken
out measures what the question alone reaches, on the same code.

Run: python benchmarks/followups/without_context.py BENCH OUT [--force]
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT))

from memory.bench.questions import (  # noqa: E402
    QUESTIONS_FILE,
    BenchError,
    QuestionWriter,
    bench_paths,
    prepare_out,
    read_questions,
)


def without_context(bench: Path, out: Path, force: bool = False) -> int:
    """Write the copy; return the number of questions."""
    notes, questions = bench_paths(bench)
    target = prepare_out(out, force)
    shutil.rmtree(target)
    shutil.copytree(notes, target, ignore=shutil.ignore_patterns(".*"))
    with QuestionWriter(out / QUESTIONS_FILE) as writer:
        writer.write_all(dataclasses.replace(q, context=()) for q in read_questions(questions))
        return writer.count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bench", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--force", action="store_true", help="replace a bench already there")
    args = parser.parse_args()
    try:
        count = without_context(args.bench, args.out, args.force)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{count} questions without context written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
