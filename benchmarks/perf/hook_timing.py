"""The prompt hook's cost per message, against a bare interpreter started in the same run.

Claude Code runs ``notes hook user-prompt`` on every prompt, so its whole-process time is the
figure: cold (no server: the hook opens the store itself) and answered by a running MCP
server over the store's socket (``notes serve`` over stdio, as Claude Code starts it). Each
hook process is paired with a bare ``python -c pass`` of the same interpreter, one after the
other, and the ratio is taken pair by pair (its median), so a machine whose speed drifts
during the run still gives a fair ratio. Every query is a different prompt (no count is
cached from an earlier run); the answers through the server are checked to be the same as
the cold ones.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from benchmarks.perf.generator import PerfQuery
from benchmarks.perf.measure import notes_command

Figures = dict[str, Any]
READY_LINE = "answering the prompt hook"
READY_TIMEOUT_S = 600.0


def _seconds(command: list[str], env: dict[str, str], stdin: str | None = None) -> tuple[
        float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, input=stdin, text=True, capture_output=True,
                          check=True)
    return time.perf_counter() - start, done.stdout


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.9 * len(ordered)) - 1))]


def _summary(hook: list[float], bare: list[float]) -> Figures:
    return {"median_ms": 1000 * statistics.median(hook), "p90_ms": 1000 * _p90(hook),
            "bare_median_ms": 1000 * statistics.median(bare),
            "ratio": statistics.median(h / b for h, b in zip(hook, bare, strict=True)),
            "runs": len(hook)}


def paired_hooks(env: dict[str, str], queries: list[PerfQuery]) -> tuple[Figures, list[str]]:
    """Hook processes (one per query), each followed by a bare interpreter; their answers."""
    hook: list[float] = []
    bare: list[float] = []
    answers: list[str] = []
    for query in queries:
        payload = json.dumps({"prompt": query.question, "session_id": "perf",
                              "transcript_path": "", "cwd": env.get("NOTES_DIR", "")})
        seconds, answer = _seconds([*notes_command(), "hook", "user-prompt"], env, payload)
        hook.append(seconds)
        answers.append(answer)
        bare.append(_seconds([sys.executable, "-c", "pass"], env)[0])
    return _summary(hook, bare), answers


@contextmanager
def running_server(env: dict[str, str], log: Path) -> Iterator[float]:
    """`notes serve` over stdio with its standard input held open; yields the seconds from
    its start until it said it answers the hook."""
    with open(log, "w") as errors:
        start = time.perf_counter()
        proc = subprocess.Popen([*notes_command(), "serve"], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        ready = threading.Event()

        def drain() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                errors.write(line)
                if READY_LINE in line:
                    ready.set()

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        try:
            if not ready.wait(READY_TIMEOUT_S):
                raise RuntimeError(f"notes serve did not answer the hook; see {log}")
            yield time.perf_counter() - start
        finally:
            assert proc.stdin is not None
            proc.stdin.close()  # the end of the stdio session: the server stops
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            reader.join(timeout=10)


def hook_figures(env: dict[str, str], queries: list[PerfQuery], log: Path) -> Figures:
    """Cold, then through the server, on the same prompts; and whether they agree."""
    cold, cold_answers = paired_hooks(env, queries)
    with running_server(env, log) as ready_s:
        served, served_answers = paired_hooks(env, queries)
    same = sum(a == b for a, b in zip(cold_answers, served_answers, strict=True))
    return {"cold": cold, "served": served, "server_ready_s": ready_s,
            "same_answers": same, "answers": len(queries),
            "answered": sum(bool(a.strip()) for a in cold_answers)}
