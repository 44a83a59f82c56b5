"""Which reads count toward a promotion, how a line is proposed and judged, which state lines
may be demoted: the promoter's rules on a small store, fed through the real ladder calls."""

from __future__ import annotations

import time
from pathlib import Path

from memory import Notes, load_config
from memory.bench.promotion import Promoted, carried_lines
from memory.model.note import parse_note
from memory.services.promote import build_report, precision_estimate
from memory.services.promote_lines import carries, proposed_line

NOTE = "infra/redis"
TEXT = """---
title: Redis cache
---
# Redis cache

## Current state
- Redis runs on port 6380 in production.
- The cache lives on the ops-2 machine.
- Grafana dashboard panels are owned by the platform team.

## History
### 2026-01-10 · Eviction policy
The memory alarm fired twice in January and the cache filled up. Switched eviction to \
allkeys-lru after the memory alarm.

### 2026-02-01 · Upgrade
Upgraded Redis to 7.2 on the staging cluster.

### 2026-03-01 · Failover
Sentinel failover took forty seconds during the March drill.
"""
EVICTION, UPGRADE, FAILOVER = ("2026-01-10-eviction-policy", "2026-02-01-upgrade",
                               "2026-03-01-failover")


def store(tmp_path: Path) -> Notes:
    folder = tmp_path / "notes"
    (folder / "infra").mkdir(parents=True)
    (folder / f"{NOTE}.md").write_text(TEXT, encoding="utf-8")
    return Notes(load_config(folder), notify=lambda _: None)


def candidates(notes: Notes) -> dict[str, int]:
    report = build_report(notes, now=time.time() + 1)
    return {c.entry: c.sessions for c in report.candidates}


def test_a_read_followed_by_another_section_for_the_same_question_does_not_count(
        tmp_path: Path) -> None:
    notes = store(tmp_path)
    try:
        for number in range(3):
            session, question = f"s{number}", f"redis question {number}"
            notes.suggest(question, session=session)
            notes.read_section(NOTE, UPGRADE, session=session)  # not it: read on
            notes.read_section(NOTE, EVICTION, session=session)  # this answered
        assert candidates(notes) == {EVICTION: 3}
    finally:
        notes.close()


def test_of_a_recall_only_the_first_section_it_showed_counts(tmp_path: Path) -> None:
    notes = store(tmp_path)
    try:
        for number in range(3):
            shown = notes.recall("redis eviction upgrade failover staging sentinel",
                                 budget=2000, session=f"s{number}")
        entries = [g.ref.partition(":")[0] for g in shown.groups
                   if not g.ref.startswith("state")]
        assert len(entries) >= 2  # it showed several entries...
        assert candidates(notes) == {entries[0]: 3}  # ...the first one counts
    finally:
        notes.close()


def test_a_state_line_sharing_one_stemmed_word_with_a_question_stays(tmp_path: Path) -> None:
    notes = store(tmp_path)
    try:
        for question in ("which port for production redis", "redis machine name",
                         "is the cache on ops-2", "what does the dashboard show"):
            notes.section_map(NOTE, question, session="s")
        report = build_report(notes, now=time.time() + 1)
        # "dashboard" (one word, stemmed as "dashboards" would be) keeps the Grafana line;
        # with two shared words it was a demotion candidate
        assert [d.text for d in report.demotions] == []
    finally:
        notes.close()


def test_a_line_no_question_touches_is_a_demotion_candidate(tmp_path: Path) -> None:
    notes = store(tmp_path)
    try:
        for question in ("which port for production redis", "redis machine name",
                         "is the cache on ops-2"):
            notes.section_map(NOTE, question, session="s")
        report = build_report(notes, now=time.time() + 1)
        assert [d.text for d in report.demotions] == [
            "- Grafana dashboard panels are owned by the platform team."]
    finally:
        notes.close()


def test_the_rules_pick_the_problem_the_outcome_or_the_end() -> None:
    eviction = parse_note(TEXT).section(EVICTION)
    assert eviction is not None
    asked = ["memory alarm eviction", "what happened after the memory alarm",
             "redis memory alarm in january"]
    by_rule = {rule: proposed_line(eviction, asked, rule)
               for rule in ("overlap", "votes", "outcome", "last", "terms")}
    problem = "The memory alarm fired twice in January and the cache filled up."
    outcome = "Switched eviction to allkeys-lru after the memory alarm."
    assert by_rule["overlap"] == f"- {problem} (history: {EVICTION})"
    assert by_rule["outcome"] == f"- {outcome} (history: {EVICTION})"
    assert by_rule["last"] == f"- {outcome} (history: {EVICTION})"
    assert by_rule["terms"].startswith("- memory · alarm · January · eviction")
    assert by_rule["votes"] in (f"- {problem} (history: {EVICTION})",
                                f"- {outcome} (history: {EVICTION})")


def test_what_a_promoted_line_carries() -> None:
    answer = ("Someone used `argocd app rollback` during an incident. The procedure is now: "
              "abort the canary, else revert the promote PR.")
    assert carries("- The procedure is now: abort the canary, else revert the promote PR. "
                   "(history: x)", answer)  # a sentence of it
    assert carries("- Someone used `argocd app… (history: x)", answer)  # its cut start
    assert carries("- argocd rollback incident procedure abort canary revert promote "
                   "(history: x)", answer)  # half of its words
    assert not carries("- Someone used a tool. (history: x)", answer)
    promoted = [Promoted("n", "e1", "- The procedure is now: abort the canary, else revert "
                                    "the promote PR. (history: e1)"),
                Promoted("n", "e2", "- The procedure is now: abort the canary, else revert "
                                    "the promote PR. (history: e2)")]
    # only a line promoted from the entry holding the answer line carries it
    carried = carried_lines(promoted, {("n", "e1"): {answer}, ("n", "e2"): set()}, {answer})
    assert carried == {answer: frozenset({promoted[0].line})}


def test_the_precision_estimate_grows_with_the_questions_that_came_for_the_line() -> None:
    assert [precision_estimate(k) for k in range(4)] == [0.0, 0.5, 0.6667, 0.75]
