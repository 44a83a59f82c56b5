"""A LoCoMo bench whose notes carry a state: the promotion bench's question of issue #37, what
promotion buys when the state already holds what the note knows (docs/promotion.md, "Against
the targets").

Usage:
  .venv/bin/python benchmarks/locomo_states.py locomo10.json BENCH OUT

BENCH is a bench of ``notes bench from-locomo`` (a note per conversation); OUT gets a copy of
its questions and notes, each note's state extended by one line a session from LoCoMo's own
``event_summary`` (``- 8 May, 2023: Caroline attends an LGBTQ support group for the first
time.``): what happened in each session, in LoCoMo's words, never a turn verbatim (so no
answer line moves into a state).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

STATE = "## Current state\n"
HISTORY = "\n## History"


def event_lines(sample: dict[str, Any]) -> list[str]:
    """One line a session that has events: its date, then its events."""
    events = sample.get("event_summary") or {}
    lines = []
    for key in sorted(events, key=lambda k: int(k.rsplit("_", 1)[1])):
        session = events[key]
        said = [e for who, items in session.items() if who != "date" for e in items]
        if said:
            lines.append(f"- {session.get('date', '')}: " + " ".join(said))
    return lines


def with_state(text: str, lines: list[str]) -> str:
    head, rest = text.split(STATE, 1)
    state, history = rest.split(HISTORY, 1)
    return head + STATE + state.rstrip("\n") + "\n" + "\n".join(lines) + "\n" + HISTORY + history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("locomo", type=Path)
    parser.add_argument("bench", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    samples = json.loads(args.locomo.read_text(encoding="utf-8"))
    (args.out / "notes").mkdir(parents=True, exist_ok=False)
    shutil.copy2(args.bench / "questions.jsonl", args.out / "questions.jsonl")
    for sample in samples:
        name = f"{sample['sample_id']}.md"
        text = (args.bench / "notes" / name).read_text(encoding="utf-8")
        (args.out / "notes" / name).write_text(with_state(text, event_lines(sample)),
                                               encoding="utf-8")
    print(f"{len(samples)} notes with states written to {args.out}")


if __name__ == "__main__":
    main()
