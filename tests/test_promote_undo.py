"""Promotions taken back (`notes promote --undo`), applied in one go (`--apply-all
--min-precision`), and what the report says each would have answered, through the real CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from conftest import RunCli
from memory import Notes, load_config
from memory.model.note import parse_note
from memory.services.promote import build_report
from memory.services.promote_report import markdown

NOTE = "infra/redis"
ENTRY = "2026-01-10-eviction-policy"
QUIRKY = (
    "---\ntitle: Redis cache\n---\n# Redis cache\n\n## Current state\n\n"
    "- Redis runs on port 6380.   \n- Lives on ops-2.\n\n\n"
    "## History\n### 2026-01-10 · Eviction policy\n"
    "The memory alarm fired twice in January. Switched eviction to allkeys-lru after the "
    "memory alarm.\n\n### 2026-02-01 · Upgrade\nUpgraded Redis to 7.2 on staging.\n")
SHAPES = {
    # a blank line after the heading, trailing spaces, two blank lines before the history
    "quirky": QUIRKY,
    "crlf": QUIRKY.replace("\n", "\r\n"),
    # the state is the note's last section and its last line has no line end
    "state last, no final newline": (
        "---\ntitle: Redis cache\n---\n# Redis cache\n\n## History\n"
        "### 2026-01-10 · Eviction policy\nSwitched eviction to allkeys-lru.\n\n"
        "## Current state\n- Redis runs on port 6380."),
    # no state section at all: the promotion makes one, the undo takes it away again
    "no state": ("# Redis cache\n\n## History\n### 2026-01-10 · Eviction policy\n"
                 "Switched eviction to allkeys-lru.\n"),
}


def write_note(store: Path, text: str, note: str = NOTE) -> Path:
    path = store / f"{note}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.mark.parametrize("shape", list(SHAPES))
def test_apply_then_undo_gives_back_the_exact_bytes(run_cli: RunCli, empty_store: Path,
                                                    shape: str) -> None:
    original = SHAPES[shape].encode("utf-8")
    path = write_note(empty_store, SHAPES[shape])
    done = run_cli("promote", "--apply", NOTE, ENTRY, "--line", "Eviction is allkeys-lru.",
                   notes_dir=empty_store)
    assert done.returncode == 0, done.stderr
    after = path.read_bytes()
    assert after != original and f"(history: {ENTRY})".encode() in after
    state = parse_note(after.decode()).state
    assert state is not None and "- Eviction is allkeys-lru. (history: " in state.text
    if shape != "no state":  # one inserted line, nothing else moved
        assert len(after.splitlines()) == len(original.splitlines()) + 1
        assert set(original.splitlines()) <= set(after.splitlines())
    undone = run_cli("promote", "--undo", ENTRY, notes_dir=empty_store)
    assert undone.returncode == 0, undone.stderr
    assert "took infra/redis#" in undone.stdout
    assert path.read_bytes() == original


def test_undo_after_the_user_edited_the_state_keeps_their_edit(run_cli: RunCli,
                                                               empty_store: Path) -> None:
    path = write_note(empty_store, QUIRKY)
    assert run_cli("promote", "--apply", NOTE, ENTRY, notes_dir=empty_store).returncode == 0
    promoted = path.read_text()
    line = next(x for x in promoted.splitlines() if f"(history: {ENTRY})" in x)
    edited = promoted.replace("- Lives on ops-2.\n", "- Lives on ops-2 (moved in May).\n")
    edited = edited.replace("## Current state\n\n", "## Current state\n\n- Owner: Marco.\n")
    path.write_text(edited)
    dry = run_cli("promote", "--undo", f"{NOTE}#{ENTRY}", "--dry-run", notes_dir=empty_store)
    assert dry.returncode == 0 and f"-{line}" in dry.stdout and path.read_text() == edited
    undone = run_cli("promote", "--undo", ENTRY, notes_dir=empty_store)
    assert undone.returncode == 0, undone.stderr
    assert path.read_text() == edited.replace(line + "\n", "")
    again = run_cli("promote", "--undo", ENTRY, notes_dir=empty_store)
    assert again.returncode == 1 and "Error: no state line refers to" in again.stderr


def test_undo_names_the_notes_when_several_hold_the_entry(run_cli: RunCli,
                                                          empty_store: Path) -> None:
    write_note(empty_store, QUIRKY)
    write_note(empty_store, QUIRKY, "infra/redis-copy")
    for note in (NOTE, "infra/redis-copy"):
        assert run_cli("promote", "--apply", note, ENTRY, notes_dir=empty_store).returncode == 0
    both = run_cli("promote", "--undo", ENTRY, notes_dir=empty_store)
    assert both.returncode == 1 and f"give NOTE#ENTRY, e.g. infra/redis#{ENTRY}" in both.stderr
    one = run_cli("promote", "--undo", f"infra/redis-copy#{ENTRY}", notes_dir=empty_store)
    assert one.returncode == 0, one.stderr
    assert f"(history: {ENTRY})" in (empty_store / f"{NOTE}.md").read_text()
    assert run_cli("promote", "--undo", "--apply", NOTE, ENTRY,
                   notes_dir=empty_store).returncode == 2


# -- --apply-all --min-precision, and what the report says ---------------------------------
DEPLOY = """---
title: Deploy to production
---
# Deploy to production

## Current state
- Deploys go through the canary pipeline.

## History
### 2026-03-05 · Rollback procedure
A bad release went out on a Friday. Rollback uses deployctl revert with the previous tag. \
The on-call engineer announces the rollback in the incidents channel.

### 2026-04-01 · Canary window
The canary holds five percent of traffic for ten minutes. Dashboards show the canary's \
error rate next to the stable one. Alerts page the deployer when the canary fails.
"""
ROLLBACK = "2026-03-05-rollback-procedure"
CANARY = "2026-04-01-canary-window"
# every rollback question comes for the same line; the canary questions share one word with
# the entry, too few to say what they came for
ASKED = {
    ROLLBACK: ["how do we rollback with deployctl revert", "deployctl revert previous tag",
               "rollback deployctl revert which tag", "revert tag rollback deployctl"],
    CANARY: ["who owns the canary budget", "canary naming meeting", "canary retro owner",
             "canary budget review"],
}


def log_sessions(store: Path) -> None:
    """Four sessions, each asking one question of each entry as an agent would."""
    notes = Notes(load_config(store), notify=lambda _: None)
    try:
        for number in range(4):
            session = f"s{number}"
            for entry, questions in ASKED.items():
                notes.suggest(questions[number], session=session)
                notes.section_map("howto/deploy", questions[number], session=session)
                notes.read_section("howto/deploy", entry, session=session)
    finally:
        notes.close()


def test_apply_all_applies_only_what_reaches_the_precision(run_cli: RunCli,
                                                           empty_store: Path) -> None:
    path = write_note(empty_store, DEPLOY, "howto/deploy")
    log_sessions(empty_store)
    notes = Notes(load_config(empty_store), notify=lambda _: None)
    try:
        report = build_report(notes, now=time.time() + 1)
    finally:
        notes.close()
    precision = {c.entry: c.precision for c in report.candidates}
    assert set(precision) == {ROLLBACK, CANARY}
    # four questions came for the rollback line: 4/5; none for the canary's
    assert precision == {ROLLBACK: 0.8, CANARY: 0.0}
    text = markdown(report)
    assert "What it would have answered: the 3 questions that reached the entry after its " \
           "first read" in text and f"  - {ASKED[ROLLBACK][1]!r}" in text
    assert "Cost: " in text and "tokens on every read of the state" in text
    before = path.read_text()
    dry = run_cli("promote", "--apply-all", "--min-precision", "0.6", "--dry-run",
                  notes_dir=empty_store)
    assert dry.returncode == 0 and dry.stdout.startswith("would apply 1 of 2 candidates")
    assert path.read_text() == before
    done = run_cli("promote", "--apply-all", "--min-precision", "0.6", "--json",
                   notes_dir=empty_store)
    assert done.returncode == 0, done.stderr
    assert [r["entry"] for r in json.loads(done.stdout)] == [ROLLBACK]
    after = path.read_text()
    assert "Rollback uses deployctl revert with the previous tag. (history: " in after
    assert f"(history: {CANARY})" not in after
    every = run_cli("promote", "--apply-all", "--min-precision", "0", notes_dir=empty_store)
    assert every.returncode == 0 and every.stdout.startswith("applied 1 of 1 candidates")
    assert f"(history: {CANARY})" in path.read_text()
    # taken back in either order, the two promotions leave the note as it was
    for entry in (ROLLBACK, CANARY):
        assert run_cli("promote", "--undo", entry, notes_dir=empty_store).returncode == 0
    assert path.read_text() == before


def test_the_nightly_report_says_what_each_proposal_would_have_answered(
        run_cli: RunCli, empty_store: Path, tmp_path: Path) -> None:
    write_note(empty_store, DEPLOY, "howto/deploy")
    log_sessions(empty_store)
    reports = tmp_path / "reports"
    ran = run_cli("promote", "--nightly", "--report-dir", str(reports), notes_dir=empty_store)
    assert ran.returncode == 0 and ran.stdout == "", ran.stderr
    [written] = reports.glob("promotion-*.md")
    text = written.read_text()
    rollback = text[text.index(f"### howto/deploy · {ROLLBACK}"):]
    rollback = rollback[:rollback.index("- Apply:")]
    # the later questions that reached the entry after its first read, each named
    assert "What it would have answered: the 3 questions that reached the entry after its " \
           "first read" in rollback
    for question in ASKED[ROLLBACK][1:]:
        assert f"  - {question!r}" in rollback
    assert ASKED[CANARY][1] not in rollback
    cost = [line for line in rollback.splitlines() if line.startswith("- Cost: ")]
    assert len(cost) == 1 and " tokens on every read of the state (" in cost[0]
    data = json.loads(written.with_suffix(".json").read_text())
    [candidate] = [c for c in data["candidates"] if c["entry"] == ROLLBACK]
    assert candidate["later"] == ASKED[ROLLBACK][1:] and candidate["line_tokens"] > 0
