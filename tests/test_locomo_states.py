"""benchmarks/locomo_states.py: LoCoMo's notes given a state from its own event summaries
(the promotion bench's experiment in docs/promotion.md). The state gains a line a session
with events, the history and the questions stay byte for byte, and no answer line (a turn
verbatim) moves into a state."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from shared_data import LOCOMO, ROOT, shared_file

from memory.bench.locomo import locomo_to_bench
from memory.bench.questions import read_questions
from memory.model.note import parse_note


def test_states_from_event_summaries_leave_history_and_answers_where_they_were(
        tmp_path: Path) -> None:
    source = shared_file(LOCOMO)
    locomo_to_bench(source, tmp_path / "plain")
    made = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "locomo_states.py"),
                           str(source), str(tmp_path / "plain"), str(tmp_path / "states")],
                          capture_output=True, text=True, timeout=120, check=True)
    assert "10 notes with states written" in made.stdout
    assert ((tmp_path / "states" / "questions.jsonl").read_bytes()
            == (tmp_path / "plain" / "questions.jsonl").read_bytes())
    answers = {line.strip() for q in read_questions(tmp_path / "plain" / "questions.jsonl")
               for line in q.answer_lines}
    samples = {s["sample_id"]: s for s in json.loads(source.read_text(encoding="utf-8"))}
    for path in sorted((tmp_path / "plain" / "notes").glob("*.md")):
        before = parse_note(path.read_text(encoding="utf-8"))
        after = parse_note((tmp_path / "states" / "notes" / path.name).read_text(
            encoding="utf-8"))
        assert after.state is not None and before.state is not None
        added = after.state.body.strip().splitlines()[len(before.state.body.strip()
                                                              .splitlines()):]
        sessions = [k for k, v in samples[path.stem]["event_summary"].items()
                    if any(items for who, items in v.items() if who != "date")]
        assert len(added) == len(sessions) > 0
        assert not {line.strip() for line in added} & answers
        assert [e.text for e in after.entries] == [e.text for e in before.entries]
