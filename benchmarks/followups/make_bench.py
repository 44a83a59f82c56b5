"""Assemble the follow-up bench: notes_example/ as OUT/notes, and this folder's questions.

The questions (questions.jsonl beside this script) are vague follow-ups about the bundled
example store: their wording does not name the note, their context does. See
docs/bench-followups.md.

Run: python benchmarks/followups/make_bench.py OUT [--force]
then: notes bench run OUT
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from memory.bench.questions import QUESTIONS_FILE, BenchError, prepare_out  # noqa: E402

EXAMPLE = ROOT / "notes_example"
QUESTIONS = HERE / QUESTIONS_FILE


def make_bench(out: Path, force: bool = False) -> int:
    """Write the bench into ``out``; return the number of notes copied."""
    notes = prepare_out(out, force)
    shutil.rmtree(notes)
    # the example store's own index and state (.notes/) are not part of the notes
    shutil.copytree(EXAMPLE, notes, ignore=shutil.ignore_patterns(".*"))
    shutil.copyfile(QUESTIONS, out / QUESTIONS_FILE)
    return sum(1 for _ in notes.rglob("*.md"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="the bench folder to write")
    parser.add_argument("--force", action="store_true", help="replace a bench already there")
    args = parser.parse_args()
    try:
        count = make_bench(args.out, args.force)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"bench written to {args.out}: {count} notes, questions from {QUESTIONS}")
    print(f"run it with: notes bench run {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
