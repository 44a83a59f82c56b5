"""`notes bench from-locomo --note-per-session`: one note per session, so routing must find
the session; a question whose evidence spans sessions has several gold notes. On a small
LoCoMo-shaped file written here, and on the real one when it is present (read where it lies:
CC BY-NC, never copied)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from shared_data import LOCOMO, shared_file

from memory.bench.locomo import locomo_to_bench
from memory.bench.questions import BenchError, Question, parse_question, read_questions
from memory.bench.run import run_bench
from memory.model.note import parse_note

NOTES_BIN = Path(sys.executable).parent / "notes"
ROOT = Path(__file__).resolve().parent.parent


def _turn(speaker: str, text: str, dia: str) -> dict[str, str]:
    return {"speaker": speaker, "text": text, "dia_id": dia}


SAMPLES: list[dict[str, Any]] = [
    {"sample_id": "conv-1", "conversation": {
        "speaker_a": "Ana", "speaker_b": "Bruno",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [_turn("Ana", "Hi Bruno! I painted a sunrise over the harbour.", "D1:1"),
                      _turn("Bruno", "Lovely, Ana. I ran a charity race for the shelter.",
                            "D1:2")],
        "session_2_date_time": "10:05 am on 20 June, 2023",
        "session_2": [_turn("Ana", "The sunrise painting sold at the fair!", "D2:1"),
                      _turn("Bruno", "Great news. My knee hurts after the race.", "D2:2")],
        "session_3_date_time": "7:30 pm on 2 August, 2023",
        "session_3": [_turn("Ana", "I adopted a grey kitten called Pixel.", "D3:1"),
                      _turn("Bruno", "Pixel is a great name.", "D3:2")]},
     "qa": [
         {"question": "What did Ana paint?", "answer": "A sunrise", "evidence": ["D1:1"],
          "category": 4},
         # evidence in two sessions: two gold notes, in the order of the evidence
         {"question": "What happened to Ana's painting?", "answer": "it sold",
          "evidence": ["D2:1", "D1:1"], "category": 1},
         {"question": "What is Ana's kitten called?", "answer": "Pixel",
          "evidence": ["D3:1; D3:2"], "category": 4},
         {"question": "What did Bruno eat?", "evidence": [], "category": 5},
         # an id naming no turn is dropped; the other session's turn stays
         {"question": "Why did Bruno's knee hurt?", "answer": "the race",
          "evidence": ["D2:2", "D9:9"], "category": 2}]},
    {"sample_id": "conv-2", "conversation": {
        "speaker_a": "Carla", "speaker_b": "Dario",
        "session_1_date_time": "9:00 am on 2 March, 2023",
        "session_1": [_turn("Carla", "I started learning the cello.", "D1:1"),
                      _turn("Dario", "Cello is hard, good luck Carla!", "D1:2")]},
     "qa": [{"question": "What instrument did Carla start?", "answer": "cello",
             "evidence": ["D1:1"], "category": 4}]},
]


@pytest.fixture
def small_locomo(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(SAMPLES), encoding="utf-8")
    return path


def _note_lines(bench: Path) -> dict[str, set[str]]:
    return {str(p.relative_to(bench / "notes").with_suffix("")): {
        line.strip() for line in p.read_text(encoding="utf-8").split("\n")}
        for p in (bench / "notes").rglob("*.md")}


def test_one_note_per_session_titled_with_speakers_and_date(small_locomo: Path,
                                                            tmp_path: Path) -> None:
    counts = locomo_to_bench(small_locomo, tmp_path / "b", per_session=True)
    assert (counts.conversations, counts.sessions, counts.notes) == (2, 4, 4)
    notes = sorted(_note_lines(tmp_path / "b"))
    assert notes == ["conv-1/session-01", "conv-1/session-02", "conv-1/session-03",
                     "conv-2/session-01"]
    note = parse_note((tmp_path / "b" / "notes" / "conv-1" / "session-02.md").read_text())
    assert [p for p in note.problems if p.severity == "error"] == []
    assert note.title == "Ana and Bruno: session 2, 2023-06-20"
    assert note.state is not None
    assert "- Ana and Bruno, session 2 of 3, on 2023-06-20 at 10:05." in note.state.text
    assert [e.title for e in note.entries] == ["Session 2"]
    assert note.entries[0].date == "2023-06-20 10:05"
    assert "The sunrise painting sold" in note.entries[0].text
    assert "sunrise over the harbour" not in note.text  # session 1 lives in its own note
    assert "one note per session: 4 notes; 4 questions with one gold note, 1 with several " \
        "(up to 2)" in counts.summary()


def test_gold_notes_are_the_sessions_of_the_evidence(small_locomo: Path,
                                                     tmp_path: Path) -> None:
    locomo_to_bench(small_locomo, tmp_path / "b", per_session=True)
    questions = list(read_questions(tmp_path / "b" / "questions.jsonl"))
    assert [q.gold_notes for q in questions] == [
        ("conv-1/session-01",), ("conv-1/session-02", "conv-1/session-01"),
        ("conv-1/session-03",), (), ("conv-1/session-02",), ("conv-2/session-01",)]
    multi = questions[1]
    assert multi.note is None and multi.notes == ("conv-1/session-02", "conv-1/session-01")
    raw = json.loads((tmp_path / "b" / "questions.jsonl").read_text().split("\n")[1])
    assert raw["notes"] == ["conv-1/session-02", "conv-1/session-01"] and "note" not in raw
    assert questions[0].note == "conv-1/session-01" and questions[0].notes == ()
    lines = _note_lines(tmp_path / "b")
    for question in questions:
        for answer in question.answer_lines:  # verbatim in one of its gold notes
            assert any(answer in lines[gold] for gold in question.gold_notes), question.id
        for gold in question.gold_notes:  # and every gold note holds one of them
            assert any(answer in lines[gold] for answer in question.answer_lines), question.id
    assert multi.answer_lines == ("- Ana: The sunrise painting sold at the fair!",
                                  "- Ana: Hi Bruno! I painted a sunrise over the harbour.")
    assert questions[0].date == questions[2].date == "2023-08-02T19:30"  # the last session


def test_plain_layout_is_unchanged(small_locomo: Path, tmp_path: Path) -> None:
    counts = locomo_to_bench(small_locomo, tmp_path / "plain")
    assert counts.notes == 2 and "one note per session" not in counts.summary()
    questions = list(read_questions(tmp_path / "plain" / "questions.jsonl"))
    assert [q.note for q in questions] == ["conv-1"] * 5 + ["conv-2"]
    assert all(q.notes == () for q in questions)
    assert sorted(_note_lines(tmp_path / "plain")) == ["conv-1", "conv-2"]


def test_follow_ups_per_session(small_locomo: Path, tmp_path: Path) -> None:
    locomo_to_bench(small_locomo, tmp_path / "plain", per_session=True)
    counts = locomo_to_bench(small_locomo, tmp_path / "vague", per_session=True,
                             follow_ups=True)
    assert counts.follow_ups is not None and counts.follow_ups.names_removed == 6
    before = list(read_questions(tmp_path / "plain" / "questions.jsonl"))
    after = list(read_questions(tmp_path / "vague" / "questions.jsonl"))
    assert [(q.id, q.answer_lines, q.gold_notes) for q in before] == \
        [(q.id, q.answer_lines, q.gold_notes) for q in after]
    assert after[1].question == "What happened to their painting?"
    assert after[1].context == ("What did Ana paint?", "A sunrise")
    assert _note_lines(tmp_path / "plain") == _note_lines(tmp_path / "vague")


def test_the_format_carries_one_or_several_gold_notes() -> None:
    one = parse_question('{"id": 1, "question": "q", "answer_lines": [], "notes": ["a"]}', "x")
    assert (one.note, one.notes, one.gold_notes) == ("a", (), ("a",))
    both = parse_question('{"id": 2, "question": "q", "note": "a", "notes": ["b", "a"]}', "x")
    assert (both.note, both.notes) == (None, ("a", "b"))
    assert Question("3", "q", (), notes=("a", "b")).to_json()["notes"] == ["a", "b"]
    assert "notes" not in Question("4", "q", (), note="a").to_json()
    with pytest.raises(BenchError, match="'notes' must be a list"):
        parse_question('{"id": 5, "question": "q", "notes": "a"}', "x")


def test_run_counts_routing_and_the_oracle_on_several_gold_notes(small_locomo: Path,
                                                                 tmp_path: Path) -> None:
    made = subprocess.run([str(NOTES_BIN), "bench", "from-locomo", str(small_locomo), "--out",
                           str(tmp_path / "b"), "--note-per-session"], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ))
    assert made.returncode == 0, made.stderr
    assert "one note per session: 4 notes" in made.stdout
    run = run_bench(tmp_path / "b", ["ladder@1", "ladder-oracle", "full"],
                    state_dir=tmp_path / "state")
    assert [len(r.gold_positions) for r in run.results] == [1, 2, 1, 1, 1]
    multi = run.results[1]
    assert multi.gold_notes == "several gold notes"
    # the oracle reads both gold notes, so it reaches the two answer lines
    assert multi.outcomes["ladder-oracle"].hit and run.results[0].outcomes["full"].hit
    ran = subprocess.run([str(NOTES_BIN), "bench", "run", str(tmp_path / "b"), "--policies",
                          "ladder@1,ladder-oracle,fragments@2,fragments@5", "--json", "--out",
                          str(tmp_path / "report")], capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    assert data["routing"]["questions"] == 4
    several = data["routing"]["several_gold"]
    assert several["questions"] == 1 and several["any_top4"] == 1
    assert several["all_top4"] == (1 if all(p is not None for p in multi.gold_positions)
                                   else 0)
    assert set(data["by_gold_notes"]) == {"one gold note", "several gold notes"}
    text = (tmp_path / "report" / "report.md").read_text()
    assert "Answer in several notes (1 questions)" in text
    assert "## Hit rate by how many notes hold the answer" in text
    first = json.loads((tmp_path / "report" / "results.jsonl").read_text().split("\n")[1])
    assert first["gold_notes"] == 2 and len(first["gold_positions"]) == 2


def test_on_the_real_file(tmp_path: Path) -> None:
    shared_file(LOCOMO)
    counts = locomo_to_bench(LOCOMO, tmp_path, per_session=True)
    assert (counts.notes, counts.sessions, counts.questions) == (272, 272, 1986)
    assert counts.gold_notes[1] == 1650 and counts.gold_notes[0] == 4
    assert sum(n for size, n in counts.gold_notes.items() if size > 1) == 332
    lines = _note_lines(tmp_path)
    assert len(lines) == 272
    for question in read_questions(tmp_path / "questions.jsonl"):
        for answer in question.answer_lines:
            assert any(answer in lines[gold] for gold in question.gold_notes), question.id


def test_on_the_real_file_with_follow_ups(tmp_path: Path) -> None:
    """Both flags: the per-session notes and gold notes, the follow-ups' questions and
    contexts; every title and state names the speakers and the session's date."""
    source = shared_file(LOCOMO)
    counts = locomo_to_bench(source, tmp_path / "both", per_session=True, follow_ups=True)
    locomo_to_bench(source, tmp_path / "sessions", per_session=True)
    locomo_to_bench(source, tmp_path / "vague", follow_ups=True)
    assert (counts.notes, counts.questions, counts.gold_notes[1]) == (272, 1986, 1650)
    assert counts.follow_ups is not None and counts.follow_ups.names_removed == 1971
    rows = list(read_questions(tmp_path / "both" / "questions.jsonl"))
    sessions = list(read_questions(tmp_path / "sessions" / "questions.jsonl"))
    vague = list(read_questions(tmp_path / "vague" / "questions.jsonl"))
    both = [q for q in rows if q.category != "topic-switch"]  # the follow-ups themselves
    assert [(q.id, q.answer_lines, q.note, q.notes, q.category, q.date) for q in both] == \
        [(q.id, q.answer_lines, q.note, q.notes, q.category, q.date) for q in sessions]
    assert [(q.id, q.question, q.context) for q in rows] == \
        [(q.id, q.question, q.context) for q in vague]
    by_id = {q.id: q for q in sessions}  # a topic switch asks a direct question's own words
    switches = [q for q in rows if q.category == "topic-switch"]
    assert len(switches) == 198
    for q in switches:
        direct = by_id[q.id.removesuffix(":switch")]
        assert (q.question, q.answer_lines, q.gold_notes) == \
            (direct.question, direct.answer_lines, direct.gold_notes)
    assert _note_lines(tmp_path / "both") == _note_lines(tmp_path / "sessions")
    # a question whose evidence spans sessions carries each of their notes, in order
    spans = next(q for q in both if q.id == "conv-26:q8")
    assert spans.note is None and spans.notes == ("conv-26/session-03", "conv-26/session-02")
    several = [q for q in both if len(q.gold_notes) > 1]
    assert len(several) == 332 and max(len(q.gold_notes) for q in several) == 15
    source_data = json.loads(source.read_text(encoding="utf-8"))
    speakers = {s["sample_id"]: (s["conversation"]["speaker_a"], s["conversation"]["speaker_b"])
                for s in source_data}
    for path in (tmp_path / "both" / "notes").rglob("*.md"):
        note = parse_note(path.read_text(encoding="utf-8"))
        conv, session = path.parent.name, int(path.stem.removeprefix("session-"))
        a, b = speakers[conv]
        assert note.entries and note.state is not None, path
        day = note.entries[0].date[:10]
        assert note.title == f"{a} and {b}: session {session}, {day}", path
        state = note.state.text.strip().split("\n")
        assert state[0] == "## Current state" and len(state) == 2, path
        assert state[1].startswith(f"- {a} and {b}, session {session} of "), path
        assert state[1].endswith(f" on {day} at {note.entries[0].date[11:]}."), path
