"""The usage log and the promoter, fed through the real ladder calls."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from conftest import NOTES_BIN, RunCli, worker_processes
from memory import Notes, load_config
from memory.model.note import parse_note
from memory.services.promote import build_report
from memory.services.promote_apply import apply_promotion
from memory.services.promote_report import markdown
from memory.state.usage import DAY_S

NOTE = "howto/deploy-production"


def session_reads(notes: Notes, session: str, question: str, entry: str, times: int = 1) -> None:
    """What an agent does: suggest, map the note with the question, read the entry."""
    notes.suggest(question, session=session)
    notes.section_map(NOTE, question, session=session)
    for _ in range(times):
        notes.read_section(NOTE, entry, session=session)


def entry_ids(notes: Notes) -> list[str]:
    return [e.id for e in notes.store.load(NOTE).note.entries]


def test_only_an_entry_read_in_three_recent_sessions_is_a_candidate(notes: Notes) -> None:
    entries = entry_ids(notes)
    popular, single, stale = entries[3], entries[5], entries[7]
    questions = ["how do we roll back a bad deploy", "rollback procedure after canary",
                 "qué hacemos si falla el despliegue"]
    now = time.time()
    assert notes._usage is not None
    notes._usage.clock = lambda: now - 40 * DAY_S
    for number, question in enumerate(questions):
        session_reads(notes, f"old-{number}", question, stale)
    notes._usage.clock = time.time
    for number, question in enumerate(questions):
        session_reads(notes, f"s{number}", question, popular)
    session_reads(notes, "busy", "one question five times", single, times=5)
    report = build_report(notes, days=30, min_sessions=3)
    assert [(c.note, c.entry) for c in report.candidates] == [(NOTE, popular)]
    candidate = report.candidates[0]
    assert candidate.sessions == 3 and candidate.reads == 3
    assert set(candidate.questions) == set(questions)
    assert candidate.proposed.startswith("- ") and candidate.proposed.endswith(
        f"(history: {popular})")
    text = markdown(report)
    assert f"### {NOTE} · {popular}" in text and f"notes promote --apply {NOTE} {popular}" in text


def test_apply_keeps_history_byte_identical_and_adds_the_line_once(notes: Notes) -> None:
    path = notes.store.path_for(NOTE)
    before = parse_note(path.read_text())
    entry = before.entries[4]
    first = apply_promotion(notes, NOTE, entry.id)
    assert first.changed
    after = parse_note(path.read_text())
    assert [e.text for e in after.entries] == [e.text for e in before.entries]
    assert after.history is not None and before.history is not None
    assert after.history.text == before.history.text
    assert first.line in after.state.text  # type: ignore[union-attr]
    second = apply_promotion(notes, NOTE, entry.id)
    assert not second.changed
    assert path.read_text().count(f"(history: {entry.id})") == 1


def test_apply_dry_run_and_custom_line_through_the_cli(run_cli: RunCli, store_dir: Path) -> None:
    path = store_dir / f"{NOTE}.md"
    before = path.read_text()
    entry = parse_note(before).entries[2].id
    dry = run_cli("promote", "--apply", NOTE, entry, "--line", "Never deploy on Fridays.",
                  "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"+- Never deploy on Fridays. (history: {entry})" in dry.stdout
    assert path.read_text() == before
    done = run_cli("promote", "--apply", NOTE, entry, "--line", "Never deploy on Fridays.")
    assert done.returncode == 0 and "promoted" in done.stdout
    again = run_cli("promote", "--apply", NOTE, entry)
    assert again.returncode == 0 and again.stdout.startswith("unchanged")
    assert run_cli("promote", "--apply", NOTE, "state").returncode == 1
    assert run_cli("promote", "--dry-run").returncode == 2


def _ladder_worker(store: str, state: str, worker: int, count: int) -> None:
    notes = Notes(load_config(store, state), notify=lambda _: None, front="cli")
    questions = ["redis eviction", "rollback canary", "verifactu factura", "postgres partition"]
    for i in range(count):
        session = f"w{worker}-{i % 7}"
        rung = i % 3
        if rung == 0:
            notes.suggest(questions[i % 4], session=session)
        elif rung == 1:
            notes.section_map("infra/redis", questions[i % 4], session=session)
        else:
            notes.read_section("infra/redis", "state", session=session)
    notes.close()


@pytest.mark.slow(10)
def test_four_processes_log_800_calls_while_promote_runs(notes: Notes, store_dir: Path) -> None:
    notes.suggest("warm the index")
    assert notes._usage is not None
    start = notes._usage.count()
    ctx = worker_processes()
    args = (str(store_dir), str(notes.config.state_dir))
    workers = [ctx.Process(target=_ladder_worker, args=(*args, w, 200)) for w in range(4)]
    for w in workers:
        w.start()
    env = {**os.environ, "NOTES_DIR": str(store_dir)}
    reports = 0
    while any(w.is_alive() for w in workers):
        result = subprocess.run([str(NOTES_BIN), "promote", "--json"], env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert "could not write" not in result.stderr
        reports += 1
    for w in workers:
        w.join(timeout=60)
        assert w.exitcode == 0
    assert reports >= 1
    assert notes._usage.count() - start == 800


def test_report_on_the_example_matches_the_log(run_cli: RunCli, store_dir: Path,
                                               tmp_path: Path) -> None:
    script = [("s1", "rollback canary"), ("s2", "cómo hago rollback"), ("s3", "rollback")]
    for session, question in script:
        env = {"NOTES_SESSION": session}
        assert run_cli("suggest", question, env=env).returncode == 0
        assert run_cli("map", NOTE, "--query", question, env=env).returncode == 0
        assert run_cli("read", NOTE, "2026-06-22", env=env).returncode == 0
        assert run_cli("read", "infra/redis", "state", env=env).returncode == 0
    out = tmp_path / "reports"
    first = run_cli("promote", "--report-dir", str(out))
    second = run_cli("promote", "--report-dir", str(out))
    assert first.returncode == second.returncode == 0
    files = sorted(p.name for p in out.iterdir())
    assert len(files) == 2 and files[0].startswith("promotion-") and files[0].endswith(".json")
    text = (out / files[1]).read_text()
    assert text.startswith("# Promotion report, ")
    assert "12 ladder calls in 3 sessions" in text and "(cli 12)" in text
    assert re.search(r"## Promotion candidates \(1\)", text)
    assert "- Read 3 times; the read ended the search in 3 sessions" in text
    assert "2026-06-22-rollback-procedure-fixed" in text
    assert "## Routing misses (1)" in text and "| infra/redis | 3 | 3 |" in text
    data = json.loads((out / files[0]).read_text())
    assert data["calls"] == 12 and data["sessions"] == 3


def test_a_locked_log_never_fails_a_ladder_call(notes: Notes) -> None:
    notes.suggest("warm")
    messages: list[str] = []
    assert notes._usage is not None
    notes._usage.report = messages.append
    blocker = sqlite3.connect(notes._usage.path, timeout=1)
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        assert notes.suggest("redis").hits
        assert notes.read_section("infra/redis", "state").text
    finally:
        blocker.rollback()
        blocker.close()
    assert len(messages) == 1 and "could not write the usage log" in messages[0]


def test_a_corrupt_log_is_set_aside_and_logging_goes_on(store_dir: Path) -> None:
    state = store_dir / ".notes"
    state.mkdir(exist_ok=True)
    (state / "usage.sqlite").write_bytes(b"this is not a database" * 100)
    messages: list[str] = []
    notes = Notes(load_config(store_dir), notify=messages.append)
    assert notes.suggest("redis").hits
    assert notes._usage is not None and notes._usage.count() == 1
    assert any("moved it to" in m for m in messages)
    assert list(state.glob("usage.sqlite.corrupt-*"))


def test_usage_log_can_be_turned_off(store_dir: Path) -> None:
    notes = Notes(load_config(store_dir, env={"NOTES_USAGE_LOG": "0"}), notify=lambda _: None)
    notes.suggest("redis")
    assert notes._usage is None
    assert not (store_dir / ".notes" / "usage.sqlite").exists()
    with pytest.raises(Exception, match="usage log is off"):
        build_report(notes)
