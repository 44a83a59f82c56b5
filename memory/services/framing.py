"""How much of ``recall``'s and ``read_section``'s answers is framing, over real questions.

*Framing* is every token of an answer that is not the notes' own text: labels, headers,
separators and the last line saying what was left out
(:func:`memory.retrieval.answers.framing`). ``notes tokens --questions FILE`` measures it
over a bench's questions (``benchmarks/followups/questions.jsonl`` for the example store):
``recall`` at 500, 1,000 and 2,000 tokens, and the sections an agent reads after the map (the
state of the note ``suggest`` puts first, the map's best section, and its best block range
when the map offers one). The committed budget (``tool_budget.json``) caps each share; see
docs/mcp.md.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memory.bench.questions import Question, read_questions
from memory.errors import NotesError
from memory.model.timeexpr import day_of
from memory.retrieval import answers

if TYPE_CHECKING:
    from memory.api import Notes

BUDGETS = (500, 1000, 2000)
READS = "read_section"


@dataclass(frozen=True)
class Framing:
    """The framing of one kind of answer over every question."""

    answers: int
    tokens: int  # of the answers
    framing: int  # of those tokens, not the notes' text
    worst: float  # the largest share of a single answer
    over: int  # answers whose own share is above ``limit``
    limit: float

    @property
    def share(self) -> float:
        return self.framing / self.tokens if self.tokens else 0.0

    def add(self, tokens: int, framing: int) -> Framing:
        own = framing / tokens if tokens else 0.0
        return dataclasses.replace(self, answers=self.answers + 1, tokens=self.tokens + tokens,
                                   framing=self.framing + framing,
                                   worst=max(self.worst, own),
                                   over=self.over + (own > self.limit))


def measure_framing(notes: Notes, questions: Path, limit: float = 0.15
                    ) -> dict[str, Framing]:
    """``recall@B`` (each budget of :data:`BUDGETS`) and ``read_section`` over the questions
    of ``questions`` (a bench's ``questions.jsonl``, about this store)."""
    empty = Framing(0, 0, 0, 0.0, 0, limit)
    found = {f"recall@{b}": empty for b in BUDGETS} | {READS: empty}
    def count(text: str) -> int:
        return notes.count_tokens(text, remember=False)

    read: set[tuple[str, str]] = set()
    for question in _questions(questions):
        today = day_of(question.date)
        context = " ".join(question.context) or None
        recalled = notes.recall_at(question.question, BUDGETS, context, today)
        for budget in BUDGETS:
            result = recalled[budget]
            if result.groups:  # "nothing matches" shows no note text to frame
                text = answers.recalled(result)
                found[f"recall@{budget}"] = found[f"recall@{budget}"].add(
                    count(text), answers.framing(text, result.note_text, count))
        for note, section in _reads(notes, question, context, today):
            if (note, section) in read:
                continue  # the same section read for another question counts once
            read.add((note, section))
            shown = notes.read_section(note, section)
            text = answers.section_text(shown)
            found[READS] = found[READS].add(count(text), answers.framing(
                text, shown.text.rstrip(), count))
    return found


def _questions(path: Path) -> Iterator[Question]:
    if not path.is_file():
        raise NotesError(f"no questions file at {path}; give a bench's questions.jsonl "
                         "(benchmarks/followups/questions.jsonl for the example store)")
    return read_questions(path)


def _reads(notes: Notes, question: Question, context: str | None,
           today: dt.date | None) -> list[tuple[str, str]]:
    """What an agent reads after the map: the top note's state, the map's best section and
    its best block range (when the map offers one)."""
    hits = notes.suggest(question.question, 1, context, today=today).hits
    if not hits:
        return []
    note = hits[0].note
    mapped = notes.section_map(note, question.question, today=today, context=context)
    reads = [(note, "state")] if notes.load_note(note).note.lead is not None else []
    rows = {r.id: r for r in mapped.rows}
    for section in mapped.best[:1]:
        reads.append((note, section))
        row = rows.get(section)
        if row is not None and row.zoom:
            reads.append((note, row.zoom[0].blocks.ref))
    return reads
