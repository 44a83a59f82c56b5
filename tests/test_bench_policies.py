"""Hit and token accounting of every policy on a tiny bench whose answers are known."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory import Notes, load_config
from memory.bench.figures import wilson
from memory.bench.policies import POLICIES, Reading, route
from memory.bench.reader import Paragraph
from memory.bench.report import write_report
from memory.bench.run import RunResult, run_bench
from memory.fronts import render
from memory.hook.answer import hook_text, topic_words
from memory.index import parse_query
from memory.state.token_ranks import RANKS_FILE

NOTES = {
    "infra/redis": """---
title: Redis cache
tags: [redis, cache]
---
# Redis cache

## Current state
- Redis runs on port 6380 in production.
- Lives on the ops-2 machine.

## History
### 2026-01-10 · Eviction policy
Switched eviction to allkeys-lru after the memory alarm.

### 2026-02-01 · Upgrade
Upgraded Redis to 7.2 on the staging cluster.
""",
    "howto/deploy": """---
title: Deploy to production
tags: [deploy]
---
# Deploy to production

## Current state
- Deploys go through the canary pipeline.

## History
### 2026-03-05 · Rollback procedure
Rollback uses deployctl revert with the previous tag.

### 2026-04-01 · Canary window
The canary holds five percent of traffic for ten minutes.
""",
    "team/people": """---
title: People
---
# People

## Current state
- Lucía owns billing and the invoices queue.
- Marco owns the deploy pipeline.

## History
### 2026-05-02 · Handover
Marco took over the Redis upgrade from Lucía.
""",
    "infra/queues": """---
title: Job queues
---
# Job queues

## Current state
- The mail queue retries with backoff.
- The sms queue retries with backoff.
- The push queue retries with backoff.
- The audit queue retries with backoff.
- The export queue retries with backoff.
- The refunds queue is drained nightly.

## History
### 2026-06-01 · Moved to workers
Jobs moved to the new worker pool.
""",
}

QUESTIONS = [
    # a state line with the question's words: every policy reaches it
    {"id": "port", "question": "Which port does redis use in production?",
     "answer_lines": ["- Redis runs on port 6380 in production."], "note": "infra/redis",
     "category": "state"},
    # a state line sharing no word with the question: no paragraph search can find it
    {"id": "host", "question": "Where is the redis cache kept?",
     "answer_lines": ["- Lives on the ops-2 machine."], "note": "infra/redis",
     "category": "state"},
    {"id": "eviction", "question": "What eviction policy after the memory alarm?",
     "answer_lines": ["Switched eviction to allkeys-lru after the memory alarm."],
     "note": "infra/redis", "category": "history"},
    # two notes hold the answer: one note read gets one line of two
    {"id": "rollback", "question": "How do I rollback a deploy?",
     "answer_lines": ["Rollback uses deployctl revert with the previous tag.",
                      "- Marco owns the deploy pipeline."], "note": "howto/deploy",
     "category": "two-notes"},
    {"id": "empty", "question": "Anything?", "answer_lines": []},
    # five better-matching paragraphs come first: fragments@5 misses, fragments@10 hits
    {"id": "queue", "question": "Which queue retries with backoff?",
     "answer_lines": ["- The refunds queue is drained nightly."], "note": "infra/queues"},
]

FRAGMENTS = {f"fragments@{k}" for k in (2, 5, 10, 20, 40, 80)}
ALL = set(POLICIES)
# the hook shows one block, and only when it wins clearly: it reaches the answer of "port"
# and "eviction"; for "rollback" one of the two lines (an any-line hit); states reads no
# history, so it misses the history line of "eviction" and "rollback"
EXPECTED_HITS = {
    "port": ALL,
    "host": ALL - FRAGMENTS - {"hook"},
    "eviction": ALL - {"states"},
    "rollback": ALL - {"ladder@1", "ladder-oracle", "ladder-zoom@1", "hook", "states"},
    "queue": ALL - {"fragments@2", "fragments@5", "hook"},
}
EXPECTED_ANY_LINE = {**EXPECTED_HITS, "rollback": ALL}  # states: Marco's line, team/people


@pytest.fixture
def tiny_bench(tmp_path: Path) -> Path:
    return write_tiny_bench(tmp_path / "bench")


def write_tiny_bench(bench: Path) -> Path:
    """The tiny bench (its notes and questions) written into ``bench``."""
    for note_id, text in NOTES.items():
        path = bench / "notes" / f"{note_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (bench / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in QUESTIONS), encoding="utf-8")
    return bench


@pytest.fixture
def tiny_run(tiny_bench: Path, tmp_path: Path) -> RunResult:
    return run_bench(tiny_bench, state_dir=tmp_path / "run-state")


@pytest.fixture
def reference(tiny_bench: Path, tmp_path: Path) -> Iterator[Notes]:
    """A separate store over the same notes, read through the public API."""
    config = dataclasses.replace(load_config(tiny_bench / "notes", tmp_path / "ref-state"),
                                 usage_log=False)
    notes = Notes(config, notify=lambda _: None)
    yield notes
    notes.close()


def test_hits_per_policy_are_the_known_ones(tiny_run: RunResult) -> None:
    assert tiny_run.read == 6 and tiny_run.skipped_empty == 1 and tiny_run.skipped_missing == 0
    assert [r.id for r in tiny_run.results] == ["port", "host", "eviction", "rollback", "queue"]
    for result in tiny_run.results:
        hits = {p for p, o in result.outcomes.items() if o.hit}
        any_line = {p for p, o in result.outcomes.items() if o.any_line}
        assert hits == EXPECTED_HITS[result.id], result.id
        assert any_line == EXPECTED_ANY_LINE[result.id], result.id
        assert result.gold_rank == 1, result.id
    where = {r.id: r.where for r in tiny_run.results}
    assert where == {"port": "state", "host": "state", "eviction": "history",
                     "rollback": "mixed", "queue": "state"}


def test_a_run_writes_no_ranks_table(tiny_run: RunResult, tmp_path: Path) -> None:
    """A bench's store is read by no prompt hook: its run builds the index but does not keep
    cl100k's ranks table for one (about 0.2 s of CPU a run)."""
    state = tmp_path / "run-state"
    assert (state / "index").is_dir() and (state / "tokens.sqlite").is_file()
    assert not (state / RANKS_FILE).exists()


def test_tokens_are_those_of_the_rendered_texts(tiny_run: RunResult, reference: Notes,
                                                tiny_bench: Path) -> None:
    full = sum(reference.counter.count(render.section_text(reference.read_section(n)))
               for n in NOTES)
    for result in tiny_run.results:
        question = next(q for q in QUESTIONS if q["id"] == result.id)
        expected = expected_tokens(reference, tiny_bench / "notes", str(question["question"]),
                                   str(question["note"]))
        assert {p: o.tokens for p, o in result.outcomes.items()} == expected | {"full": full}


def expected_tokens(notes: Notes, folder: Path, query: str, gold: str) -> dict[str, int]:
    """Each policy's tokens, computed from the ladder's rendered answers and the files."""
    count = notes.counter.count

    def climb(note: str) -> int:
        found = notes.section_map(note, query)
        total = count(render.section_map(found))
        total += count(render.section_text(notes.read_section(note, "state")))
        if found.best and found.best[0] != "state":
            total += count(render.section_text(notes.read_section(note, found.best[0])))
        return total

    suggested = notes.suggest(query, 4)
    table = count(render.suggestions(suggested))
    top = [h.note for h in suggested.hits]
    hits, _ = notes.index.run_search(lambda s: s.search_parts(parse_query(query), "paragraph", 80))
    paragraphs = [Paragraph(h.doc.note_id, h.doc.section, h.score,
                            _lines(folder, h.doc.note_id, h.doc.lines))
                  for h in hits]

    def joined(k: int) -> int:
        return count("\n".join(p.text.rstrip("\n") for p in paragraphs[:k]))

    def zoom(note: str) -> int:
        found = notes.section_map(note, query)
        total = count(render.section_map(found)) + count(
            render.section_text(notes.read_section(note, "state")))
        rows = {r.id: r for r in found.rows}
        for best in found.best[:1 if found.clear else 2]:
            if best != "state":
                ref = rows[best].zoom[0].blocks.ref if rows[best].zoom else best
                total += count(render.section_text(notes.read_section(note, ref)))
        return total

    def recalled(budget: int, hierarchy: bool = True) -> int:
        gathered = notes._ladder.gather(query, hierarchy=hierarchy)
        return count(render.recalled(notes._ladder.fill(gathered, budget)))

    return {"ladder@1": table + climb(top[0]), "ladder@2": table + sum(map(climb, top[:2])),
            "ladder-oracle": climb(gold), "ladder-zoom@1": table + zoom(top[0]),
            **{f"recall@{n}": recalled(n) for n in (500, 1000, 2000)},
            "recall-flat@1000": recalled(1000, hierarchy=False),
            **{f"fragments@{k}": joined(k) for k in (2, 5, 10, 20, 40, 80)},
            "hybrid": joined(5) + climb(route(paragraphs[:5])),
            "hook": count(hook_text(notes, notes.suggest(topic_words(query), 4),
                                    topic_words(query), None, evidence=True)),
            "states": table + sum(count(render.section_text(notes.read_section(n, "state")))
                                  for n in top)}


def _lines(folder: Path, note: str, span: tuple[int, int]) -> str:
    lines = (folder / f"{note}.md").read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(lines[span[0]:span[1]])


def test_hybrid_routes_by_paragraph_score() -> None:
    paragraphs = [Paragraph("a", "s", 5.0, "x"), Paragraph("b", "s", 3.0, "y"),
                  Paragraph("b", "s", 2.5, "z")]
    assert route(paragraphs) == "b"  # 5.5 against 5.0
    assert route(paragraphs[:2]) == "a"


def test_a_hit_is_whole_trimmed_lines() -> None:
    reading = Reading(("[n#state · state · 9 tokens]\n  - Redis runs on port 6380.  \n",), 9)
    assert reading.covers(("- Redis runs on port 6380.",)) == (True, True)
    assert reading.covers(("- Redis runs on port 6380",)) == (False, False)  # not whole
    assert reading.covers(("- Redis runs on port 6380.", "other")) == (False, True)


def test_wilson_interval() -> None:
    low, high = wilson(50, 100)
    assert round(low, 4) == 0.4038 and round(high, 4) == 0.5962
    assert wilson(0, 0) == (0.0, 0.0)
    assert wilson(10, 10)[1] == 1.0


def test_report_files_and_figures(tiny_run: RunResult, tmp_path: Path) -> None:
    data = write_report(tiny_run, tmp_path / "report", "notes bench run tiny")
    for name in ("report.md", "report.json", "results.jsonl", "hit-rate-vs-tokens.png"):
        assert (tmp_path / "report" / name).stat().st_size > 0
    figures = data["policies"]
    assert set(figures) == set(POLICIES)
    assert figures["ladder@2"]["hits"] == 5 and figures["ladder@1"]["hits"] == 4
    assert figures["fragments@5"]["hits"] == 3 and figures["fragments@10"]["hits"] == 4
    assert figures["ladder@1"]["any_line_hits"] == 5
    assert data["routing"]["first"] == 5 and data["questions"]["skipped_no_answer_lines"] == 1
    by_where: dict[str, int] = defaultdict(int)
    for where, per_policy in data["by_where"].items():
        by_where[where] = per_policy["full"]["questions"]
    assert dict(by_where) == {"history": 1, "mixed": 1, "state": 3}
    text = (tmp_path / "report" / "report.md").read_text()
    assert "notes bench run tiny" in text and "not a correct answer" in text


def test_cli_runs_chosen_policies_as_json(tiny_bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "chosen"
    done = subprocess.run([str(Path(sys.executable).parent / "notes"), "bench", "run",
                           str(tiny_bench), "--limit", "3", "--policies",
                           "fragments@5,ladder-oracle", "--json", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert list(data["policies"]) == ["fragments@5", "ladder-oracle"]
    assert data["questions"]["read"] == 3 and data["policies"]["ladder-oracle"]["hits"] == 3
    assert json.loads((out / "report.json").read_text())["policies"] == data["policies"]
    missing = subprocess.run([str(Path(sys.executable).parent / "notes"), "bench", "run",
                              str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 1 and "is not a bench" in missing.stderr
