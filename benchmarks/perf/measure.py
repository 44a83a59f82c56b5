"""The measurements of `python -m benchmarks perf`, one function per figure group.

Warm figures run in this process through :class:`memory.api.Notes` (the library, as the MCP
server uses it); builds, the watcher, cold commands and the MCP server run as subprocesses so
their time and memory are their own. No figure is checked here: the report compares them
with the targets.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.perf.generator import PerfQuery
from memory.api import Notes
from memory.config import Config
from memory.index import parse_query

CHECKOUT = Path(__file__).resolve().parent.parent.parent

Figures = dict[str, Any]
POLL_SECONDS = 0.01
VISIBLE_TIMEOUT = 60.0
STOP_PATIENCE = 60.0


def notes_command() -> list[str]:
    """The installed `notes` beside this interpreter, else ``python -m memory``."""
    beside = Path(sys.executable).parent / "notes"
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "memory"]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def warm_then_time(call: Callable[[str], object], questions: list[str],
                   warm: int) -> list[float]:
    """Seconds of ``call`` on each question, after ``warm`` untimed calls on the first ones."""
    for question in questions[:warm]:
        call(question)
    return [timed(partial(call, question)) for question in questions]


def percentiles(seconds: list[float]) -> Figures:
    """p50 / p95 / p99 / max in milliseconds (nearest rank)."""
    if not seconds:
        return {}
    ordered = sorted(seconds)

    def rank(q: float) -> float:
        return 1000 * ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]

    return {"p50_ms": rank(0.5), "p95_ms": rank(0.95), "p99_ms": rank(0.99),
            "max_ms": 1000 * ordered[-1], "n": len(ordered)}


def build(notes_dir: Path, state_dir: Path, backend: str) -> Figures:
    """A full index build in a fresh process (cold token cache), then a rebuild (warm cache)."""
    runs = {}
    for label in ("cold", "warm_cache"):
        command = [sys.executable, "-m", "benchmarks.perf.child", "build", str(notes_dir),
                   str(state_dir), backend]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=True,
                              cwd=CHECKOUT)  # benchmarks/ is importable from the checkout
        runs[label] = json.loads(done.stdout.strip().splitlines()[-1])
        runs[label]["process_s"] = time.perf_counter() - start
    cold = runs["cold"]
    return {"seconds": cold["seconds"], "process_s": cold["process_s"],
            "tokens_per_s": cold["tokens"] / cold["seconds"] if cold["seconds"] else 0.0,
            "peak_rss_mb": cold["peak_rss_mb"], "index_mb": cold["index_mb"],
            "notes": cold["notes"], "tokens": cold["tokens"],
            "progress_calls": cold["progress_calls"],
            "rebuild_warm_cache_s": runs["warm_cache"]["seconds"],
            "rebuild_peak_rss_mb": runs["warm_cache"]["peak_rss_mb"]}


def warm_ladder(notes: Notes, queries: list[PerfQuery]) -> Figures:
    """suggest, section_map (with the query, on the expected note) and read_section (the map's
    best section, else the state), each timed over the query set; plus routing quality."""
    notes.suggest(queries[0].question)
    times: dict[str, list[float]] = {"suggest": [], "section_map": [], "read_section": []}
    top1 = top5 = best_hit = entry_queries = 0
    for query in queries:
        start = time.perf_counter()
        found = notes.suggest(query.question)
        times["suggest"].append(time.perf_counter() - start)
        ranked = [h.note for h in found.hits]
        top1 += ranked[:1] == [query.note]
        top5 += query.note in ranked
        start = time.perf_counter()
        mapped = notes.section_map(query.note, query.question)
        times["section_map"].append(time.perf_counter() - start)
        section = mapped.best[0] if mapped.best else "state"
        start = time.perf_counter()
        notes.read_section(query.note, section)
        times["read_section"].append(time.perf_counter() - start)
        if query.section:
            entry_queries += 1
            best_hit += query.section in mapped.best[:1]
    out: Figures = {name: percentiles(values) for name, values in times.items()}
    out["routing"] = {"queries": len(queries), "top1": top1 / len(queries),
                      "top5": top5 / len(queries), "entry_queries": entry_queries,
                      "best_section": best_hit / entry_queries if entry_queries else None}
    return out


def edit_note(path: Path, word: str) -> None:
    """Append a line with ``word`` the way editors save: a temporary file, then a rename."""
    text = path.read_text(encoding="utf-8")
    temp = path.with_name(f".{path.name}.perf-tmp")
    temp.write_text(text.rstrip("\n") + f"\n\n- Perf check: {word} added.\n", encoding="utf-8")
    os.replace(temp, path)


def _fresh_word(prefix: str, number: int) -> str:
    """A word no note holds yet (the store is shared by the backends of one run)."""
    return f"{prefix}{number}x{uuid.uuid4().hex[:10]}"


def update_targets(notes: Notes, runs: int) -> list[tuple[str, Path]]:
    files = notes.store.files()
    step = max(1, len(files) // max(1, runs))
    return [(f.note_id, f.path) for f in files[::step][:runs]]


def library_update(notes: Notes, runs: int = 5) -> Figures:
    """Edit one note file, then time refresh() plus a suggest that finds the new word."""
    seconds: list[float] = []
    found = 0
    for number, (note_id, path) in enumerate(update_targets(notes, runs)):
        word = _fresh_word("zqlib", number)
        edit_note(path, word)
        start = time.perf_counter()
        notes.index.refresh()
        hits = notes.suggest(word).hits
        seconds.append(time.perf_counter() - start)
        found += bool(hits) and hits[0].note == note_id
    return {"median_ms": 1000 * statistics.median(seconds), "max_ms": 1000 * max(seconds),
            "found": found, "runs": len(seconds)}


def _visible(notes: Notes, word: str, note_id: str) -> bool:
    parsed = parse_query(word)
    hits, _ = notes.index.run_search(lambda s: s.search_notes(parsed, 3))
    return any(h.doc.note_id == note_id for h in hits)


@contextlib.contextmanager
def watcher_process(env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """`notes watch` running, once it says it is watching."""
    proc = subprocess.Popen([*notes_command(), "watch"], env=env, stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True)
    ready = threading.Event()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("watching "):
                ready.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        if not ready.wait(600):
            raise RuntimeError("notes watch did not start")
        yield proc
    finally:
        stop_process(proc)


def stop_process(proc: subprocess.Popen[str], patience: float = STOP_PATIENCE) -> None:
    """SIGTERM, then SIGKILL if the process has not exited after ``patience`` seconds: a
    loaded machine can make a clean exit slow, and that is not what is being measured."""
    proc.terminate()
    try:
        proc.wait(timeout=patience)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def watcher_update(notes: Notes, env: dict[str, str], runs: int = 5) -> Figures:
    """Save a note (temp file + rename) with `notes watch` running; time until a search of
    the index (this process never refreshes it) finds the new word."""
    seconds: list[float] = []
    with watcher_process(env):
        for number, (note_id, path) in enumerate(update_targets(notes, runs)):
            word = _fresh_word("zqwatch", number)
            time.sleep(0.5)  # let the previous save settle
            start = time.perf_counter()
            edit_note(path, word)
            while not _visible(notes, word, note_id):
                if time.perf_counter() - start > VISIBLE_TIMEOUT:
                    break
                time.sleep(POLL_SECONDS)
            seconds.append(time.perf_counter() - start)
    return {"median_ms": 1000 * statistics.median(seconds), "max_ms": 1000 * max(seconds),
            "runs": len(seconds)}


def cold_processes(env: dict[str, str], queries: list[PerfQuery], runs: int) -> Figures:
    """Whole `notes suggest` processes (median of ``runs``); the hook's are
    :mod:`benchmarks.perf.hook_timing`'s."""
    cli = [_process([*notes_command(), "suggest", query.question], env)
           for query in (queries * runs)[:runs]]
    return {"cli_ms": 1000 * statistics.median(cli), "runs": runs}


def compile_package() -> None:
    """Write the package's bytecode, as installing it does, so that no cold process measured
    compiles sources (an editable install under PYTHONDONTWRITEBYTECODE never writes it)."""
    import compileall

    import memory

    compileall.compile_dir(str(Path(memory.__file__).parent), quiet=1)
    compileall.compile_file(str(CHECKOUT / "mcp_server.py"), quiet=1)


def _process(command: list[str], env: dict[str, str], stdin: str | None = None) -> float:
    """Seconds a whole process takes, from start to exit."""
    start = time.perf_counter()
    subprocess.run(command, env=env, input=stdin, text=True, capture_output=True, check=True)
    return time.perf_counter() - start


def store_env(config: Config) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    return env | {"NOTES_DIR": str(config.notes_dir), "NOTES_STATE_DIR": str(config.state_dir),
                  "NOTES_BACKEND": config.backend}
