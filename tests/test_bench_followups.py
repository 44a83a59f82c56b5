"""The hand-written follow-up bench on notes_example/ (benchmarks/followups/questions.jsonl).

Every question must be a vague follow-up: its wording shares no topic word with the gold
note's title, id or aliases, while its context does name the topic. A "switch" question is the
other way round: the user changes topic, so the question names its note and the context is
about another note only. Its answer lines are whole lines of the gold note; temporal questions
carry a time expression that resolves, against the question's date, to the day of the history
entry holding the answer.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import subprocess
import sys
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from memory.bench.questions import Question, read_questions
from memory.index.words import stop_words
from memory.model.note import Note, parse_note
from memory.model.text import fold
from memory.model.timeexpr import find_ranges

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "notes_example"
BENCH = ROOT / "benchmarks" / "followups"
QUESTIONS = BENCH / "questions.jsonl"
NOTES_BIN = Path(sys.executable).parent / "notes"
CATEGORIES = {"state", "history", "temporal", "switch"}
# a time expression anchored on an event, not on the question's date: timeexpr cannot resolve it
EVENT_RELATIVE = re.compile(r"d[ií]a siguiente|day after|\blater\b|despu[eé]s de", re.IGNORECASE)


def questions() -> list[Question]:
    return list(read_questions(QUESTIONS))


@cache
def note(note_id: str) -> Note:
    return parse_note((EXAMPLE / f"{note_id}.md").read_text(encoding="utf-8"))


def words(text: str) -> set[str]:
    """Accent-folded words of 3 letters or more that are not stop words."""
    return {w for w in re.findall(r"[^\W\d_]+", fold(text))
            if len(w) >= 3 and w not in stop_words()}


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 4 and word.endswith("s") else word


def same_word(a: str, b: str) -> bool:
    """Equal, equal without a plural -s, or sharing their first 5 letters (despliegue and
    desplegar, invoice and invoices): a topic named in another form still counts."""
    return _stem(a) == _stem(b) or (len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5])


def topic_words(note_id: str) -> set[str]:
    """The names a note goes by: its title, its file name (not its folder), its aliases."""
    gold = note(note_id)
    return words(" ".join([gold.title, note_id.rsplit("/", 1)[-1].replace("-", " "),
                           *gold.aliases]))


def shared(text: str, topic: set[str]) -> set[str]:
    return {w for w in words(text) if any(same_word(w, t) for t in topic)}


def named_words(note_id: str) -> set[str]:
    """The topic words and the tags: what a context naming the note shares a word with."""
    return topic_words(note_id) | words(" ".join(note(note_id).tags).replace("-", " "))


@cache
def note_ids() -> tuple[str, ...]:
    return tuple(sorted(p.relative_to(EXAMPLE).with_suffix("").as_posix()
                        for p in EXAMPLE.rglob("*.md")))


def test_the_topic_word_check() -> None:
    topic = topic_words("howto/deploy-production")
    assert {"deploy", "production", "despliegue", "produccion"} <= topic
    assert shared("¿y cómo lo revertimos la última vez?", topic) == set()
    assert shared("¿Cómo desplegamos en producción?", topic) == {"desplegamos", "produccion"}
    assert shared("the deploys", topic) == {"deploys"}


def test_the_bench_has_the_promised_shape() -> None:
    found = questions()
    assert len(found) >= 40
    assert len({q.id for q in found}) == len(found)
    kinds = Counter(q.category for q in found)
    assert set(kinds) <= CATEGORIES
    assert kinds["history"] + kinds["temporal"] >= len(found) / 2
    assert kinds["temporal"] >= 10
    assert kinds["switch"] >= 10
    switches = [q for q in found if q.category == "switch"]
    in_state = [q for q in switches if _in_state(note(str(q.note)), q.answer_lines)]
    assert 0 < len(in_state) < len(switches), "switch answers mix state and history"
    text = " ".join(q.question for q in found)
    assert re.search(r"[¿áéíóúñ]", text) and re.search(r"\b(what|why|how)\b", text, re.I)


@pytest.mark.parametrize("question", questions(), ids=lambda q: q.id)
def test_each_question(question: Question) -> None:
    assert question.note and (EXAMPLE / f"{question.note}.md").is_file()
    gold = note(question.note)
    lines = {line.strip() for line in gold.text.split("\n")}
    assert question.answer_lines, "no answer line"
    for answer in question.answer_lines:
        assert answer == answer.strip() and answer in lines, answer
    topic = topic_words(question.note)
    context_topic = named_words(question.note)
    context = " ".join(question.context)
    assert 1 <= len(question.context) <= 3
    if question.category == "switch":
        assert shared(question.question, context_topic), "the question names no topic"
        assert shared(context, context_topic) == set(), "the context names the gold note"
        assert any(shared(context, named_words(other)) for other in note_ids()
                   if other != question.note), "the context names no other note"
    else:
        assert shared(question.question, topic) == set(), "the question names its topic"
        assert shared(context, context_topic), "the context names no topic"
    asked = dt.date.fromisoformat(str(question.date)[:10])
    entry = _entry_day(gold, question.answer_lines)
    if question.category == "state":
        assert _in_state(gold, question.answer_lines)
    elif question.category == "switch":
        assert _in_state(gold, question.answer_lines) or (
            entry is not None and entry <= asked), "answers in the state or an older entry"
    else:
        assert entry is not None, "history and temporal answers live in history entries"
        assert entry <= asked, "the question is asked before its answer was written"
    if question.category == "temporal":
        assert entry is not None
        ranges = find_ranges(question.question, asked)
        assert any(r.contains(entry) for r in ranges) or (
            not ranges and EVENT_RELATIVE.search(question.question)), ranges


def _in_state(gold: Note, answers: tuple[str, ...]) -> bool:
    state = gold.state
    return state is not None and all(a in {x.strip() for x in state.text.split("\n")}
                                     for a in answers)


def _entry_day(gold: Note, answers: tuple[str, ...]) -> dt.date | None:
    """The day of the history entry holding every answer line, if there is one."""
    for entry in gold.entries:
        inside = {x.strip() for x in entry.text.split("\n")}
        if entry.date and all(a in inside for a in answers):
            return dt.date.fromisoformat(entry.date[:10])
    return None


def test_most_temporal_questions_resolve_against_their_date() -> None:
    resolved = [q for q in questions() if q.category == "temporal"
                and find_ranges(q.question, dt.date.fromisoformat(str(q.date)[:10]))]
    assert len(resolved) >= 10


@pytest.mark.slow(25)
def test_make_bench_then_run(tmp_path: Path) -> None:
    out = tmp_path / "followups"
    made = subprocess.run([sys.executable, str(BENCH / "make_bench.py"), str(out)],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert not (out / "notes" / ".notes").exists()
    assert len(list((out / "notes").rglob("*.md"))) == len(list(EXAMPLE.rglob("*.md")))
    again = subprocess.run([sys.executable, str(BENCH / "make_bench.py"), str(out)],
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "--force" in again.stderr
    bare = tmp_path / "bare"
    stripped = subprocess.run([sys.executable, str(BENCH / "without_context.py"), str(out),
                               str(bare)], capture_output=True, text=True, timeout=120)
    assert stripped.returncode == 0, stripped.stderr
    assert [q.context for q in read_questions(bare / "questions.jsonl")] == \
        [()] * len(questions())
    assert len(list((bare / "notes").rglob("*.md"))) == len(list(EXAMPLE.rglob("*.md")))
    ran = subprocess.run([str(NOTES_BIN), "bench", "run", str(out), "--policies",
                          "ladder-oracle,full"], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    data = json.loads((out / "report" / "report.json").read_text())
    assert data["questions"]["run"] == len(questions())
    assert data["policies"]["full"]["hit_rate"] == 1.0
