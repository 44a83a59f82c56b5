"""Hostile input: note ids that try to escape, notes built to hurt, queries full of syntax."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_in_process, run_subprocess
from memory import InvalidArgument, InvalidNoteId, Notes, NotesError, load_config
from memory.fronts.mcp.server import create_server
from memory.model.note import MAX_SECTIONS
from stress.helpers import NOTES_BIN, Figures

HOSTILE_IDS = [
    "..", "../x", "../../etc/passwd", "a/../../b", "a/..", "./a", "a/./b", "/etc/passwd",
    "/", "//server/share", "~/x", "C:\\Windows\\system32", "C:/x", "a\\..\\b", "\\\\srv\\x",
    "", " ", "\t", "a//b", "a/", ".hidden", "a/.notes/index", ".notes/usage", "x\x00y",
    "\x00", "a\nb", "a\rb", "bell\x07", "esc\x1b[31m", "del\x7f", "x" * 201,
    "/".join(["d"] * 120), "con", "CON", "nul", "aux.md", "com1", "lpt9/x", "prn.txt",
    "cafe\u0301", "zero\u200bwidth", "rtl\u202eevil", "bom\ufeffx", "nbsp\u00a0x",
    "soft\u00adhyphen", "line\u2028sep", "para\u2029sep", "trailing.", "dir./x", "a /b",
    "-rf", "*", "a?b", "a:b", "a|b", "<x>", '"q"', "%2e%2e/x", "a/b/../../../c",
]
LINK_IDS = ["escape/secret", "leak"]


def test_hostile_ids_refused_everywhere(store_dir: Path, tmp_path: Path,
                                        figures: Figures) -> None:
    """Hostile note ids through the library, the CLI and the MCP tools"""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("---\ntitle: S\n---\n# S\n\n## State\n- secret\n")
    os.symlink(outside, store_dir / "escape")
    os.symlink(outside / "secret.md", store_dir / "leak.md")
    notes = Notes(load_config(store_dir), notify=lambda _: None)
    ids = HOSTILE_IDS + LINK_IDS
    assert len(ids) >= 50
    library = sum(_refused(lambda i=i: notes.read_section(i, "state")) and
                  _refused(lambda i=i: notes.append_history(i, "t", "x")) for i in ids)
    arguments = [i for i in ids if "\x00" not in i]  # NUL cannot be passed as an argument
    cli = _cli_refusals(store_dir, arguments, run_in_process)
    sample = arguments[::6]  # and through the real command, as a user runs it
    real = _cli_refusals(store_dir, sample, run_subprocess)
    mcp = asyncio.run(_mcp_refusals(store_dir, ids))
    before = sorted(p.name for p in outside.iterdir())
    assert library == len(ids) and mcp == len(ids)
    assert cli == len(arguments) and real == len(sample)
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "secret.md").read_text().endswith("- secret\n")
    figures.add("hostile ids (with 2 symbolic links out of the store)", len(ids))
    figures.add("refused by the library / MCP tools", f"{library} / {mcp}")
    figures.add("refused by the CLI (ids with NUL cannot be passed as arguments)", cli)
    figures.add("of which also run through the installed command, as processes", real)


def _refused(call: object) -> bool:
    try:
        call()  # type: ignore[operator]
    except (InvalidNoteId, InvalidArgument):
        return True
    except NotesError:
        return False
    return False


def _cli_refusals(store: Path, ids: list[str], run: Callable[..., CompletedProcess[str]]
                  ) -> int:
    refused = 0
    for note_id in ids:
        result = run(["read", "--", note_id, "state"], env={"NOTES_DIR": str(store)})
        refused += result.returncode in (1, 2) and "Traceback" not in result.stderr \
            and ("not allowed" in result.stderr or "outside the store" in result.stderr
                 or "empty" in result.stderr)
    return refused


async def _mcp_refusals(store: Path, ids: list[str]) -> int:
    refused = 0
    async with Client(create_server(load_config(store))) as client:
        for note_id in ids:
            try:
                await client.call_tool("read_section", {"note": note_id, "section": "state"})
            except ToolError as exc:
                refused += "not allowed" in str(exc) or "outside the store" in str(exc) \
                    or "empty" in str(exc)
    return refused


def _hostile_notes(root: Path) -> dict[str, str]:
    level = '["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'
    pairs = zip("abcdefgh", "bcdefghi", strict=True)
    bomb = "---\na: &a " + level + "\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in pairs)
    files = {
        "alias-bomb.md": bomb + "title: bomb\n---\n# Bomb\n\n## Current state\n- bomb\n",
        "headings.md": "---\ntitle: Headings\n---\n# H\n\n## Current state\n- many\n\n## History\n"
        + "".join(f"### 2026-01-01 · Entry {i}\ntext {i}\n\n" for i in range(10_000)),
        "long-line.md": "---\ntitle: Long\n---\n# Long\n\n## Current state\n- "
        + "x" * 50_000_000 + "\n",
        "deep.md": "---\ntitle: Deep\n---\n# Deep\n\n## Current state\n" + ">" * 5000
        + " deep\n\n" + "".join("  " * i + "- level\n" for i in range(3000)) + "[" * 20_000
        + "\n",
    }
    for name, text in files.items():
        (root / name).write_text(text)
    (root / "bad-utf8.md").write_bytes(b"---\ntitle: Bad\n---\n# Bad\n\n## Current state\n"
                                       b"- \xff\xfe\xc3\x28 pepino\n")
    return {"alias-bomb.md": "front-matter-too-large", "headings.md": "too-many-sections",
            "long-line.md": "too-large", "deep.md": "too-large", "bad-utf8.md": "not-utf8"}


@pytest.mark.slow(20)
def test_hostile_notes_in_bounded_time_and_memory(unindexed_store: Path,
                                                   figures: Figures) -> None:
    """Hostile notes: an alias bomb, 10,000 headings, a 50 MB line, deep nesting, bad UTF-8"""
    store_dir = unindexed_store  # cold: the index is built on the way
    expected = _hostile_notes(store_dir)
    env = {**os.environ, "NOTES_DIR": str(store_dir)}
    started = time.monotonic()
    result = subprocess.run([str(NOTES_BIN), "check", "--json"], env=env, capture_output=True,
                            text=True, timeout=300)
    elapsed = time.monotonic() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert result.returncode == 1 and "Traceback" not in result.stderr
    found = {(p["path"], p["code"]) for p in json.loads(result.stdout)}
    for name, code in expected.items():
        if code:
            assert (name, code) in found, (name, code)
    assert elapsed < 120 and peak_mb < 1500
    good = subprocess.run([str(NOTES_BIN), "suggest", "redis eviction", "--json"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert json.loads(good.stdout)["hits"][0]["note"] in ("infra/redis",
                                                          "incidents/redis-eviction-2026-03")
    figures.add("`notes check` over the example store plus the 5 hostile notes (cold, "
                "index built on the way)", f"{elapsed:.1f} s, peak {peak_mb:.0f} MB")
    figures.add("each reported with its file", ", ".join(f"{n} ({c})" for n, c in
                                                        expected.items() if c))
    figures.add("the 10,000-heading note", f"its first {MAX_SECTIONS:,} sections indexed, "
                "the rest reported (too-many-sections)")
    figures.add("the other notes", "still indexed: `suggest` answers as before")


_syntax = st.sampled_from(["NOT", "AND", "OR", "*", "?", "~2", "^3", "title:", "field:x",
                           "(", ")", "[", "]", "{", "}", '"', "'", "\\", "-", "+", ":", "/",
                           "TO", "<", ">", "=", "!", "&&", "||"])
_queries = st.lists(st.one_of(_syntax, st.text(min_size=1, max_size=12)), min_size=1,
                    max_size=12).map(" ".join) | st.text(max_size=300)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=_queries)
def test_hostile_queries_never_crash(notes: Notes, query: str) -> None:
    try:
        result = notes.suggest(query, limit=5)
        notes.section_map("infra/redis", query)
    except InvalidArgument:
        assert not query.strip()
        return
    assert result.total >= len(result.hits)


def test_operators_are_words(notes: Notes, figures: Figures) -> None:
    """Hostile queries: random Unicode and query syntax (300 generated, plus these)"""
    base = [h.note for h in notes.suggest("redis eviction").hits]
    same = 0
    cases = ["redis NOT eviction", "redis AND eviction", "redis OR eviction", "redis* eviction~",
             "(redis) [eviction]", '"redis eviction"', "title:redis eviction^2",
             "redis -eviction", "+redis +eviction", "redis " + "x " * 5000 + " eviction"]
    for query in cases:
        got = [h.note for h in notes.suggest(query).hits]
        same += got[:2] == base[:2] or set(got[:2]) == set(base[:2])
    assert same == len(cases)
    very_long = notes.suggest("a" * 1_000_000)
    assert very_long.total == 0
    figures.add("generated queries (hypothesis) that crashed", 0)
    figures.add("queries with NOT/AND/OR/*/~/field:/brackets/quotes/-/+ ranked like the plain "
                "words", f"{same} of {len(cases)}")
    figures.add("a 1,000,000-character query", "answered (no match), no crash")


@pytest.fixture
def notes(store_dir: Path) -> Notes:
    return Notes(load_config(store_dir), notify=lambda _: None)
