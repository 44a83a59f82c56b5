"""The index never hangs, leaks or wedges (memory/index/locks.py, memory/index/lifecycle.py).

A rebuild killed with SIGKILL takes its worker processes with it, leaves no lock that the
next command waits on forever and no half-built folder behind; a lock whose holder died or
stopped making progress is taken over, with one line saying who held it. A write that fails
(full disk, read-only file system) releases every lock, raises IndexUnavailable with the next
step, and the next call after the disk is fixed works at once. Hostile notes (a YAML alias
bomb, a note of 20,000 headings) are bounded and reported by `notes check`.

Hang detection is a subprocess timeout, never a timed assertion.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from disks import fill_disk, mounted_tmpfs

from conftest import NOTES_BIN, SMALL_NOTES, copy_state
from memory import Notes, load_config
from memory.errors import IndexUnavailable
from memory.index.whoosh import build as whoosh_build
from memory.model.note import MAX_SECTIONS

HAS_TANTIVY = importlib.util.find_spec("tantivy") is not None
needs_fork = pytest.mark.skipif(not whoosh_build.parallel_safe(),
                                reason="worker processes start by fork only")
needs_tantivy = pytest.mark.skipif(not HAS_TANTIVY, reason="the tantivy extra is not installed")
HANG = 90  # seconds after which a command counts as hung
FOLDER = {"whoosh": "index", "tantivy": "index-tantivy"}


# -- processes -------------------------------------------------------------------------
def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie is dead, only not reaped


def _using_state(state: Path) -> list[int]:
    """Every live process whose NOTES_STATE_DIR is this test's: a command and its workers,
    wherever they were reparented."""
    found = []
    marker = f"NOTES_STATE_DIR={state}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:
                continue
            if marker in environ.split(b"\0") and _alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def _wait_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.05)
    return [p for p in pids if _alive(p)]


def _env(store: Path, state: Path, backend: str = "whoosh") -> dict[str, str]:
    return {**os.environ, "NOTES_DIR": str(store), "NOTES_STATE_DIR": str(state),
            "NOTES_BACKEND": backend}


def _notes(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The real `notes` command; a hang fails the test through the timeout."""
    return subprocess.run([str(NOTES_BIN), *args], env=env, capture_output=True, text=True,
                          timeout=HANG)


@pytest.fixture
def state(tmp_path: Path) -> Iterator[Path]:
    """The test's state folder; any process still using it at the end is killed."""
    folder = tmp_path / "state"
    yield folder
    for pid in _using_state(folder):
        os.kill(pid, signal.SIGKILL)


def _kill_mid_build(env: dict[str, str], state: Path, backend: str) -> tuple[int, list[int]]:
    """Start `notes index --rebuild`, SIGKILL it once it is building (its workers started,
    for Whoosh); returns its pid and the workers it had."""
    child = subprocess.Popen([str(NOTES_BIN), "index", "--rebuild"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    fresh = state / f"{FOLDER[backend]}.new-{child.pid}"
    deadline = time.monotonic() + HANG
    workers: list[int] = []
    while time.monotonic() < deadline and child.poll() is None:
        workers = [p for p in _using_state(state) if p != child.pid]
        if fresh.is_dir() and (workers or backend == "tantivy"):
            break
        time.sleep(0.01)
    # well into the build: Whoosh's workers need a moment to take their shares; a tantivy
    # build of the example lasts about 0.3 s in all on a quiet machine, so it is killed at once
    time.sleep(0.3 if backend == "whoosh" else 0.02)
    workers = sorted(set(workers) | {p for p in _using_state(state) if p != child.pid})
    assert child.poll() is None, "the build ended before it could be killed"
    assert fresh.is_dir()
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    return child.pid, workers


def _leftovers(state: Path) -> list[str]:
    return sorted(p.name for p in state.iterdir() if ".new-" in p.name or ".old-" in p.name)


@pytest.mark.slow(13)
@needs_fork
def test_a_killed_parallel_rebuild_takes_its_workers_and_wedges_nothing(
        store_dir: Path, state: Path) -> None:
    env = _env(store_dir, state)
    killed, workers = _kill_mid_build(env, state, "whoosh")
    assert workers, "the rebuild used no worker process"
    assert _wait_gone(workers, 5) == []  # the workers died with their parent
    assert (state / f"index.new-{killed}").is_dir()  # what the killed build left
    rebuilt = _notes(env, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert _leftovers(state) == []  # removed by the next build

    killed, workers = _kill_mid_build(env, state, "whoosh")
    assert _wait_gone(workers, 5) == []
    assert (state / f"index.new-{killed}").is_dir()
    shutil.rmtree(state / "index")
    found = _notes(env, "suggest", "redis eviction", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["note"] in ("infra/redis",
                                                           "incidents/redis-eviction-2026-03")
    assert _leftovers(state) == []


@needs_tantivy
def test_a_killed_tantivy_rebuild_leaves_nothing_behind(store_dir: Path, state: Path) -> None:
    env = _env(store_dir, state, "tantivy")
    killed, _ = _kill_mid_build(env, state, "tantivy")
    assert (state / f"index-tantivy.new-{killed}").is_dir()
    rebuilt = _notes(env, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert _leftovers(state) == []
    _kill_mid_build(env, state, "tantivy")
    shutil.rmtree(state / "index-tantivy")
    found = _notes(env, "suggest", "redis eviction", "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"]
    assert _leftovers(state) == []


def _dead_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    with subprocess.Popen(["true"]) as probe:
        probe.wait()
    return probe.pid


@pytest.mark.parametrize("backend", ["whoosh", pytest.param("tantivy", marks=needs_tantivy)])
def test_leftovers_of_dead_builds_are_removed_and_live_ones_kept(
        small_store_dir: Path, state: Path, backend: str) -> None:
    store_dir = small_store_dir
    env = _env(store_dir, copy_state(store_dir, state), backend)  # the store's own index
    assert _notes(env, "index").returncode == 0  # (and for tantivy, its own built here)
    dead, live = _dead_pid(), os.getpid()
    for kind in ("new", "old"):
        for pid in (dead, live):
            (state / f"{FOLDER[backend]}.{kind}-{pid}").mkdir()
            (state / f"{FOLDER[backend]}.{kind}-{pid}" / "segment").write_bytes(b"x" * 1000)
    assert _notes(env, "suggest", "redis").returncode == 0  # opening the index cleans up
    assert _leftovers(state) == sorted(f"{FOLDER[backend]}.{kind}-{live}"
                                       for kind in ("new", "old"))


_FAMILY = textwrap.dedent("""
    import os, sys, time
    from memory.index import locks
    middle = os.fork()
    if middle == 0:  # a build process...
        worker = os.fork()
        if worker == 0:  # ...and its worker
            if sys.argv[1] == "watchdog":
                sys.platform = "darwin"  # no prctl: a thread watches the parent instead
            locks.die_with_parent(os.getppid())
            os.write(1, f"worker {os.getpid()}\\n".encode())  # one write: the lines never mix
            time.sleep(120)
            os._exit(0)
        time.sleep(120)
        os._exit(0)
    os.write(1, f"parent {middle}\\n".encode())  # (print may write word by word, unbuffered)
""")


@pytest.mark.parametrize("how", ["prctl", "watchdog"])
def test_a_worker_dies_with_its_parent(how: str) -> None:
    if how == "prctl" and not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    with subprocess.Popen([sys.executable, "-c", _FAMILY, how], stdout=subprocess.PIPE,
                          text=True) as family:
        assert family.stdout is not None
        pids = dict(family.stdout.readline().split() for _ in range(2))
        parent, worker = int(pids["parent"]), int(pids["worker"])
        try:
            assert _alive(worker)
            os.kill(parent, signal.SIGKILL)
            assert _wait_gone([worker], 5) == []
        finally:
            for pid in (parent, worker):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


# -- the build lock ----------------------------------------------------------------------
_HOLDER = textwrap.dedent("""
    import fcntl, json, os, sys, time
    from memory.index.locks import HolderLock
    path, mode = sys.argv[1], sys.argv[2]
    if mode == "orphan":  # a lock held by a process that is not the one named in it
        handle = open(path, "a+b")
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.truncate(0)
        handle.write(json.dumps({"pid": int(sys.argv[3])}).encode())
        handle.flush()
        print("ready", flush=True)
        time.sleep(120)
    lock = HolderLock(path, stale_after=float(sys.argv[3]))
    with lock:
        print("ready", flush=True)
        if mode == "beating":
            sys.stdin.readline()  # the waiter is about to ask
            for _ in range(30):
                time.sleep(0.1)
                lock.beat(force=True)
            open(path + ".released", "w").close()
        else:
            time.sleep(120)  # stuck: holds the lock and never beats
""")

_WAITER = textwrap.dedent("""
    import os, sys
    from memory.index.locks import HolderLock
    print("started", flush=True)
    sys.stdin.readline()  # go
    with HolderLock(sys.argv[1], notify=print, stale_after=float(sys.argv[2])):
        print("acquired", os.path.exists(sys.argv[1] + ".released"), flush=True)
""")


@contextlib.contextmanager
def _holder(tmp_path: Path, *args: str) -> Iterator[subprocess.Popen[str]]:
    """A process holding the lock (see _HOLDER); killed at the end unless it finished."""
    with subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path / "index.lock"), *args],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
            yield holder
        finally:
            holder.kill()


def _waiter(tmp_path: Path, stale_after: float,
            holder: subprocess.Popen[str] | None = None) -> list[str]:
    """A process that waits for the lock, started before it asks, so that its interpreter's
    start (seconds on a loaded machine) does not count against ``stale_after``: the holder's
    last sign of life is set to the moment the waiter asks (as a beat would set it), and a
    beating holder starts its beats then."""
    lock = tmp_path / "index.lock"
    with subprocess.Popen([sys.executable, "-c", _WAITER, str(lock), str(stale_after)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as waiter:
        assert waiter.stdout is not None and waiter.stdout.readline().strip() == "started"
        os.utime(lock)
        if holder is not None and holder.stdin is not None:
            holder.stdin.write("go\n")
            holder.stdin.flush()
        out, err = waiter.communicate("go\n", timeout=HANG)
    assert waiter.returncode == 0, err
    return out.splitlines()


def _lock_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if "index.lock" in line]


def test_a_lock_whose_named_holder_is_dead_is_taken_over(tmp_path: Path) -> None:
    dead = _dead_pid()
    with _holder(tmp_path, "orphan", str(dead)):  # e.g. a worker that outlived its parent
        lines = _waiter(tmp_path, 600)
    assert lines[-1] == "acquired False"
    waits = _lock_lines(lines)
    assert len(waits) == 1 and f"process {dead}" in waits[0] and "not running" in waits[0]


def test_a_stuck_holder_is_taken_over_after_the_bound(tmp_path: Path) -> None:
    with _holder(tmp_path, "stuck", "600") as holder:
        lines = _waiter(tmp_path, 1.0)
    assert lines[-1] == "acquired False"
    waits = _lock_lines(lines)
    assert len(waits) == 2 and f"process {holder.pid}" in waits[0]
    assert "no progress" in waits[1]


def test_a_holder_that_makes_progress_is_waited_for(tmp_path: Path) -> None:
    with _holder(tmp_path, "beating", "600") as holder:
        lines = _waiter(tmp_path, 1.0, holder)  # the holder beats every 0.1 s for 3 s
    assert lines[-1] == "acquired True"
    waits = _lock_lines(lines)
    assert len(waits) == 1 and f"process {holder.pid}" in waits[0]


# -- failing writes: full disk, read-only file system ----------------------------------
@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 MB tmpfs as the state folder (skipped where mounting is not permitted)."""
    with mounted_tmpfs(tmp_path / "disk", 64) as folder:
        yield folder


@contextlib.contextmanager
def _read_only(folder: Path) -> Iterator[None]:
    """``folder`` on a read-only mount of itself (EROFS for every write under it)."""
    subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True)
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def _add_note(store: Path, name: str, word: str) -> None:
    (store / f"{name}.md").write_text(f"---\ntitle: {word}\n---\n# {word}\n\n## Current state\n"
                                      f"- {word} is a word only this note has.\n")


@pytest.mark.parametrize("backend", ["whoosh", pytest.param("tantivy", marks=needs_tantivy)])
@pytest.mark.parametrize("failure", ["full", "read-only"])
def test_a_failing_write_releases_everything_and_recovers(
        small_store_dir: Path, small_disk: Path, backend: str, failure: str) -> None:
    store_dir = small_store_dir
    copy_state(store_dir, small_disk)  # the store's index, for whoosh (tantivy builds its own)
    config = dataclasses.replace(load_config(store_dir, small_disk), backend=backend,
                                 usage_log=False)
    notes = Notes(config, notify=lambda _: None)
    assert notes.suggest("redis eviction").hits
    index_dir = small_disk / FOLDER[backend]
    with contextlib.ExitStack() as fixed:
        if failure == "full":
            fixed.callback(fill_disk(small_disk).unlink)
        else:
            fixed.enter_context(_read_only(index_dir))
        _add_note(store_dir, "zanzibar", "zanzibar")
        for _ in range(2):  # the second call fails as clearly as the first: nothing wedged
            with pytest.raises(IndexUnavailable) as failed:
                notes.index.update_notes(["zanzibar"])
            assert str(index_dir) in str(failed.value) and "; " in str(failed.value)
            with pytest.raises(IndexUnavailable):
                notes.index.refresh()
        held = notes.index.run_search(lambda s: s.stored_notes())
        assert sorted(n.note_id for n in held) == sorted(SMALL_NOTES)  # the old index answers
        with pytest.raises(IndexUnavailable):
            notes.index.rebuild()  # on a full disk, or unable to swap the read-only folder
        assert [p.name for p in small_disk.iterdir() if ".new-" in p.name] == []
    notes.index.update_notes(["zanzibar"])  # at once: no lock was left held
    assert notes.suggest("zanzibar").hits[0].note == "zanzibar"
    _add_note(store_dir, "quokka", "quokka")
    assert notes.suggest("quokka").hits[0].note == "quokka"
    assert notes.index.rebuild().rebuilt
    notes.close()


@pytest.mark.parametrize("backend", ["whoosh", pytest.param("tantivy", marks=needs_tantivy)])
def test_a_read_with_no_index_on_a_full_disk_fails_clearly(
        small_store_dir: Path, small_disk: Path, backend: str) -> None:
    store_dir = small_store_dir
    state = copy_state(store_dir, small_disk / "state")  # the store's index, ledger, caches
    env = _env(store_dir, state, backend)
    assert _notes(env, "list").returncode == 0  # the ledger and token cache exist
    shutil.rmtree(state / FOLDER[backend])
    filler = fill_disk(small_disk)
    failed = _notes(env, "suggest", "redis eviction")
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    error = [line for line in failed.stderr.splitlines() if line.startswith("Error: ")]
    assert len(error) == 1 and "No space left on device" in error[0], failed.stderr
    assert "free space" in error[0]
    assert _leftovers(state) == []
    filler.unlink()
    found = _notes(env, "suggest", "redis eviction")
    assert found.returncode == 0, found.stderr


# -- hostile notes -----------------------------------------------------------------------
def alias_bomb(levels: int = 7, base: int = 32) -> str:
    """The issue's front matter: 49 aliases (under any alias count limit), `tags` expanding
    to base × 7^levels strings (26 M for the defaults) if it were ever materialized."""
    names = "abcdefghij"
    lines = ["a: &a [" + ", ".join(['"lol"'] * base) + "]"]
    for i in range(1, levels):
        lines.append(f"{names[i]}: &{names[i]} [" + ", ".join([f"*{names[i - 1]}"] * 7) + "]")
    lines.append("tags: [" + ", ".join([f"*{names[levels - 1]}"] * 7) + "]")
    return ("---\ntitle: Bomb\n" + "\n".join(lines) + "\n---\n# Bomb\n\n## Current state\n"
            "- the bomb note still has a state about pelicans\n")


def many_headings(count: int) -> str:
    return ("---\ntitle: Many\n---\n# Many\n\n## Current state\n- many headings about "
            "flamingos\n\n## History\n" + "".join(f"### 2026-01-01 · E{i}\nt {i}\n"
                                                  for i in range(count)))


@pytest.mark.slow(11)
def test_hostile_notes_are_bounded_and_reported(small_store_dir: Path,
                                                tmp_path: Path) -> None:
    store_dir = small_store_dir
    (store_dir / "bomb.md").write_text(alias_bomb())
    (store_dir / "many.md").write_text(many_headings(20_000))
    # The store's index already built: the two notes are indexed by the first suggest (the
    # cold build with hostile notes is tests/stress/test_index_bounds.py's).
    env = _env(store_dir, copy_state(store_dir, tmp_path / "state"))
    checked = _notes(env, "check", "--json")
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    found = {(p["path"], p["code"]): p for p in json.loads(checked.stdout)}
    bomb = found[("bomb.md", "front-matter-too-large")]
    assert bomb["line"] == 6  # `d:` (7^3 × 32 strings), where the expansion passes the bound
    many = found[("many.md", "too-many-sections")]
    assert many["line"] == 10 + 2 * (MAX_SECTIONS - 2)  # the first heading past the bound
    suggested = _notes(env, "suggest", "pelicans", "--json")
    assert suggested.returncode == 0, suggested.stderr
    assert json.loads(suggested.stdout)["hits"][0]["note"] == "bomb"  # indexed, without tags
    flamingos = _notes(env, "suggest", "flamingos", "--json")
    assert json.loads(flamingos.stdout)["hits"][0]["note"] == "many"
    mapped = _notes(env, "map", "many", "--json")
    assert mapped.returncode == 0, mapped.stderr
