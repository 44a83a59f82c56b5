"""A sample of a bench: every Nth question of one half, in file order, with the same notes.

RealMem's test half (729 questions over 2,892,701 tokens of notes) takes hours on a 2-core
machine; the lever audit and docs/benchmarks.md use every third question of a half instead.
This writes that sample as a bench of its own, so that the figures can be made again:

Run: python benchmarks/sample_bench.py BENCH OUT --half test --every 3
then: notes bench run OUT --half test --backend tantivy
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory.bench.questions import (  # noqa: E402
    NOTES_FOLDER,
    QUESTIONS_FILE,
    BenchError,
    bench_paths,
    prepare_out,
)
from memory.bench.split import HALVES, half_of  # noqa: E402


def sample_lines(lines: list[str], half: str, every: int) -> list[str]:
    """The question lines of ``half``, in file order, then every ``every``-th of them
    (the first, the (every+1)-th, …)."""
    kept = [line for line in lines if line.strip()
            and half_of(str(json.loads(line)["id"])) == half]
    return kept[::every]


def sample_bench(bench: Path, out: Path, half: str, every: int, force: bool = False) -> int:
    """Write the sample into ``out`` (the bench's notes copied); return its questions."""
    notes, questions = bench_paths(bench)
    lines = questions.read_text(encoding="utf-8").splitlines()
    chosen = sample_lines(lines, half, every)
    target = prepare_out(out, force)
    shutil.rmtree(target)
    shutil.copytree(notes, out / NOTES_FOLDER)
    (out / QUESTIONS_FILE).write_text("".join(line + "\n" for line in chosen),
                                      encoding="utf-8")
    return len(chosen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bench", type=Path, help="the bench to sample")
    parser.add_argument("out", type=Path, help="the sample bench to write")
    parser.add_argument("--half", choices=HALVES, default="test")
    parser.add_argument("--every", type=int, default=3, help="keep every Nth question")
    parser.add_argument("--force", action="store_true", help="replace a bench already there")
    args = parser.parse_args()
    if args.every < 1:
        parser.error("--every takes a whole number of at least 1")
    try:
        count = sample_bench(args.bench, args.out, args.half, args.every, args.force)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"bench written to {args.out}: {count} questions (every {args.every} of the "
          f"{args.half} half of {args.bench})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
