"""The LoCoMo adapter, on the real file (read where it lies: it is CC BY-NC, never copied)."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from shared_data import LOCOMO, shared_file

from memory.bench.locomo import (
    LocomoCounts,
    conversation_note,
    locomo_to_bench,
    parse_locomo_date,
    questions_of,
)
from memory.bench.questions import BenchError, read_questions
from memory.model.note import parse_note


@pytest.fixture(scope="module")
def locomo_bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, LocomoCounts]:
    out = tmp_path_factory.mktemp("locomo")
    return out, locomo_to_bench(shared_file(LOCOMO), out)


def test_counts_match_the_dataset(locomo_bench: tuple[Path, LocomoCounts]) -> None:
    out, counts = locomo_bench
    assert (counts.conversations, counts.sessions, counts.turns, counts.questions) == \
        (10, 272, 5882, 1986)
    assert counts.categories == Counter({"multi-hop": 282, "temporal": 321, "open-domain": 96,
                                         "single-hop": 841, "adversarial": 446})
    # "D" and two ids of turns that do not exist (D10:19 in conv-42, D4:36 in conv-47)
    assert counts.dropped_ids == 3
    assert counts.no_evidence == 4
    questions = list(read_questions(out / "questions.jsonl"))
    assert len(questions) == 1986
    assert Counter(q.category for q in questions) == counts.categories
    assert len(list((out / "notes").glob("*.md"))) == 10


def test_every_answer_line_is_a_line_of_its_note(
        locomo_bench: tuple[Path, LocomoCounts]) -> None:
    out, _ = locomo_bench
    lines: dict[str, set[str]] = {}
    for path in (out / "notes").glob("*.md"):
        lines[path.stem] = {line.strip() for line in path.read_text().split("\n")}
    kept = 0
    for question in read_questions(out / "questions.jsonl"):
        assert question.note in lines
        for answer in question.answer_lines:
            assert answer == answer.strip() and answer in lines[question.note], question.id
            kept += 1
    assert kept > 2700


def test_notes_follow_the_format(locomo_bench: tuple[Path, LocomoCounts]) -> None:
    out, _ = locomo_bench
    data = json.loads(shared_file(LOCOMO).read_text())
    for sample in data:
        text = (out / "notes" / f"{sample['sample_id']}.md").read_text()
        note = parse_note(text)
        sessions = [k for k in sample["conversation"] if k.split("_")[-1].isdigit()
                    and k.startswith("session_") and k.count("_") == 1]
        assert [p for p in note.problems if p.severity == "error"] == []
        assert note.state is not None and f"{len(sessions)} sessions" in note.state.text
        assert len(note.entries) == len(sessions)
        assert note.entries[0].title == "Session 1" and note.entries[0].date is not None
        speakers = (sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"])
        assert note.title == f"{speakers[0]} and {speakers[1]}"
    conv26 = parse_note((out / "notes" / "conv-26.md").read_text())
    assert conv26.entries[0].date == "2023-05-08 13:56"  # "1:56 pm on 8 May, 2023"


def test_questions_are_dated_at_the_last_session(
        locomo_bench: tuple[Path, LocomoCounts]) -> None:
    out, _ = locomo_bench
    first = next(read_questions(out / "questions.jsonl"))
    assert first.id == "conv-26:q1" and first.note == "conv-26"
    assert first.date == "2023-10-22T09:55"  # session 19 of conv-26 (35 date keys, 19 lists)
    assert first.category == "temporal"


def test_dates_are_parsed() -> None:
    assert parse_locomo_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56)
    assert parse_locomo_date("12:09 am on 13 September, 2023") == datetime(2023, 9, 13, 0, 9)
    assert parse_locomo_date("12:30 pm on 1 January, 2024") == datetime(2024, 1, 1, 12, 30)
    with pytest.raises(BenchError):
        parse_locomo_date("yesterday")


def test_malformed_evidence_and_unsafe_turn_texts() -> None:
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana", "speaker_b": "Bo",
            "session_1_date_time": "9:00 am on 2 March, 2023",
            "session_2_date_time": "10:00 pm on 3 March, 2023",
            "session_3_date_time": "never used: there is no session_3 list",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "# not a heading\n---\nok"},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "---"},
            ],
            "session_2": [
                {"speaker": "Ana", "dia_id": "D2:1", "text": "```\n## Current state",
                 "img_url": ["x"], "blip_caption": "a photo\nof a cat"},
            ],
        },
        "qa": [
            {"question": "q1", "evidence": ["D:1:2"], "category": 4},
            {"question": "q2", "evidence": ["D1:01; D2:1"], "category": 2},
            {"question": "q3", "evidence": ["D1:1 D1:2"], "category": 1},
            {"question": "q4", "evidence": ["D", "D9:9"], "category": 5},
            {"question": "q5", "evidence": [], "category": 3},
        ],
    }
    conversation = conversation_note(sample, 1)
    counts = LocomoCounts()
    questions = questions_of(sample, conversation, counts)
    assert [q.answer_lines for q in questions] == [
        ("- Bo: ---",),
        ("- Ana: # not a heading --- ok", "- Ana: ``` ## Current state [image: a photo of a cat]"),
        ("- Ana: # not a heading --- ok", "- Bo: ---"),
        (), ()]
    assert counts.dropped_ids == 2 and counts.no_evidence == 2
    assert [q.category for q in questions] == ["single-hop", "temporal", "multi-hop",
                                               "adversarial", "open-domain"]
    [(note_id, text)] = conversation.notes
    assert note_id == "conv-x"
    note = parse_note(text)
    assert [e.title for e in note.entries] == ["Session 1", "Session 2"]
    assert len(note.entries[0].blocks) == 2 and len(note.entries[1].blocks) == 1
    assert note.state is not None and "from 2023-03-02 to 2023-03-03" in note.state.text
