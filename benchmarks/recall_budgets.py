"""recall at budgets 250-2,000: framing, hits, and whether more budget ever shows less.

Usage: .venv/bin/python benchmarks/recall_budgets.py BENCH [LIMIT]

For each question of the bench (its context and date passed as `notes bench run` passes
them), ``recall`` is gathered once and filled at 250, 500, 1,000 and 2,000 tokens. Printed
as JSON, per budget: the answers' tokens, their framing (tokens that are not note text:
the answer's tokens minus those of the note lines it shows; docs/mcp.md#framing), its share,
the worst answer's share, how many answers are above 15 %, and the hits (every answer line
shown); per B of 250, 500 and 1,000: the questions where a block of ``recall@B`` is missing
from ``recall@2B`` (shown neither alone nor inside a whole section) and those that hit at
``B`` and miss at ``2B``; and the framing of the sections the ``ladder@1`` and
``ladder-zoom@1`` policies read (each section once). It runs on the code before issue #34
too (PYTHONPATH=an older checkout), where a group's note text is its text after the
label's line; docs/lab/2026-12-04-recall-lean.md has its figures.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from memory.bench.policies import QuestionPass, Reading, question_day
from memory.bench.questions import bench_paths, line_set, read_questions
from memory.bench.reader import BenchReader, bench_config
from memory.fronts import render
from memory.retrieval.filling import shown_blocks

BUDGETS = (250, 500, 1000, 2000)
LIMIT = 0.15



def note_text(result: Any) -> str:
    if hasattr(result, "note_text"):
        return str(result.note_text)
    return "".join(g.text.split("\n", 1)[1] for g in result.groups)  # before: label, text


class Tally:
    def __init__(self) -> None:
        self.answers = self.tokens = self.framing = self.over = self.hits = 0
        self.worst = 0.0

    def add(self, tokens: int, framing: int, hit: bool = False) -> None:
        share = framing / tokens if tokens else 0.0
        self.answers += 1
        self.tokens += tokens
        self.framing += framing
        self.worst = max(self.worst, share)
        self.over += share > LIMIT
        self.hits += hit

    def report(self) -> dict[str, Any]:
        return {"answers": self.answers, "tokens": self.tokens, "framing": self.framing,
                "share": round(self.framing / self.tokens, 4) if self.tokens else 0.0,
                "worst": round(self.worst, 4), "over_15": self.over, "hits": self.hits}


def main(bench: Path, limit: int | None) -> None:
    notes_dir, questions = bench_paths(bench)
    tallies = {b: Tally() for b in BUDGETS}
    reads = Tally()
    kept_out = {b: 0 for b in BUDGETS[:-1]}
    hit_lost = {b: 0 for b in BUDGETS[:-1]}
    read: set[tuple[str, str]] = set()
    with tempfile.TemporaryDirectory() as scratch:
        reader = BenchReader(bench_config(notes_dir, Path(scratch) / "state"))
        ladder = reader.notes._ladder
        reader.prepare()
        for question in read_questions(questions, limit):
            if not question.answer_lines:
                continue
            gathered = ladder.gather(question.question, " ".join(question.context) or None,
                                     question_day(question))
            results = {b: ladder.fill(gathered, b) for b in BUDGETS}
            hits = {}
            for budget, result in results.items():
                text = render.recalled(result)
                seen = line_set(text)
                hits[budget] = all(a.strip() in seen for a in question.answer_lines)
                if result.groups:  # "nothing matches" shows no note text to frame
                    tokens = reader.count(text)
                    tallies[budget].add(tokens, max(0, tokens - reader.count(
                        note_text(result))), hits[budget])
            for budget in BUDGETS[:-1]:
                large = shown_blocks(results[2 * budget].groups)
                whole = {(n, s) for n, s, b in large if b == 0}
                kept_out[budget] += any(b not in large and b[:2] not in whole
                                        for b in shown_blocks(results[budget].groups))
                hit_lost[budget] += hits[budget] and not hits[2 * budget]
            for note, section in ladder_reads(reader, question):
                if (note, section) not in read:
                    read.add((note, section))
                    shown = ladder.read_section(note, section)
                    text = render.section_text(shown)
                    tokens = reader.count(text)
                    reads.add(tokens, max(0, tokens - reader.count(shown.text.rstrip())))
        reader.close()
    print(json.dumps({"recall": {b: t.report() for b, t in tallies.items()},
                      "block_kept_out_at_2B": kept_out, "hit_at_B_missed_at_2B": hit_lost,
                      "read_section": reads.report()}, indent=1))


def ladder_reads(reader: BenchReader, question: Any) -> list[tuple[str, str]]:
    """The sections ``ladder@1`` and ``ladder-zoom@1`` read for the question."""
    calls: list[tuple[str, str]] = []
    read = reader.read

    def recording(note: str, section: str) -> str:
        calls.append((note, section))
        return read(note, section)

    reader.read = recording  # type: ignore[method-assign]
    try:
        walk = QuestionPass(reader, question, Reading((), 0))
        walk.run("ladder@1")
        walk.run("ladder-zoom@1")
    finally:
        reader.read = read  # type: ignore[method-assign]
    return calls


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else None)
