"""Shared fixtures: every test gets its own copy of the example store and its own state."""

from __future__ import annotations

import contextlib
import fcntl
import multiprocessing
import os
import shutil
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import reliability
from memory import Notes, load_config
from memory.fronts.cli import cli
from reliability import FIGURES, Figures, write_report
from scratch import Scratch

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "notes_example"
NOTES_BIN = Path(sys.executable).parent / "notes"


def unprivileged() -> tuple[list[str], int]:
    """A command prefix that runs as the owner of this checkout with no capabilities (so it
    can run the checkout's `notes` wherever the checkout lies, even in a private folder, but
    is bound by file permissions like any user), and another user to own the store."""
    owner = NOTES_BIN.parent.stat()
    runner = ["setpriv", f"--reuid={owner.st_uid}", f"--regid={owner.st_gid}",
              "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
    return runner, 65534 if owner.st_uid != 65534 else 65533


def worker_processes() -> Any:
    """A multiprocessing context for tests that run several writers at once: each writer is
    forked from a server process that has imported the library once (``forkserver``), so a
    writer starts in milliseconds instead of importing it again as ``spawn`` would, and is
    never forked from this process, whose other threads (pytest-xdist's) could hold a lock."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["memory.api", "memory.index.whoosh"])
    return context


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test sees the user's NOTES_* settings, home, data, config or cache folders: the
    per-user default store, the per-user state folder (install's backups) and Claude Code's
    files (~/.claude*) are the test's own. Only matplotlib's font cache (MPLCONFIGDIR, else
    in the test's cache folder) is kept once per worker: every bench report draws a plot,
    and a process with an empty cache lists the system's fonts again first (~0.1 s of CPU)."""
    for name in list(os.environ):
        if name.startswith("NOTES_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path_factory.getbasetemp() / "matplotlib"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


@pytest.fixture(scope="session")
def indexed_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """notes_example/ with its state folder as `notes index` leaves it (the index, the
    ledger, the token cache), built once per test session: under xdist by the first worker
    that needs it, in the folder all the workers share, while the others wait for it. Tests
    only copy it (``store_dir``); none writes to it."""
    return _built_once(tmp_path_factory, "indexed-example", None)


SMALL_NOTES = ("conventions", "glossary", "decisions/celery-over-rq", "howto/deploy-production",
               "howto/restore-db-backup", "incidents/redis-eviction-2026-03",
               "infra/ci-pipeline", "infra/redis", "infra/terraform", "people/on-call")
"""The notes of the small store: ten of the example's (both redis notes, the deploy, backup
and CI notes, the glossary...), for the tests whose subject is how the index is built,
rebuilt, damaged or written, not what the example's 62 notes answer. A build of them costs a
fraction of the example's (and, with fewer than PARALLEL_MIN_NOTES notes, runs in one process
unless a test asks for workers: ``notes.index.build_procs``)."""


@pytest.fixture(scope="session")
def indexed_small_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small store (SMALL_NOTES) with its state folder built, once per session as
    ``indexed_example`` is; tests copy it (``small_store_dir``)."""
    return _built_once(tmp_path_factory, "indexed-small-example", SMALL_NOTES)


def _built_once(tmp_path_factory: pytest.TempPathFactory, name: str,
                notes: Sequence[str] | None) -> Path:
    """``name``/notes in the run's folder: a copy of the example (or of its ``notes``),
    indexed by the first worker that asks, under a lock the others wait on."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # popen-gwN's parent: the run's folder, the same for every worker
    target = root / name / "notes"
    with open(root / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target.parent / "built").exists():
            shutil.rmtree(target.parent, ignore_errors=True)
            copy_notes(target, notes)
            _build_example(target)
            (target.parent / "built").touch()
    return target


def copy_notes(target: Path, notes: Sequence[str] | None = None) -> Path:
    """``target``: a copy of notes_example/'s notes (only ``notes``, by id, if given),
    without any state."""
    if notes is None:
        shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".*"))
        return target
    for note in notes:
        (target / note).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(EXAMPLE / f"{note}.md", target / f"{note}.md")
    return target


_BUILD = ("import sys\nfrom memory import Notes, load_config\n"
          "built = Notes(load_config(sys.argv[1], env={}), notify=lambda _: None)\n"
          "built.index.refresh()\nbuilt.close()\n")


def _build_example(target: Path) -> None:
    """The notes in ``target`` indexed by a process of its own: one with no other threads,
    so the build runs on every core, as `notes index` does (a pytest-xdist worker has
    threads, and would build in one process)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    subprocess.run([sys.executable, "-c", _BUILD, str(target)], env=env, check=True,
                   timeout=300)


@pytest.fixture
def store_dir(tmp_path: Path, indexed_example: Path) -> Path:
    """A private copy of notes_example/ with its index already built (a copy of the session's
    ``indexed_example``). The copy keeps every file's mtime (``shutil.copy2``), and the index
    knows a note by its id, mtime and size, so the copied index is fresh: the first read
    re-indexes nothing. Tests of building the index take ``unindexed_store``."""
    return copy_example(indexed_example, tmp_path / "notes")


def copy_example(indexed_example: Path, target: Path) -> Path:
    """``target``: a copy of the session's indexed example, fresh as ``store_dir`` is (every
    file's mtime kept; the lock file of the build left out). For module-scoped stores too."""
    shutil.copytree(indexed_example, target, copy_function=shutil.copy2,
                    ignore=shutil.ignore_patterns("index.lock"))
    return target


def copy_state(store: Path, target: Path) -> Path:
    """``target`` (a state folder for NOTES_STATE_DIR, perhaps on a small disk) holding a copy
    of ``store``'s state as ``store_dir`` has it: the index, ledger and caches of the example,
    fresh for its notes. A test that needs the index to exist in its own state folder starts
    from this instead of building it (3-4 s of CPU a build); the tests of building take a
    state folder of their own that is empty."""
    shutil.copytree(store / ".notes", target, copy_function=shutil.copy2, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("index.lock"))
    return target


@pytest.fixture(scope="session")
def initialised_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store as `notes init` leaves it (its marker, .gitignore, starter note, and a state
    folder holding the starter note's index), made once per worker by the real command in a
    HOME and XDG folders of its own (``isolated_env``'s do not exist at session scope). Init
    writes no path into a store, nor anything outside it, so a copy (``copy_initialised``) is
    the store a test's own `notes init` would have made, without its ~0.3 s of CPU (most of
    it loading the cl100k encoding to count the starter note). Tests only copy it."""
    base = tmp_path_factory.mktemp("initialised")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTES_", "XDG_"))}
    env |= {"HOME": str(base / "home"), **{f"XDG_{kind}_HOME": str(base / kind.lower())
                                           for kind in ("CACHE", "DATA", "CONFIG", "STATE")}}
    made = subprocess.run([str(NOTES_BIN), "init", str(base / "notes")], capture_output=True,
                          text=True, env=env, cwd=base, timeout=120)
    assert made.returncode == 0, made.stderr
    return base / "notes"


def copy_initialised(initialised_store: Path, target: Path) -> Path:
    """``target``: a copy of ``initialised_store``, every file's mtime kept (so its index is
    fresh, as right after the init)."""
    shutil.copytree(initialised_store, target, copy_function=shutil.copy2)
    return target


@pytest.fixture
def unindexed_store(tmp_path: Path) -> Path:
    """A private copy of notes_example/ without any state: no index, ledger or caches (in its
    own folder, so that a test may take it beside ``store_dir``)."""
    return copy_notes(tmp_path / "unindexed")


@pytest.fixture
def small_store_dir(tmp_path: Path, indexed_small_example: Path) -> Path:
    """A private copy of the small store (SMALL_NOTES) with its index already built, fresh
    as ``store_dir`` is: for tests of the index's mechanics (damage, rebuilds, failing
    writes), whose every rebuild would otherwise index the whole example."""
    return copy_example(indexed_small_example, tmp_path / "small")


@pytest.fixture
def unindexed_small_store(tmp_path: Path) -> Path:
    """A private copy of the small store's notes without any state (``unindexed_store`` of
    SMALL_NOTES), in a folder of its own (beside ``store_dir``, ``unindexed_store``)."""
    return copy_notes(tmp_path / "unindexed-small", SMALL_NOTES)


@pytest.fixture
def notes(store_dir: Path) -> Iterator[Notes]:
    messages: list[str] = []
    instance = Notes(load_config(store_dir), notify=messages.append)
    yield instance
    instance.close()


@pytest.fixture
def empty_store(tmp_path: Path) -> Path:
    target = tmp_path / "empty"
    target.mkdir()
    return target


RunCli = Callable[..., subprocess.CompletedProcess[str]]


def run_in_process(args: Sequence[str], input: str | None = None,
                   env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``notes ARGS`` run inside this process by click's test runner (the group that the
    installed command runs), as a CompletedProcess. An exception that would end the real
    command with a traceback puts the traceback on stderr with exit status 1, as Python would,
    so ``"Traceback" not in result.stderr`` still catches it; the stores the command opened are
    closed when it ends, as the end of the real process closes them. ``serve`` and ``watch``
    (which run until stopped, and handle signals) always run as subprocesses."""
    if args and args[0] in LONG_RUNNING:
        return run_subprocess(args, input=input, env=env)
    with _closed_when_done():
        result = CliRunner().invoke(cli, list(args), input=input, env=dict(env or {}),
                                    prog_name="notes")
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(["notes", *args], result.exit_code, result.stdout,
                                       stderr)


LONG_RUNNING = ("serve", "watch")


@contextlib.contextmanager
def _closed_when_done() -> Iterator[None]:
    """Every store (``Notes``) opened inside the block is closed when it ends."""
    opened: list[Notes] = []
    init = Notes.__init__

    def recording(self: Notes, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        opened.append(self)

    Notes.__init__ = recording  # type: ignore[method-assign]
    try:
        yield
    finally:
        Notes.__init__ = init  # type: ignore[method-assign]
        for store in opened:
            store.close()


def run_subprocess(args: Sequence[str], input: str | None = None,
                   env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed ``notes ARGS`` as a subprocess, as a user runs it."""
    return subprocess.run([str(NOTES_BIN), *args], input=input, capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=120)


def run_lab(args: Sequence[str], env: Mapping[str, str] | None = None,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m benchmarks ARGS`` (what measures the project: perf, visible) from the
    checkout's root, as a developer runs it; ``env`` is the whole environment (default:
    this one)."""
    return subprocess.run([sys.executable, "-m", "benchmarks", *args], capture_output=True,
                          text=True, cwd=ROOT, env=dict(env if env is not None else os.environ),
                          timeout=timeout)


def _runner(store_dir: Path, run: Callable[..., subprocess.CompletedProcess[str]]) -> RunCli:
    def on_store(*args: str, input: str | None = None, notes_dir: Path | None = None,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return run(args, input=input, env={"NOTES_DIR": str(notes_dir or store_dir),
                                           **(env or {})})

    return on_store


@pytest.fixture
def run_cli(store_dir: Path) -> RunCli:
    """``notes`` on the test's store, run in this process (click's CliRunner: no interpreter
    start, no imports per call). The real command's own behaviour (its entry point, exit
    statuses and stderr as a user sees them) is covered by the tests that take
    ``run_cli_process``."""
    return _runner(store_dir, run_in_process)


@pytest.fixture
def run_cli_process(store_dir: Path) -> RunCli:
    """Run the installed `notes` command as a subprocess, as a user would, on the test's
    store."""
    return _runner(store_dir, run_subprocess)


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Iterator[Figures]:
    """Rows for docs/reliability.md under this test's title (see tests/reliability.py), in
    the order of the collection as written (not the order the tests run in, below)."""
    doc = (request.function.__doc__ or request.function.__name__).strip().splitlines()[0]
    yield Figures(doc, order=request.node.stash[COLLECTED_AT])


COLLECTED_AT = pytest.StashKey[int]()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject's addopts): one worker more than the cores this process may
    use. The suite waits a good part of its time (servers starting, editors' saves settling,
    the stress tests' time windows, subprocesses' start-up), and a worker beyond the cores
    runs while the others wait (figures in README.md's "Development").
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when set (None: pytest-xdist's own
    answer)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first: those marked ``slow(SECONDS)``, longest first, then the rest
    in collection order. pytest-xdist hands each worker a contiguous share of the collection,
    and an idle worker takes tests from the end of a busy one's (worksteal); a 40 s test that
    starts last leaves the other worker idle for those 40 s. Started first, the long tests
    run while short ones fill the other worker, and the run ends on short tests. SECONDS is
    about what the test takes in a run of the whole suite on 2 cores (`--durations`); only
    the order depends on it. Tests that share a module fixture take the same SECONDS, so that
    they stay side by side."""
    for position, item in enumerate(items):
        item.stash[COLLECTED_AT] = position
    items.sort(key=_expected_seconds, reverse=True)  # stable: equal keys keep their order


def _expected_seconds(item: pytest.Item) -> float:
    marker = item.get_closest_marker("slow")
    return float(marker.args[0]) if marker is not None and marker.args else 0.0


SCRATCH = pytest.StashKey[Scratch]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The controller (or a run without workers) makes the session's one scratch folder,
    unless ``--basetemp`` names one (tests/scratch.py)."""
    if getattr(config, "workerinput", None) is None and not config.option.basetemp:
        scratch = Scratch()
        scratch.enter()
        config.stash[SCRATCH] = scratch


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # a pytest-xdist worker: hand the figures to the controller
        workeroutput["figures"] = reliability.dump()
        return
    target = os.environ.get("NOTES_RELIABILITY_REPORT")
    if target and FIGURES:
        write_report(Path(target), exitstatus)
    session.config.stash.setdefault(EXIT_STATUS, int(exitstatus))


EXIT_STATUS = pytest.StashKey[int]()


def pytest_unconfigure(config: pytest.Config) -> None:
    """The scratch folder goes when the session passed (kept, and named, when it failed)."""
    scratch = config.stash.get(SCRATCH, None)
    if scratch is not None:
        said = scratch.leave(passed=config.stash.get(EXIT_STATUS, 1) in (0, 5))
        if said:
            print(said, file=sys.stderr)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """The controller of pytest-xdist, as each worker finishes: take its figures."""
    dumped = getattr(node, "workeroutput", {}).get("figures")
    if dumped:
        reliability.merge(dumped)
