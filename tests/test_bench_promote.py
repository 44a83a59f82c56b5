"""The promotion bench end to end on a tiny bench: the earlier half replayed through the ladder
with the usage log on, the promoter's proposals applied on copies, the later half run before
and after, the bench itself untouched."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memory.bench.promotion import EARLIER, LATER, dated, hash_half, split_in_time
from memory.bench.questions import Question
from memory.bench.split import half_of

NOTES_BIN = Path(sys.executable).parent / "notes"
NOTES = {
    "infra/redis": """---
title: Redis cache
tags: [redis, cache]
---
# Redis cache

## Current state
- Redis runs on port 6380 in production.

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
""",
}
EVICTION = "Switched eviction to allkeys-lru after the memory alarm."
ROLLBACK = "Rollback uses deployctl revert with the previous tag."
PORT = "- Redis runs on port 6380 in production."
EVICTION_ASKED = ["Which eviction policy does redis use?", "redis eviction after the alarm",
                  "what did we switch redis eviction to", "redis memory alarm eviction",
                  "eviction policy of the redis cache", "allkeys-lru or volatile eviction?"]
ROLLBACK_ASKED = ["How do I rollback a deploy?", "rollback with deployctl",
                  "deploy rollback procedure", "which tag does a rollback revert to",
                  "deployctl revert rollback", "rollback a bad deploy"]


def questions() -> list[dict[str, object]]:
    """16 earlier questions (every session asks two of each entry), then 16 later ones; every
    question has its own date, so the split is by date."""
    out: list[dict[str, object]] = []
    for i in range(8):
        asked, line, note = ((EVICTION_ASKED, EVICTION, "infra/redis") if i % 2 == 0
                             else (ROLLBACK_ASKED, ROLLBACK, "howto/deploy"))
        out.append({"id": f"e{i}", "question": asked[(i // 2) % 6], "answer_lines": [line],
                    "note": note})
        out.append({"id": f"e{i}b", "question": asked[(i // 2 + 3) % 6],
                    "answer_lines": [line], "note": note})
    later = [("redis eviction policy now", EVICTION, "infra/redis"),
             ("eviction after the memory alarm", EVICTION, "infra/redis"),
             ("how does a deploy rollback work", ROLLBACK, "howto/deploy"),
             ("rollback revert tag", ROLLBACK, "howto/deploy"),
             ("which port does redis use in production", PORT, "infra/redis"),
             ("redis production port", PORT, "infra/redis"),
             ("who owns the deploy pipeline", "- Marco owns the deploy pipeline.",
              "team/people"),
             ("who owns billing", "- Lucía owns billing and the invoices queue.", "team/people")]
    out += [{"id": f"l{i}", "question": q + (" please" if i >= 8 else ""), "answer_lines": [a],
             "note": n} for i, (q, a, n) in enumerate(later + later)]
    for day, question in enumerate(out, start=1):
        question["date"] = f"2026-05-{day:02d}"
    return out


def write_bench(folder: Path) -> Path:
    for note_id, text in NOTES.items():
        path = folder / "notes" / f"{note_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (folder / "questions.jsonl").write_text(
        "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions()),
        encoding="utf-8")
    return folder


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow(15)
def test_one_cycle_replayed_end_to_end(tmp_path: Path) -> None:
    bench = write_bench(tmp_path / "bench")
    before = snapshot(bench)
    work, out = tmp_path / "work", tmp_path / "out"
    done = subprocess.run(
        [str(NOTES_BIN), "bench", "promote", str(bench), "--policies",
         "ladder@1,states,fragments@2,fragments@5", "--work", str(work), "--out", str(out),
         "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert snapshot(bench) == before  # the bench is only read
    assert data["split"]["how"] == "date" and data["split"]["earlier"] == 16
    assert data["split"]["later"] == 16
    # the log holds the replayed week: four sessions of four questions, each its own id
    assert data["replay"]["sessions"] == 4 and data["replay"]["questions"] == 16
    with sqlite3.connect(work / "replay" / "state" / "usage.sqlite") as db:
        sessions = {row[0] for row in db.execute("SELECT session FROM calls")}
        rungs = {row[0] for row in db.execute("SELECT rung FROM calls")}
        assert db.execute("SELECT count(*) FROM calls").fetchone()[0] == data["replay"]["calls"]
    assert len(sessions) == 4 and {"suggest", "section_map", "read_section"} <= rungs
    assert data["promoter"]["candidates"] == {"overlap": 2}
    every = data["variants"]["all-overlap"]
    assert every["lines"] == 2 and every["state_tokens"]["added"] > 0
    assert set(every["state_tokens"]["per_note"]) == {"infra/redis", "howto/deploy"}
    later = every["halves"]["all"]
    assert later["precision"] == 1.0 and later["lines_holding_evidence"] == 2
    states = later["policies"]["states"]
    assert states["questions"] == 16 and states["hit_before"] == 0.5
    assert states["hit_after"] == 1.0 and states["carried_hits"] == 8
    assert later["policies"]["ladder@1"]["margin_after"] is not None
    # the copy the variant ran on holds the promoted lines, with their back-references
    promoted = (work / "all-overlap" / "notes" / "infra" / "redis.md").read_text()
    assert f"- {EVICTION} (history: 2026-01-10-eviction-policy)" in promoted
    assert (out / "promotion.md").read_text().startswith("# Promotion bench")
    assert json.loads((out / "promotion.json").read_text())["variants"] == data["variants"]


def test_the_earlier_and_later_halves_cross_the_tuning_and_test_halves() -> None:
    ids = [f"q{i}" for i in range(400)]
    pairs = {(hash_half(i), half_of(i)) for i in ids}
    assert pairs == {(EARLIER, "tuning"), (EARLIER, "test"), (LATER, "tuning"), (LATER, "test")}
    undated = [Question(i, "q", ()) for i in ids]
    earlier, later, how = split_in_time(undated)
    assert how == "hash" and len(earlier) + len(later) == 400
    assert all(hash_half(q.id) == EARLIER for q in earlier)
    # one date for many questions (LoCoMo's: the conversation's last day) is not a time order
    same_day = [Question(i, "q", (), date="2023-10-22") for i in ids]
    assert not dated(same_day) and split_in_time(same_day)[2] == "hash"
    days = [Question(i, "q", (), date=f"2026-{1 + n // 28:02d}-{1 + n % 28:02d}")
            for n, i in enumerate(ids[:300])]
    earlier, later, how = split_in_time(list(reversed(days)))
    assert how == "date" and len(earlier) == len(later) == 150
    assert max(str(q.date) for q in earlier) < min(str(q.date) for q in later)
