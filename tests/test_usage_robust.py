"""The usage log never breaks the store: bad values, damaged pages, hostile sizes.

Each test edits ``usage.sqlite`` the way a crash, a disk fault or another program could, then
drives the real ladder (CLI, MCP server or library) and checks that every call still answers,
that the bad rows are skipped and counted, and that the file stays bounded.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import ROOT, RunCli
from memory import Notes, load_config
from memory.services.promote import build_report
from memory.state.usage import MAX_QUERY_CHARS, UsageLog

NOTE = "howto/deploy-production"
ENTRY = "2026-06-22"  # the rollback entry's date prefix


def log_path(store_dir: Path) -> Path:
    return store_dir / ".notes" / "usage.sqlite"


def execute(path: Path, sql: str, *params: object) -> None:
    """Change the log behind the store's back, as another program would."""
    db = sqlite3.connect(path)
    with db:
        db.execute(sql, params)
    db.close()


def three_sessions(run_cli: RunCli) -> None:
    """Three sessions that suggest, map and read the same entry: one promotion candidate."""
    for session, question in [("s1", "rollback canary"), ("s2", "cómo hago rollback"),
                              ("s3", "rollback del despliegue")]:
        env = {"NOTES_SESSION": session}
        assert run_cli("suggest", question, env=env).returncode == 0
        assert run_cli("map", NOTE, "--query", question, env=env).returncode == 0
        assert run_cli("read", NOTE, ENTRY, env=env).returncode == 0


def assert_clean(result: subprocess.CompletedProcess[str], code: int = 0) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr


# -- bad values ------------------------------------------------------------------------
def test_a_bad_prune_stamp_never_fails_a_ladder_call(run_cli: RunCli, store_dir: Path) -> None:
    assert_clean(run_cli("suggest", "redis"))
    execute(log_path(store_dir), "UPDATE meta SET value = 'abc' WHERE key = 'pruned'")
    for args in [("suggest", "redis"), ("map", "infra/redis"), ("read", "infra/redis", "state"),
                 ("recall", "redis eviction"), ("promote",)]:
        assert_clean(run_cli(*args))
    db = sqlite3.connect(log_path(store_dir))
    stamp = db.execute("SELECT value FROM meta WHERE key = 'pruned'").fetchone()[0]
    rows = db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
    db.close()
    float(stamp)  # the next prune wrote a good stamp back
    assert rows >= 5


async def test_a_bad_prune_stamp_never_fails_an_mcp_tool(store_dir: Path, tmp_path: Path,
                                                         run_cli: RunCli) -> None:
    assert_clean(run_cli("suggest", "redis"))
    execute(log_path(store_dir), "UPDATE meta SET value = 'abc' WHERE key = 'pruned'")
    params = StdioServerParameters(command=sys.executable, args=[str(ROOT / "mcp_server.py")],
                                   env={**os.environ, "NOTES_DIR": str(store_dir)})
    log = tmp_path / "server.log"
    with open(log, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                found = await session.call_tool("suggest", {"query": "redis eviction"})
                mapped = await session.call_tool("section_map", {"note": "infra/redis"})
                text = await session.call_tool("read_section",
                                               {"note": "infra/redis", "section": "state"})
    for result in (found, mapped, text):
        assert not result.is_error, result.content
    assert "Traceback" not in log.read_text()


BAD_ROWS = [  # (column, SQL value): each makes one row unreadable as a call
    ("ranked", "'not json'"),
    ("ranked", "'{\"a\": 1}'"),
    ("ts", "'yesterday'"),
    ("note", "x'00ff'"),
    ("query", "CAST(x'ff' AS TEXT)"),
    ("tokens", "'many'"),
    ("front", "x'00'"),
]


def spoil_rows(path: Path) -> None:
    """Copy the latest read of the entry once per bad value, spoiling one column each."""
    columns = ["ts", "session", "front", "rung", "query", "note", "section", "tokens", "ranked",
               "exact"]
    db = sqlite3.connect(path)
    (last,) = db.execute("SELECT MAX(id) FROM calls WHERE rung = 'read_section'").fetchone()
    with db:
        for column, value in BAD_ROWS:
            chosen = ", ".join(value if name == column else name for name in columns)
            db.execute(f"INSERT INTO calls ({', '.join(columns)}) SELECT {chosen} FROM calls "
                       "WHERE id = ?", (last,))
    db.close()


def test_bad_rows_are_skipped_and_the_report_says_how_many(run_cli: RunCli,
                                                           store_dir: Path) -> None:
    three_sessions(run_cli)
    spoil_rows(log_path(store_dir))
    result = run_cli("promote", "--json")
    assert_clean(result)
    data = json.loads(result.stdout)
    assert data["skipped"] == len(BAD_ROWS)
    assert data["calls"] == 9  # the good rows, all counted
    assert [c["entry"] for c in data["candidates"]] == ["2026-06-22-rollback-procedure-fixed"]
    text = run_cli("promote")
    assert_clean(text)
    assert f"{len(BAD_ROWS)} rows of the log had bad values and were skipped" in text.stdout


def test_every_reader_of_the_log_survives_a_bad_value(store_dir: Path) -> None:
    messages: list[str] = []
    notes = Notes(load_config(store_dir), notify=messages.append)
    session = "agent"
    notes.suggest("redis eviction", session=session)
    notes.read_section("infra/redis", "state", session=session)
    assert notes._usage is not None
    path = notes._usage.path
    spoil_rows(path)
    execute(path, "UPDATE meta SET value = x'ff' WHERE key = 'pruned'")
    # the session prior (recent_notes), the question of a read (_last_query), prune, count
    assert notes.suggest("redis", session=session).hits
    assert notes.read_section("infra/redis", "state", session=session).text
    assert notes._usage.count() >= 4
    assert len(list(notes._usage.calls())) == 4  # only the good rows
    assert notes.session_prior(session) == {"infra/redis": 1.0}
    read = notes._usage.calls()
    assert all(isinstance(c.ts, float) and isinstance(c.note, str) for c in read)
    notes.close()
    assert not [m for m in messages if "usage log" in m]


def test_a_lone_surrogate_in_a_query_is_logged_not_raised(notes: Notes) -> None:
    """An MCP client can send one (JSON "\\ud800"); sqlite cannot encode it."""
    notes.suggest("redis \ud800 eviction", session="s")
    assert notes._usage is not None
    queries = [c.query for c in notes._usage.calls()]
    assert queries == ["redis ? eviction"]


# -- damage --------------------------------------------------------------------------------
def many_rows(path: Path, count: int) -> None:
    db = sqlite3.connect(path)
    with db:
        db.executemany("INSERT INTO calls (ts, session, front, rung, query, note, section, "
                       "tokens, ranked, exact) VALUES (strftime('%s','now'), ?, 'cli', "
                       "'read_section', ?, ?, 'state', 10, '[]', 1)",
                       [(f"s{i % 5}", f"question number {i} " * 4, "infra/redis")
                        for i in range(count)])
    db.close()


def spoil_pages(path: Path) -> None:
    """Overwrite every third page past the tenth, as a bad disk sector or a stray write would."""
    size = path.stat().st_size
    assert size > 40 * 4096
    with open(path, "r+b") as handle:
        for page in range(10, size // 4096 - 1, 3):
            handle.seek(page * 4096 + 8)
            handle.write(b"\xa5" * 3000)


def test_a_corrupt_page_found_while_reading_moves_the_log_aside(run_cli: RunCli,
                                                                store_dir: Path) -> None:
    assert_clean(run_cli("suggest", "redis"))
    path = log_path(store_dir)
    many_rows(path, 3000)
    spoil_pages(path)
    result = run_cli("promote", "--json")
    assert_clean(result)
    assert "moved it to" in result.stderr
    assert list(path.parent.glob("usage.sqlite.corrupt-*"))
    data = json.loads(result.stdout)
    assert data["damaged"] and "usage.sqlite.corrupt-" in data["damaged"]
    assert_clean(run_cli("suggest", "redis"))  # a new log is started
    again = run_cli("promote", "--json")
    assert_clean(again)
    assert json.loads(again.stdout)["calls"] == 1 and "moved it to" not in again.stderr


def test_a_corrupt_page_found_by_the_session_prior_moves_the_log_aside(
        run_cli: RunCli, store_dir: Path) -> None:
    assert_clean(run_cli("suggest", "redis"))
    path = log_path(store_dir)
    many_rows(path, 3000)
    spoil_pages(path)
    for _ in range(2):
        result = run_cli("suggest", "redis", env={"NOTES_SESSION": "s1"})
        assert_clean(result)
    assert list(path.parent.glob("usage.sqlite.corrupt-*"))
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()


def test_a_table_of_another_shape_is_moved_aside(store_dir: Path) -> None:
    state = store_dir / ".notes"
    state.mkdir(exist_ok=True)
    db = sqlite3.connect(state / "usage.sqlite")
    db.execute("CREATE TABLE calls (id INTEGER PRIMARY KEY, what TEXT)")
    db.execute("INSERT INTO calls (what) VALUES ('from another program')")
    db.commit()
    db.close()
    messages: list[str] = []
    notes = Notes(load_config(store_dir), notify=messages.append)
    assert notes.suggest("redis").hits
    assert notes._usage is not None and len(list(notes._usage.calls())) == 1
    assert any("moved it to" in m for m in messages)
    notes.close()


# -- size ------------------------------------------------------------------------------------
def test_long_queries_are_stored_as_bounded_excerpts_and_still_promote(notes: Notes) -> None:
    filler = "lorem ipsum dolor sit amet " * 3600  # about 95 KB, as in the issue
    questions = [f"{word} rollback canary {filler}" for word in ("why", "how", "when")]
    for number, question in enumerate(questions):
        session = f"s{number}"
        notes.suggest(question, session=session)
        notes.section_map(NOTE, question, session=session)
        notes.read_section(NOTE, ENTRY, session=session)
    assert notes._usage is not None
    stored = [c.query for c in notes._usage.calls()]
    assert stored and max(len(q) for q in stored) <= MAX_QUERY_CHARS
    assert all(q.endswith("…") for q in stored)
    report = build_report(notes)
    assert [c.entry for c in report.candidates] == ["2026-06-22-rollback-procedure-fixed"]
    assert len(report.candidates[0].questions) == 3
    assert notes._usage.path.stat().st_size < 200_000


def file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


CAP = 1 << 20


@pytest.fixture
def small_log(tmp_path: Path) -> Iterator[UsageLog]:
    log = UsageLog(tmp_path / "usage.sqlite", max_bytes=CAP, report=print)
    yield log
    log.close()


def test_the_log_stays_under_its_size_cap_oldest_rows_pruned_first(small_log: UsageLog) -> None:
    query = "x" * MAX_QUERY_CHARS
    largest = 0
    for number in range(1500):
        small_log.record(f"s{number}", "cli", "suggest", f"{number} {query}")
        largest = max(largest, file_bytes(small_log.path))
    kept = [c.session for c in small_log.calls()]
    numbers = [int(s[1:]) for s in kept]
    assert numbers == list(range(numbers[0], 1500))  # the newest rows, in order, none missing
    assert 500 < numbers[0] < 1300
    print(f"cap {CAP} bytes: largest {largest} bytes, {len(kept)} of 1500 rows kept")
    assert largest <= CAP + 2 * 4096  # checked after each write: past it by one row at most


def test_an_oversized_log_from_before_the_cap_shrinks_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "usage.sqlite"
    db = sqlite3.connect(path)  # as the old code made it: WAL, no auto_vacuum
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript("CREATE TABLE calls (id INTEGER PRIMARY KEY, ts REAL NOT NULL, session "
                     "TEXT NOT NULL, front TEXT NOT NULL, rung TEXT NOT NULL, query TEXT NOT "
                     "NULL DEFAULT '', note TEXT NOT NULL DEFAULT '', section TEXT NOT NULL "
                     "DEFAULT '', tokens INTEGER NOT NULL DEFAULT 0, ranked TEXT NOT NULL "
                     "DEFAULT '[]', exact INTEGER NOT NULL DEFAULT 1);"
                     "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);")
    with db:
        db.executemany("INSERT INTO calls (ts, session, front, rung, query) VALUES "
                       "(strftime('%s','now'), 's', 'cli', 'suggest', ?)",
                       [("q" * 95_000,) for _ in range(40)])
    db.close()
    before = file_bytes(path)
    log = UsageLog(path, max_bytes=1024 * 1024)
    log.record("s", "cli", "suggest", "one more")
    after = file_bytes(path)
    rows = len(list(log.calls()))
    log.close()
    print(f"old log {before} bytes, after one write with a 1 MiB cap {after} bytes, {rows} rows")
    assert before > 3_000_000
    assert after <= 1024 * 1024
    assert rows >= 2


def test_size_settings_are_read_from_the_environment(store_dir: Path) -> None:
    config = load_config(store_dir, env={"NOTES_USAGE_MAX_MB": "5"})
    assert config.usage_max_mb == 5
    with pytest.raises(Exception, match="NOTES_USAGE_MAX_MB"):
        load_config(store_dir, env={"NOTES_USAGE_MAX_MB": "lots"})
