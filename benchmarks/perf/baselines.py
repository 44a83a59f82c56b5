"""Baselines measured in the same run, on the same notes and queries.

- ``rg -l -i`` (ripgrep; ``grep -rli`` when ripgrep is missing, and the report says so): a
  whole process per query, listing the files that hold any query word. No ranking, no
  accent folding: a floor, not a competitor.
- SQLite FTS5 with ``bm25()`` over the same section documents our index holds (what peers
  such as basic-memory use): build time (reading and parsing included, as in ours), size,
  warm query latency, and how often the best section's note is the expected one.
"""

from __future__ import annotations

import shutil
import sqlite3
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from benchmarks.perf.generator import PerfQuery
from benchmarks.perf.measure import percentiles
from memory.config import Config
from memory.index.words import query_words
from memory.state.store import Store

FTS_SCHEMA = ("CREATE VIRTUAL TABLE sections USING fts5(note_id UNINDEXED, section UNINDEXED, "
              "title, body, tokenize = 'unicode61 remove_diacritics 2')")
FTS_QUERY = ("SELECT note_id, section, bm25(sections, 2.0, 1.0) AS score FROM sections "
             "WHERE sections MATCH ? ORDER BY score LIMIT 5")


def grep_tool() -> tuple[str, list[str]]:
    """ripgrep when installed, else grep (named in the report)."""
    if shutil.which("rg"):
        return "rg", ["rg", "-l", "-i", "-F"]
    return "grep", ["grep", "-rli", "-F"]


def grep_baseline(notes_dir: Path, queries: list[PerfQuery], runs: int) -> dict[str, Any]:
    """Cold grep processes, one per query, over the notes folder."""
    name, command = grep_tool()
    seconds: list[float] = []
    for query in (queries * runs)[:runs]:
        words = [w for w, _ in query_words(query.question)] or [query.question]
        args = [*command, *(x for w in words for x in ("-e", w)), str(notes_dir)]
        start = time.perf_counter()
        subprocess.run(args, capture_output=True)  # exit 1 (nothing found) is an answer
        seconds.append(time.perf_counter() - start)
    return {"tool": name, "median_ms": 1000 * statistics.median(seconds),
            **percentiles(seconds)}


def fts_match(question: str) -> str:
    """An OR of the query's words, each quoted (so nothing acts as an FTS5 operator)."""
    words = [w.replace('"', "") for w, _ in query_words(question)]
    return " OR ".join(f'"{w}"' for w in words if w)


def fts5_baseline(config: Config, work: Path, queries: list[PerfQuery]) -> dict[str, Any]:
    """Build an FTS5 table of every section, then query it with bm25()."""
    path = work / "fts5.sqlite"
    path.unlink(missing_ok=True)
    start = time.perf_counter()
    db = sqlite3.connect(path)
    db.execute(FTS_SCHEMA)
    store = Store(config)
    with db:
        for entry in store.files():
            loaded = store.load_path(entry.note_id, entry.path)
            db.executemany("INSERT INTO sections VALUES (?, ?, ?, ?)",
                           [(loaded.note_id, s.id, s.title, s.text)
                            for s in loaded.note.sections])
    build_s = time.perf_counter() - start
    seconds: list[float] = []
    top1 = 0
    matches = [fts_match(q.question) for q in queries]
    db.execute(FTS_QUERY, (matches[0],)).fetchall()
    for query, match in zip(queries, matches, strict=True):
        if not match:
            continue
        start = time.perf_counter()
        rows = db.execute(FTS_QUERY, (match,)).fetchall()
        seconds.append(time.perf_counter() - start)
        top1 += bool(rows) and rows[0][0] == query.note
    db.close()
    return {"build_s": build_s, "size_mb": path.stat().st_size / 1e6,
            **percentiles(seconds), "top1": top1 / max(1, len(seconds))}
