"""Where ``recall``'s framing goes, by kind: the last line, block runs, note names, section
references, and what is left of a label (brackets, newline).

Usage: .venv/bin/python benchmarks/framing_kinds.py NOTES QUESTIONS STATE [LIMIT]

For each question (its context and date passed as ``notes tokens --questions`` passes them),
``recall`` at 500, 1,000 and 2,000 tokens is rendered as the server answers it and then
again with one kind of framing taken out after another; each kind's tokens are what taking
it out saves (token counts do not add up exactly across a cut; the rest is shown as
``other``). Printed as JSON, per budget: the answers' tokens, their framing, and each kind's
tokens and share of the answers' tokens. STATE is a state folder of yours (the index is
built there on the first run). docs/lab/2026-12-05-framing.md has its figures.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory.api import Notes
from memory.bench.questions import read_questions
from memory.config import load_config
from memory.model.timeexpr import day_of
from memory.retrieval import answers

BUDGETS = (500, 1000, 2000)
LABEL = re.compile(r"^\[(?P<note>[^#\]]*)#(?P<ref>[^:\] ]*)(?P<runs>:[^\] ]*)?(?P<day> [^\]]*)?\]$")
KINDS = ("last line", "block runs", "note names", "section refs", "label rest")


def label_variant(line: str, drop: int) -> str:
    """A label line with the first ``drop`` label kinds taken out (runs, note, ref, rest)."""
    found = LABEL.match(line)
    if found is None:
        return line
    runs = "" if drop >= 1 else found["runs"] or ""
    note = "" if drop >= 2 else found["note"]
    ref = "" if drop >= 3 else found["ref"] + (found["day"] or "")
    if drop >= 4:
        return ""
    return f"[{note}#{ref}{runs}]"


def variants(result: Any) -> list[str]:
    """The answer, then without its last line, then with each label kind taken out."""
    body = "".join(g.text for g in result.groups)
    out = [answers.recalled(result), body]
    for drop in range(1, 5):
        parts = []
        for group in result.groups:
            line = label_variant(group.label.rstrip("\n"), drop)
            parts.append((line + "\n" if line else "") + group.body)
        out.append("".join(parts))
    return out


def main(notes_dir: Path, questions: Path, state: Path, limit: int | None) -> None:
    notes = Notes(load_config(notes_dir, state))
    count: Callable[[str], int] = lambda text: notes.count_tokens(text, remember=False)  # noqa: E731
    totals = {b: {"answers": 0, "tokens": 0, "framing": 0} | {k: 0 for k in KINDS}
              for b in BUDGETS}
    for question in read_questions(questions, limit):
        context = " ".join(question.context) or None
        recalled = notes.recall_at(question.question, BUDGETS, context, day_of(question.date))
        for budget in BUDGETS:
            result = recalled[budget]
            if not result.groups:
                continue
            sizes = [count(v) for v in variants(result)]
            tally = totals[budget]
            tally["answers"] += 1
            tally["tokens"] += sizes[0]
            tally["framing"] += max(0, sizes[0] - count(result.note_text))
            for kind, before, after in zip(KINDS, sizes[:-1], sizes[1:], strict=True):
                tally[kind] += before - after
    report: dict[str, Any] = {}
    for budget, tally in totals.items():
        tokens = tally["tokens"] or 1
        row: dict[str, Any] = {k: tally[k] for k in ("answers", "tokens", "framing")}
        row["share"] = round(tally["framing"] / tokens, 4)
        kinds = {k: {"tokens": tally[k], "share": round(tally[k] / tokens, 4)} for k in KINDS}
        kinds["other"] = {"tokens": tally["framing"] - sum(tally[k] for k in KINDS),
                          "share": round((tally["framing"] - sum(tally[k] for k in KINDS))
                                         / tokens, 4)}
        report[f"recall@{budget}"] = row | {"kinds": kinds}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]),
         int(sys.argv[4]) if len(sys.argv) == 5 else None)
