"""The RealMem adapter and the bench's note scope (``exclude_notes``).

On a small RealMem-shaped dataset written here (two personas), then once over the shared
files when they are present (Apache-2.0, read where they lie, never copied).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from shared_data import REALMEM, shared_file

from memory.bench.policies import question_day
from memory.bench.questions import BenchError, Question, read_questions
from memory.bench.reader import BenchReader, bench_config
from memory.bench.realmem import realmem_to_bench
from memory.bench.run import run_bench
from memory.model.note import parse_note

NOTES_BIN = Path(sys.executable).parent / "notes"
KAYAK = "I keep my kayak at the Lakeside marina, berth 14, next to the red boathouse."
MARTA = "Marta lands on the ninth of May; she is bringing the tandem saddlebags."
LATER = "The kayak moved: it is at the Hillside marina now, berth 2, kayak kayak marina."


def turn(speaker: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "is_query": False, "content": content, "query_id": None,
            **extra}


def query(content: str, qid: str, category: str = "Dynamic Incremental") -> dict[str, Any]:
    return {"speaker": "User", "is_query": True, "content": content, "query_id": qid,
            "topic": "Boats", "category_name": category, "session_type": "multi_session"}


def memory(index: str, content: str, source: int, snapshot: str, role: str,
           uuid: str) -> dict[str, Any]:
    return {"index": index, "type": "Dynamic", "content": content, "source_turn": source,
            "source_content_snapshot": snapshot, "source_role_snapshot": role,
            "session_uuid": uuid}


def session(uuid: str, ident: str, day: str, turns: list[dict[str, Any]],
            memories: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"session_identifier": ident, "session_uuid": uuid, "current_time": day,
            "dialogue_turns": turns, "extracted_memory": memories or []}


def ana() -> dict[str, Any]:
    """Four sessions: two with memory, one with two queries, one after them."""
    s1 = session("a1", "Boats_1:S1_01", "2026-01-05 (Monday)", [
        turn("User", KAYAK), turn("Assistant", "Noted,\n\n  the kayak   is at Lakeside.")],
        [memory("B-1", "【Boat】 kayak at Lakeside berth 14", 1, KAYAK, "User", "a1"),
         memory("B-1", "【Boat】 kayak, Lakeside, berth 14 (refined)", 0, KAYAK, "Assistant",
                "a1")])
    s2 = session("a2", "Family_2:S1_01", "2026-01-07 (Wednesday)", [
        turn("User", "My sister visits soon."), turn("Assistant", MARTA)],
        [memory("F-1", "【Family】 Marta arrives 9 May", 2, "Marta lands (an older text)",
                "Assistant", "a2"),
         memory("F-2", "【Family】 something unsourced", -1, "", "Assistant", "a2")])
    s3 = session("a3", "Boats_1:S2_01", "2026-01-07 (Wednesday)", [
        turn("User", "Hi again."), turn("Assistant", "Hello Ana."),
        query("Where do I pick the boat up this weekend?", "Q-0001"),
        turn("Assistant", "At Lakeside, berth 14.", memory_used=[
            {"session_uuid": "a1", "content": "【Boat】 kayak, Lakeside, berth 14 (refined)"},
            {"session_uuid": "a2", "content": "【Family】 Marta arrives 9 May"},
            {"session_uuid": "a2", "content": "【Family】 something unsourced"}]),
        query("And what did I say a minute ago?", "Q-0002", "Implicit Preference"),
        turn("Assistant", "You said hi.", memory_used=[
            {"session_uuid": "a3", "content": "【Chat】 said hi"}])],
        [memory("C-1", "【Chat】 said hi", 1, "Hi again.", "User", "a3")])
    s4 = session("a4", "Boats_1:S3_01", "2026-01-06 (Tuesday)", [
        turn("User", LATER), turn("Assistant", "Got it: Hillside, berth 2.")])
    return {"_metadata": {"person_name": "Ana_Silva", "total_sessions": 4},
            "dialogues": [s1, s2, s3, s4]}


def bo() -> dict[str, Any]:
    s1 = session("b1", "Sailing_3:S1_01", "2026-01-02 (Friday)", [
        turn("User", "My kayak club meets at the marina on Sundays, kayak races."),
        turn("Assistant", "Enjoy the kayak races.")])
    s2 = session("b2", "Sailing_3:S2_01", "2026-01-09 (Friday)", [
        query("When are the races again?", "Q-0001", "Temporal-reasoning"),
        turn("Assistant", "On Sundays.", memory_used=[
            {"session_uuid": "b1", "content": "【Club】 races on Sundays"}])],
        [])
    s1["extracted_memory"] = [memory("K-1", "【Club】 races on Sundays", 1, s1[
        "dialogue_turns"][0]["content"], "User", "b1")]
    return {"_metadata": {"person_name": "Bo_Lind", "total_sessions": 2},
            "dialogues": [s1, s2]}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    folder = tmp_path / "realmem" / "dataset"
    folder.mkdir(parents=True)
    for name, data in (("Ana_Silva", ana()), ("Bo_Lind", bo())):
        (folder / f"{name}_dialogues_256k.json").write_text(json.dumps(data),
                                                             encoding="utf-8")
    return folder.parent


def notes(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(NOTES_BIN), *args], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "NO_COLOR": "1"})


def questions(bench: Path) -> dict[str, Question]:
    return {q.id: q for q in read_questions(bench / "questions.jsonl")}


def test_sessions_become_notes_and_queries_questions(dataset: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    made = notes("bench", "from-realmem", str(dataset), "--out", str(bench))
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith(
        "2 personas, 6 sessions, 16 turns, 3 queries (Dynamic Incremental 1, Implicit "
        "Preference 1, Temporal-reasoning 1); 5 memory references: 4 name a turn (3 by their "
        "own source turn, 1 through the same memory's other item; 1 of those turns edited "
        "since the memory was taken), 1 name none and are dropped; 1 turns in the query's "
        "own or a later session dropped too (its context, not memory); 1 queries with no "
        "evidence left\none note per session: 6 notes; 1 questions with one gold note, 1 "
        "with several (up to 2); each question leaves out its own and later sessions: 1.7 "
        "notes on average"), made.stdout
    assert sorted(p.relative_to(bench / "notes").as_posix()
                  for p in (bench / "notes").rglob("*.md")) == [
        "ana-silva/session-001.md", "ana-silva/session-002.md", "ana-silva/session-003.md",
        "ana-silva/session-004.md", "bo-lind/session-001.md", "bo-lind/session-002.md"]
    text = (bench / "notes" / "ana-silva" / "session-001.md").read_text()
    note = parse_note(text)
    assert note.title == "Ana Silva: Boats 1, S1_01 (2026-01-05)"
    assert note.state is not None and note.state.text.strip().endswith(
        "- Ana Silva and the assistant, session 1 of 4 (Boats_1:S1_01), on 2026-01-05 "
        "(Monday).")
    assert [e.title for e in note.entries] == ["Session 1"]
    assert [e.date for e in note.entries] == ["2026-01-05"]
    assert "- Assistant: Noted, the kayak is at Lakeside.\n" in text  # one line a turn
    asked = questions(bench)
    first = asked["ana-silva:Q-0001"]
    assert first.question == "Where do I pick the boat up this weekend?"
    assert first.context == ("Hi again.", "Hello Ana.")
    assert first.date == "2026-01-07" and first.category == "Dynamic Incremental"
    # the refined copy names no turn: its other item does (the user's turn 1); the edited
    # assistant turn is still the one named; the unsourced reference is dropped
    assert first.answer_lines == (f"- User: {KAYAK}", f"- Assistant: {MARTA}")
    assert first.note is None
    assert first.notes == ("ana-silva/session-001", "ana-silva/session-002")
    assert first.exclude_notes == ("ana-silva/session-003", "ana-silva/session-004")
    own = asked["ana-silva:Q-0002"]  # its evidence is its own session: its context
    assert own.answer_lines == () and own.gold_notes == ()
    assert own.context[-1] == "At Lakeside, berth 14."
    other = asked["bo-lind:Q-0001"]
    assert other.note == "bo-lind/session-001" and other.context == ()
    assert other.exclude_notes == ("bo-lind/session-002",)  # not Ana's: distractors
    raw = json.loads((bench / "questions.jsonl").read_text().split("\n")[0])
    assert raw["exclude_notes"] == ["ana-silva/session-003", "ana-silva/session-004"]


def test_one_persona_and_clear_errors(dataset: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bo"
    made = notes("bench", "from-realmem", str(dataset / "dataset"), "--out", str(bench),
                 "--persona", "Bo_Lind")
    assert made.returncode == 0, made.stderr
    assert made.stdout.startswith("1 personas, 2 sessions, 4 turns, 1 queries")
    assert list(questions(bench)) == ["bo-lind:Q-0001"]
    unknown = notes("bench", "from-realmem", str(dataset), "--out", str(tmp_path / "x"),
                    "--persona", "Carla")
    assert unknown.returncode == 1 and "Traceback" not in unknown.stderr
    assert unknown.stderr.startswith("Error: no persona 'Carla' in RealMem; use one of "
                                     "ana-silva, bo-lind")
    empty = tmp_path / "empty"
    empty.mkdir()
    none = notes("bench", "from-realmem", str(empty), "--out", str(tmp_path / "y"))
    assert none.returncode == 1 and "no RealMem files in" in none.stderr
    (empty / "bad.json").write_text("[1, 2]", encoding="utf-8")
    bad = notes("bench", "from-realmem", str(empty), "--out", str(tmp_path / "y"))
    assert bad.returncode == 1 and "is not a RealMem persona file" in bad.stderr


def test_every_policy_searches_without_the_excluded_notes(dataset: Path,
                                                          tmp_path: Path) -> None:
    """The later session says "kayak" and "marina" most: unscoped, every search finds it
    first; with the question's scope, no policy's search sees it (nor the query's own
    session), and ``full`` costs only the notes left in."""
    bench = tmp_path / "bench"
    realmem_to_bench(dataset, bench)
    asked = questions(bench)["ana-silva:Q-0001"]
    kayak = "where is my kayak at the marina"
    reader = BenchReader(bench_config(bench / "notes", tmp_path / "state"))
    try:
        reader.prepare()
        assert reader.suggest(kayak, 4)[0].hits[0].note == "ana-silva/session-004"
        reader.exclude(asked.exclude_notes)
        hidden = set(asked.exclude_notes)
        shown = [h.note for h in reader.suggest(kayak, 4, today=question_day(asked))[0].hits]
        assert shown and hidden.isdisjoint(shown)
        assert hidden.isdisjoint(p.note for p in reader.paragraphs(kayak, 80))
        recalled = reader.recall(kayak, (2000,))[2000]
        assert "ana-silva/session-001" in recalled and "ana-silva/session-004" not in recalled
        reader.exclude(())
        assert reader.suggest(kayak, 4)[0].hits[0].note == "ana-silva/session-004"
        whole = {n: reader.count(reader.read_note(n)) for n in reader.note_ids()}
    finally:
        reader.close()
    run = run_bench(bench, ["ladder@1", "ladder-oracle", "recall@1000", "fragments@5",
                            "hook", "full"], state_dir=tmp_path / "run-state")
    assert (run.read, run.skipped_empty, len(run.results)) == (3, 1, 2)
    full = {r.id: r.outcomes["full"] for r in run.results}
    assert full["ana-silva:Q-0001"].tokens == sum(whole.values()) - sum(
        whole[n] for n in asked.exclude_notes)
    assert full["bo-lind:Q-0001"].tokens == sum(whole.values()) - whole["bo-lind/session-002"]
    assert all(set(r.outcomes) == set(run.policies) for r in run.results)


def test_a_scope_that_hides_the_answer_fails_the_run(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    (bench / "notes").mkdir(parents=True)
    for name, line in (("old", "- The gate code is 4471."), ("new", "- The gate code is 9902."),
                       ("copy", "- The gate code is 9902.")):
        (bench / "notes" / f"{name}.md").write_text(f"# {name}\n\n## Current state\n{line}\n",
                                                    encoding="utf-8")

    def write(*rows: dict[str, Any]) -> None:
        (bench / "questions.jsonl").write_text(
            "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")

    fine = {"id": "q1", "question": "gate code", "answer_lines": ["- The gate code is 9902."],
            "exclude_notes": ["new"]}  # another note still holds the line
    write(fine)
    assert run_bench(bench, ["full"], state_dir=tmp_path / "s1").results[0].outcomes["full"].hit
    write(fine, {"id": "q2", "question": "gate code", "answer_lines": [
        "- The gate code is 4471."], "exclude_notes": ["old", "new"]})
    ran = notes("bench", "run", str(bench), "--policies", "fragments@2")
    assert ran.returncode == 1 and "Traceback" not in ran.stderr
    assert ran.stderr.startswith("Error: question q2 leaves out the only notes holding its "
                                 "answer line '- The gate code is 4471.' (exclude_notes)")
    write({**fine, "note": "new"})
    with pytest.raises(BenchError, match="leaves out its gold note new"):
        run_bench(bench, ["full"], state_dir=tmp_path / "s2")
    write({**fine, "exclude_notes": "new"})
    with pytest.raises(BenchError, match="'exclude_notes' must be a list"):
        run_bench(bench, ["full"], state_dir=tmp_path / "s3")


@pytest.mark.slow(9)
def test_the_shared_files(tmp_path: Path) -> None:
    """All ten personas: the counts, and every question's scope holds its evidence."""
    counts = realmem_to_bench(shared_file(REALMEM), tmp_path)
    assert (counts.personas, counts.sessions, counts.turns, counts.queries) == \
        (10, 2055, 14028, 1415)
    assert counts.categories == Counter({"Dynamic Incremental": 1075, "Implicit Preference":
                                         160, "Dynamic Updating": 156,
                                         "Temporal-reasoning": 24})
    assert (counts.references, counts.resolved, counts.no_turn, counts.same_session) == \
        (3052, 2863, 189, 5)
    assert counts.no_evidence == 55
    held: dict[str, set[str]] = {}
    for path in (tmp_path / "notes").rglob("*.md"):
        note_id = path.relative_to(tmp_path / "notes").with_suffix("").as_posix()
        held[note_id] = {line.strip() for line in path.read_text().split("\n")}
    assert len(held) == 2055
    asked = list(read_questions(tmp_path / "questions.jsonl"))
    assert len(asked) == 1415 and sum(1 for q in asked if q.answer_lines) == 1360
    for question in asked:
        persona, _, _ = question.id.partition(":")
        assert question.exclude_notes and all(n.startswith(f"{persona}/")
                                              for n in question.exclude_notes)
        assert set(question.gold_notes).isdisjoint(question.exclude_notes), question.id
        for line in question.answer_lines:
            assert any(line in held[n] for n in question.gold_notes), question.id
