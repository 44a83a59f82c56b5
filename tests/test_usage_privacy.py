"""How the usage log keeps queries: plain (the default), hashed, or not at all.

In every mode the promoter still counts sessions and reads; hashed queries still tell distinct
questions apart, and no question text is left anywhere in the files, even after a switch from
plain (the old rows are rewritten and their bytes zeroed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from conftest import RunCli
from memory import Notes, load_config
from memory.config import Config
from memory.errors import ConfigError
from memory.services.promote import build_report
from memory.services.promote_report import markdown
from memory.state.usage import DAY_S, UsageLog

NOTE = "howto/deploy-production"
ENTRY = "2026-06-22"
QUESTIONS = ["how do we roll back the canary", "rollback procedure after a failed canary",
             "qué hacemos si falla el despliegue canario"]
SECRET_WORDS = [b"roll back the canary", b"after a failed", b"hacemos si falla"]


def notes_with(config: Config, messages: list[str]) -> Notes:
    """A store whose usage log follows the configuration's query mode and size cap (what
    ``Notes`` does once it builds its log with :meth:`UsageLog.for_config`)."""
    notes = Notes(config, notify=messages.append)
    if notes._usage is not None:
        notes._usage.close()
    notes._usage = UsageLog.for_config(config, messages.append)
    return notes


def three_sessions(notes: Notes, questions: list[str] = QUESTIONS) -> None:
    for number, question in enumerate(questions):
        session = f"s{number}"
        notes.suggest(question, session=session)
        notes.section_map(NOTE, question, session=session)
        notes.read_section(NOTE, ENTRY, session=session)


def log_bytes(state: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(state.glob("usage.sqlite*")))


def test_the_query_mode_is_a_setting_with_three_choices(store_dir: Path) -> None:
    assert load_config(store_dir, env={}).usage_queries == "plain"
    for mode in ("plain", "hashed", "off", " Hashed "):
        assert load_config(store_dir, env={"NOTES_USAGE_QUERIES": mode}).usage_queries == \
            mode.strip().lower()
    with pytest.raises(ConfigError, match="plain, hashed, off"):
        load_config(store_dir, env={"NOTES_USAGE_QUERIES": "secret"})


def test_hashed_queries_keep_no_text_and_still_count_distinct_questions(store_dir: Path) -> None:
    messages: list[str] = []
    config = load_config(store_dir, env={"NOTES_USAGE_QUERIES": "hashed"})
    notes = notes_with(config, messages)
    three_sessions(notes)
    notes.suggest("  HOW do we roll back   the canary ", session="s0")  # the same question
    notes.read_section(NOTE, ENTRY, session="s0")
    report = build_report(notes)
    notes.close()
    assert [c.entry for c in report.candidates] == ["2026-06-22-rollback-procedure-fixed"]
    candidate = report.candidates[0]
    assert candidate.sessions == 3 and candidate.reads == 4
    assert len(candidate.questions) == 3 and all(q.startswith("sha256:")
                                                 for q in candidate.questions)
    assert candidate.proposed.startswith("- ")
    text = markdown(report)
    assert "(hashed) × 3" in text and "stored hashed" in text
    assert not any(q in text for q in QUESTIONS)
    stored = log_bytes(config.state_dir)
    assert not [w for w in SECRET_WORDS if w in stored]
    assert not messages or all("usage log" not in m for m in messages)


def test_off_keeps_no_query_and_still_counts_sessions_and_sections(store_dir: Path) -> None:
    config = load_config(store_dir, env={"NOTES_USAGE_QUERIES": "off"})
    notes = notes_with(config, [])
    three_sessions(notes)
    report = build_report(notes)
    assert notes._usage is not None
    assert {c.query for c in notes._usage.calls()} == {""}
    notes.close()
    assert [(c.entry, c.sessions, c.questions) for c in report.candidates] == [
        ("2026-06-22-rollback-procedure-fixed", 3, ())]
    assert report.calls == 9 and report.sessions == 3
    text = markdown(report)
    assert "Queries are not stored" in text and "(read without a question)" in text
    assert not [w for w in SECRET_WORDS if w in log_bytes(config.state_dir)]


@pytest.mark.parametrize("mode", ["hashed", "off"])
def test_switching_from_plain_rewrites_the_queries_already_logged(store_dir: Path,
                                                                  mode: str) -> None:
    plain = notes_with(load_config(store_dir), [])
    three_sessions(plain)
    plain.close()
    state = store_dir / ".notes"
    assert all(w in log_bytes(state) for w in SECRET_WORDS)
    config = load_config(store_dir, env={"NOTES_USAGE_QUERIES": mode})
    strict = notes_with(config, [])
    strict.read_section("infra/redis", "state", session="later")  # the first call rewrites
    report = build_report(strict)
    strict.close()
    assert not [w for w in SECRET_WORDS if w in log_bytes(state)]
    assert [c.sessions for c in report.candidates] == [3]
    expected = 3 if mode == "hashed" else 0
    assert len(report.candidates[0].questions) == expected


def test_plain_again_after_hashed_keeps_the_hashes_and_logs_text(store_dir: Path) -> None:
    hashed = notes_with(load_config(store_dir, env={"NOTES_USAGE_QUERIES": "hashed"}), [])
    three_sessions(hashed)
    hashed.close()
    plain = notes_with(load_config(store_dir), [])
    three_sessions(plain, ["rollback again"] * 3)
    report = build_report(plain)
    plain.close()
    questions = report.candidates[0].questions
    assert "rollback again" in questions and sum(q.startswith("sha256:") for q in questions) == 3


def test_hashed_queries_through_the_cli(run_cli: RunCli, store_dir: Path) -> None:
    env = {"NOTES_USAGE_QUERIES": "hashed"}
    for number, question in enumerate(QUESTIONS):
        session = {**env, "NOTES_SESSION": f"s{number}"}
        assert run_cli("suggest", question, env=session).returncode == 0
        assert run_cli("read", NOTE, ENTRY, env=session).returncode == 0
    result = run_cli("promote", "--json", env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["queries"] == "hashed"
    assert not [w for w in SECRET_WORDS if w in log_bytes(store_dir / ".notes")]


def test_text_a_process_with_the_old_setting_logs_is_caught_up_at_the_daily_prune(
        tmp_path: Path) -> None:
    path = tmp_path / "usage.sqlite"
    old_server = UsageLog(path)  # started with plain, before the switch; keeps running
    old_server.record("srv", "mcp", "suggest", "first question")
    switched = UsageLog(path, queries="hashed")
    switched.record("cli", "cli", "suggest", "a question after the switch")
    old_server.record("srv", "mcp", "suggest", "leaky question from the old server")
    old_server.close()
    switched.close()
    assert b"leaky question" in log_bytes(tmp_path)
    later = time.time() + 2 * DAY_S
    next_day = UsageLog(path, queries="hashed", clock=lambda: later)
    next_day.record("cli", "cli", "suggest", "the next day")
    queries = [c.query for c in next_day.calls()]
    next_day.close()
    assert b"leaky question" not in log_bytes(tmp_path) and b"first question" not in \
        log_bytes(tmp_path)
    assert len(queries) == 4 and all(q.startswith("sha256:") for q in queries)
