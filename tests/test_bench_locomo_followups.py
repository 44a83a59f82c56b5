"""`notes bench from-locomo --follow-ups`: the speakers' names leave the question, the topic
moves into the context. On a small LoCoMo-shaped file written here, and on the real one when
it is present (read where it lies: CC BY-NC, never copied)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from shared_data import LOCOMO, shared_file

from memory.bench import followups
from memory.bench.followups import speakers_of, strip_names
from memory.bench.locomo import locomo_to_bench
from memory.bench.questions import read_questions

NOTES_BIN = Path(sys.executable).parent / "notes"
TURNS = ["Hey Mel! I went to a support group yesterday.", "Great, Caroline! And how was it?"]
SPEAKERS = speakers_of("Caroline", "Melanie", TURNS)


@pytest.mark.parametrize(("question", "vague"), [
    ("When did Caroline go to the LGBTQ support group?",
     "When did they go to the LGBTQ support group?"),
    ("What is Caroline's identity?", "What is their identity?"),
    ("How long has Caroline had her current group of friends for?",
     "How long have they had her current group of friends for?"),
    ("When is Melanie planning on going camping?", "When are they planning on going camping?"),
    ("What did Mel and her kids make?", "What did they and her kids make?"),
    ("What did Caroline and Melanie both paint?", "What did they both paint?"),
    ("What book did Melanie recommend to Caroline?", "What book did they recommend to them?"),
    ("What did Melanie suggest Caroline try?", "What did they suggest them try?"),
    ("What is something Caroline gave to Melanie?", "What is something they gave to them?"),
    ("Caroline's dog. What does Melanie think of it?",
     "Their dog. What do they think of it?"),
    ("What Caroline thinks the ideal studio looks like?",
     "What they think the ideal studio looks like?"),
    ("Have both Caroline and Melanie been to Paris?", "Have both of them been to Paris?"),
    ("What was Carolines's reaction?", "What was their reaction?"),
    ("And what did the charity race raise?", "And what did the charity race raise?"),
])
def test_names_become_pronouns(question: str, vague: str) -> None:
    assert strip_names(question, SPEAKERS) == vague


def test_short_forms_are_names_the_turns_use_capitalised_only() -> None:
    assert "Mel" in SPEAKERS.forms
    andrew = speakers_of("Andrew", "Audrey", ["And then Andrew left.", "and so on"])
    assert andrew.forms == ("Andrew", "Audrey")
    assert strip_names("And where did Andrew go?", andrew) == "And where did they go?"


def _turn(speaker: str, text: str, dia: str) -> dict[str, str]:
    return {"speaker": speaker, "text": text, "dia_id": dia}


def _sample(sample_id: str, a: str, b: str, qa: list[dict[str, Any]]) -> dict[str, Any]:
    return {"sample_id": sample_id, "qa": qa, "conversation": {
        "speaker_a": a, "speaker_b": b,
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [_turn(a, f"Hi {b}! I painted a sunrise.", "D1:1"),
                      _turn(b, f"Lovely, {a}. I ran a charity race.", "D1:2")]}}


@pytest.fixture
def small_locomo(tmp_path: Path) -> Path:
    samples = [
        _sample("conv-1", "Ana", "Bruno", [
            {"question": "What did Ana paint?", "answer": "A sunrise", "evidence": ["D1:1"],
             "category": 4},
            {"question": "What did Bruno run?", "evidence": ["D1:2"], "category": 5,
             "adversarial_answer": "a marathon"},
            {"question": "What did the race raise?", "answer": 2022, "evidence": ["D1:2"],
             "category": 3},
            {"question": "Why did Bruno's race matter to Ana?", "answer": "charity",
             "evidence": ["D1:2"], "category": 1}]),
        _sample("conv-2", "Carla", "Dario", [
            {"question": "When did Dario run?", "answer": "May", "evidence": ["D1:2"],
             "category": 2}])]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(samples), encoding="utf-8")
    return path


def test_follow_ups_keep_everything_but_question_and_context(small_locomo: Path,
                                                              tmp_path: Path) -> None:
    plain, vague = tmp_path / "plain", tmp_path / "vague"
    locomo_to_bench(small_locomo, plain)
    counts = locomo_to_bench(small_locomo, vague, follow_ups=True)
    assert counts.follow_ups is not None
    assert (counts.follow_ups.questions, counts.follow_ups.names_removed) == (5, 4)
    before = list(read_questions(plain / "questions.jsonl"))
    after = list(read_questions(vague / "questions.jsonl"))
    assert [(q.id, q.answer_lines, q.category, q.date, q.note) for q in before] == \
        [(q.id, q.answer_lines, q.category, q.date, q.note) for q in after]
    assert [q.question for q in after] == [
        "What did they paint?", "What did they run?", "What did the race raise?",
        "Why did their race matter to them?", "When did they run?"]
    assert [q.context for q in after] == [
        ("Let's go over my chats with Ana and Bruno.",),
        ("What did Ana paint?", "A sunrise"),
        ("What did Bruno run?",),  # no gold answer: the adversarial answer is not one
        # the previous question names nobody: the opener comes first
        ("Let's go over my chats with Ana and Bruno.", "What did the race raise?", "2022"),
        ("Let's go over my chats with Carla and Dario.",)]
    assert (plain / "notes" / "conv-1.md").read_text() == \
        (vague / "notes" / "conv-1.md").read_text()


def test_cli_prints_the_follow_up_count(small_locomo: Path, tmp_path: Path) -> None:
    made = subprocess.run([str(NOTES_BIN), "bench", "from-locomo", str(small_locomo), "--out",
                           str(tmp_path / "bench"), "--follow-ups"], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ))
    assert made.returncode == 0, made.stderr
    assert "follow-ups: 4 of 5 questions had a speaker's name removed" in made.stdout


def test_on_the_real_file(tmp_path: Path) -> None:
    shared_file(LOCOMO)
    counts = locomo_to_bench(LOCOMO, tmp_path, follow_ups=True)
    assert counts.follow_ups is not None and counts.follow_ups.questions == 1986
    assert counts.follow_ups.names_removed > 1900
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    names, forms = {}, {}
    for sample in data:
        talk = sample["conversation"]
        a, b = talk["speaker_a"], talk["speaker_b"]
        names[sample["sample_id"]] = re.compile(rf"\b({a}|{b})\b")
        turns = [t["text"] for k, v in talk.items() if re.fullmatch(r"session_\d+", k)
                 for t in v]
        forms[sample["sample_id"]] = speakers_of(a, b, turns)
    assert forms["conv-26"].forms == ("Caroline", "Melanie", "Caro", "Mel")
    for question in read_questions(tmp_path / "questions.jsonl"):
        assert question.note is not None
        if question.category == followups.SWITCH_CATEGORY:
            continue  # in their own wording, after another talk (the test below)
        assert not names[question.note].search(question.question), question.question
        # the context names a speaker, maybe by a short form ("Mel and her husband")
        assert forms[question.note].named_in(" ".join(question.context)), question.id


def test_topic_switches_ask_a_question_after_another_conversation(
        small_locomo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every SWITCH_EVERY-th question is asked once more in its own wording after the next
    conversation's context: an extra question of category topic-switch."""
    monkeypatch.setattr(followups, "SWITCH_EVERY", 2)
    plain, vague = tmp_path / "plain", tmp_path / "vague"
    locomo_to_bench(small_locomo, plain)
    counts = locomo_to_bench(small_locomo, vague, follow_ups=True)
    assert counts.follow_ups is not None and counts.follow_ups.switches == 2
    direct = {q.id: q for q in read_questions(plain / "questions.jsonl")}
    after = list(read_questions(vague / "questions.jsonl"))
    switches = [q for q in after if q.category == followups.SWITCH_CATEGORY]
    assert [q.id for q in after if q not in switches] == list(direct)
    ids = [q.id for q in direct.values()]
    assert [q.id for q in switches] == [f"{ids[1]}:switch", f"{ids[3]}:switch"]
    for switch in switches:
        original = direct[switch.id.removesuffix(":switch")]
        assert (switch.question, switch.answer_lines, switch.note, switch.date) == \
            (original.question, original.answer_lines, original.note, original.date)
        assert switch.context[:2] == ("Let's go over my chats with Carla and Dario.",
                                      "When did Dario run?")
        assert switch.context[2:] == ("May",)


def test_topic_switches_on_the_real_file(tmp_path: Path) -> None:
    shared_file(LOCOMO)
    counts = locomo_to_bench(LOCOMO, tmp_path, follow_ups=True)
    assert counts.follow_ups is not None and counts.follow_ups.switches >= 190
    questions = list(read_questions(tmp_path / "questions.jsonl"))
    switches = [q for q in questions if q.category == followups.SWITCH_CATEGORY]
    assert len(switches) == counts.follow_ups.switches
    by_id = {q.id: q for q in questions}
    openers = {}  # each conversation's opener, from its first question's context
    for question in questions:
        conversation = question.id.split(":")[0]
        if question.category != followups.SWITCH_CATEGORY:
            openers.setdefault(conversation, question.context[0])
    for switch in switches:
        follow_up = by_id[switch.id.removesuffix(":switch")]
        assert switch.answer_lines == follow_up.answer_lines
        assert switch.context[0].startswith("Let's go over my chats with ")
        assert switch.context[0] != openers[switch.id.split(":")[0]]  # another talk
    kept = sum(s.question != by_id[s.id.removesuffix(":switch")].question for s in switches)
    assert kept > 0.9 * len(switches)  # in their own wording: the names are still there
