"""The usage log under hostile use: floods of huge queries, bad rows, old oversized files."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import worker_processes
from memory import Notes, load_config
from memory.state.usage import MAX_QUERY_CHARS, UsageLog
from stress.helpers import NOTES_BIN, Figures

HUGE = "stack trace line that someone pasted into the prompt " * 1830  # about 95 KB
CAP = 4 << 20


def _flood(path: str, worker: int, count: int) -> None:
    log = UsageLog(Path(path), max_bytes=CAP, report=lambda _: None)
    for number in range(count):
        log.record(f"w{worker}-{number % 9}", "mcp", "suggest", f"{number} {HUGE}",
                   ranked=("infra/redis", "howto/deploy-production"))
    log.close()


def file_bytes(path: Path) -> int:
    total = 0
    for part in (path, Path(f"{path}-wal")):
        try:
            total += part.stat().st_size
        except FileNotFoundError:  # a checkpoint removed it between the two looks
            pass
    return total


def _sample(path: Path, workers: list[Any], largest: list[int]) -> None:
    """The largest size the log reaches while ``workers`` write, looked at every 5 ms."""
    while any(w.is_alive() for w in workers):
        largest[0] = max(largest[0], file_bytes(path))
        time.sleep(0.005)


@pytest.mark.slow(13)
def test_four_processes_flood_the_log_with_95_kb_queries(store_dir: Path,
                                                         figures: Figures) -> None:
    """Usage log: four processes log 95 KB queries against a 4 MiB cap while promote runs"""
    state = store_dir / ".notes"
    state.mkdir(exist_ok=True)
    path = state / "usage.sqlite"
    per_worker = 2500
    ctx = worker_processes()
    workers = [ctx.Process(target=_flood, args=(str(path), w, per_worker)) for w in range(4)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    env = {**os.environ, "NOTES_DIR": str(store_dir)}
    sizes = [0]
    sampler = threading.Thread(target=_sample, args=(path, workers, sizes), daemon=True)
    sampler.start()  # every 5 ms: a size between two promote runs would miss the peaks
    reports = 0
    while any(w.is_alive() for w in workers):
        result = subprocess.run([str(NOTES_BIN), "promote", "--json"], env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        json.loads(result.stdout)
        reports += 1
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    sampler.join(timeout=10)
    largest = sizes[0]
    elapsed = time.perf_counter() - started
    log = UsageLog(path, max_bytes=CAP)
    kept = list(log.calls())
    final = file_bytes(path)
    log.close()
    db = sqlite3.connect(path)
    (last_id,) = db.execute("SELECT MAX(id) FROM calls").fetchone()
    db.close()
    assert kept and kept[-1].id == last_id and max(len(c.query) for c in kept) <= MAX_QUERY_CHARS
    assert final <= CAP and largest <= CAP * 1.5  # the write-ahead log overshoots a little
    figures.add("calls logged (4 processes, each query about 95 KB)", 4 * per_worker)
    figures.add("query text offered / stored per call", f"{len(HUGE) + 5:,} / "
                f"{MAX_QUERY_CHARS:,} characters")
    figures.add("what the old log would have grown to (query text alone)",
                f"{4 * per_worker * len(HUGE) / 1e6:.0f} MB")
    figures.add("cap / largest size seen / final size",
                f"{CAP / 2**20:.0f} MiB / {largest / 2**20:.2f} MiB / {final / 2**20:.2f} MiB")
    figures.add("rows kept at the end (the newest)", len(kept))
    figures.add("`notes promote --json` runs during the flood, all successful", reports)
    figures.add("wall time", f"{elapsed:.1f} s")


def _old_log(path: Path, rows: int, query_chars: int) -> None:
    """A log as the code before the cap wrote it: WAL, no auto-vacuum, whole queries."""
    notes_log = UsageLog(path)
    notes_log.record("s", "cli", "suggest", "the schema")
    notes_log.close()
    db = sqlite3.connect(path)
    db.execute("DELETE FROM calls")
    db.commit()
    db.execute("PRAGMA auto_vacuum=NONE")
    db.execute("VACUUM")
    with db:
        db.executemany("INSERT INTO calls (ts, session, front, rung, query) VALUES "
                       "(?, ?, 'hook', 'suggest', ?)",
                       [(time.time() - rows + i, f"s{i % 40}", f"{i} " + "q" * query_chars)
                        for i in range(rows)])
    db.close()


def test_bad_rows_damage_and_an_oversized_old_log(store_dir: Path, tmp_path: Path,
                                                  figures: Figures) -> None:
    """Usage log: bad rows skipped and counted, a 60 MB log from before the cap shrunk"""
    old = tmp_path / "old" / "usage.sqlite"
    old.parent.mkdir()
    _old_log(old, 630, 95_000)
    before = file_bytes(old)
    started = time.perf_counter()
    log = UsageLog(old, max_bytes=8 << 20)
    log.record("s", "cli", "suggest", "one more call")
    shrink_s = time.perf_counter() - started
    after, kept = file_bytes(old), len(list(log.calls()))
    log.close()
    assert before > 55e6 and after <= 8 << 20 and kept > 10

    notes = Notes(load_config(store_dir), notify=lambda _: None)
    notes.suggest("warm")
    assert notes._usage is not None
    path = notes._usage.path
    db = sqlite3.connect(path)
    with db:
        db.executemany("INSERT INTO calls (ts, session, front, rung, query, note, section, "
                       "ranked) VALUES (?, ?, 'cli', 'read_section', ?, 'infra/redis', "
                       "'state', ?)",
                       [(time.time(), f"s{i % 7}", f"q{i}", "not json" if i % 10 == 0 else "[]")
                        for i in range(10_000)])
    db.close()
    read = notes._usage.read()
    notes.close()
    assert read.skipped == 1000 and len(read.calls) == 9001
    figures.add("log from before the cap: 630 calls of 95 KB queries",
                f"{before / 1e6:.1f} MB")
    figures.add("after one logged call with an 8 MiB cap (VACUUM once, then incremental)",
                f"{after / 1e6:.1f} MB, {kept} newest rows kept, {shrink_s:.1f} s")
    figures.add("rows with a bad value among 10,001 / skipped and counted by the reader",
                f"1,000 / {read.skipped:,}")
