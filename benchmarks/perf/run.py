"""`python -m benchmarks perf`: generate stores, measure every cost per backend, with baselines.

For each scale: generate the store (and its queries), run the baselines (grep/ripgrep,
SQLite FTS5), then for each backend: full build (subprocess), warm ladder, one-note update
through the library and through `notes watch`, cold CLI and hook processes, MCP round trips
and server memory. The result is one dict, written by :mod:`benchmarks.perf.report`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.perf import baselines, measure
from benchmarks.perf.generator import generate_store, load_queries
from benchmarks.perf.hook_timing import hook_figures
from benchmarks.perf.mcp_load import STARTS, mcp_load
from memory.api import Notes
from memory.config import BACKENDS, load_config

Say = Callable[[str], None]


@dataclass
class PerfOptions:
    scales: list[float]
    backends: list[str] = field(default_factory=lambda: ["whoosh"])
    seed: int = 1
    queries: int = 200
    cold_runs: int = 7
    update_runs: int = 7
    mcp_queries: int = 50
    hook_runs: int = 21  # hook processes per figure (cold, through the server), each paired
    work: Path | None = None  # keep the generated stores there (default: a temporary folder)


def machine() -> dict[str, Any]:
    model = ""
    try:
        model = next((line.split(":", 1)[1].strip() for line in
                      Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "")
    except OSError:
        pass
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return {"cpu": model or platform.processor(), "cores": os.cpu_count(),
            "memory_gb": round(memory, 1), "python": platform.python_version(),
            "system": f"{platform.system()} {platform.release()}",
            "load_average": [round(x, 2) for x in os.getloadavg()],
            "rg": shutil.which("rg") is not None}


def run_perf(options: PerfOptions, command: str, say: Say) -> dict[str, Any]:
    work = options.work or Path(tempfile.mkdtemp(prefix="notes-perf-"))
    started = time.perf_counter()
    result: dict[str, Any] = {
        "command": command, "date": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": machine(), "options": {"seed": options.seed, "queries": options.queries,
                                          "cold_runs": options.cold_runs,
                                          "update_runs": options.update_runs,
                                          "mcp_queries": options.mcp_queries,
                                          "hook_runs": options.hook_runs},
        "scales": []}
    measure.compile_package()
    try:
        for scale in options.scales:
            result["scales"].append(_run_scale(scale, work / f"scale-{scale:g}", options, say))
    finally:
        if options.work is None:
            shutil.rmtree(work, ignore_errors=True)
    result["wall_s"] = time.perf_counter() - started
    result["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    return result


def _run_scale(scale: float, folder: Path, options: PerfOptions, say: Say) -> dict[str, Any]:
    shutil.rmtree(folder, ignore_errors=True)
    start = time.perf_counter()
    manifest = generate_store(folder, scale, options.seed, options.queries)
    entry: dict[str, Any] = {"scale": scale, "generate_s": time.perf_counter() - start,
                             **{k: manifest[k] for k in ("notes", "chars")}}
    say(f"scale {scale:g}: {manifest['notes']} notes generated in {entry['generate_s']:.1f} s")
    queries = load_queries(folder / "queries.jsonl")
    config = load_config(folder / "notes", folder / "baseline-state")
    entry["grep"] = baselines.grep_baseline(config.notes_dir, queries, options.cold_runs)
    entry["fts5"] = baselines.fts5_baseline(config, folder, queries)
    say(f"  baselines: {entry['grep']['tool']} {entry['grep']['median_ms']:.0f} ms, FTS5 build "
        f"{entry['fts5']['build_s']:.1f} s, p95 {entry['fts5'].get('p95_ms', 0):.2f} ms")
    entry["backends"] = {}
    for backend in options.backends:
        entry["backends"][backend] = _run_backend(folder, backend, queries, options, say)
    return entry


def _run_backend(folder: Path, backend: str, queries: list[Any], options: PerfOptions,
                 say: Say) -> dict[str, Any]:
    state = folder / f"state-{backend}"
    figures: dict[str, Any] = {"build": measure.build(folder / "notes", state, backend)}
    build = figures["build"]
    say(f"  {backend}: build {build['seconds']:.1f} s ({build['tokens']:,} tokens, peak "
        f"{build['peak_rss_mb']:.0f} MB, {build['index_mb']:.0f} MB on disk)")
    config = dataclasses.replace(load_config(folder / "notes", state), backend=backend)
    notes = Notes(config, notify=lambda _: None)
    try:
        figures["warm"] = measure.warm_ladder(notes, queries)
        say(f"  {backend}: warm suggest p50 {figures['warm']['suggest']['p50_ms']:.1f} ms, p95 "
            f"{figures['warm']['suggest']['p95_ms']:.1f} ms")
        figures["update"] = measure.library_update(notes, options.update_runs)
        env = measure.store_env(config)
        figures["watch"] = measure.watcher_update(notes, env, options.update_runs)
        say(f"  {backend}: update {figures['update']['median_ms']:.0f} ms, saved → visible "
            f"{figures['watch']['median_ms']:.0f} ms")
        notes.index.refresh()
    finally:
        notes.close()
    figures["cold"] = measure.cold_processes(env, queries, options.cold_runs)
    hook = figures["hook"] = hook_figures(env, queries[:options.hook_runs],
                                          folder / f"serve-{backend}.log")
    figures["mcp"] = mcp_load(env, queries[:options.mcp_queries], folder / f"mcp-{backend}.log",
                              starts=min(options.cold_runs, STARTS))
    say(f"  {backend}: cold CLI {figures['cold']['cli_ms']:.0f} ms; hook cold "
        f"{hook['cold']['median_ms']:.0f} ms ({hook['cold']['ratio']:.1f}× python -c pass), "
        f"through the server {hook['served']['median_ms']:.0f} ms "
        f"({hook['served']['ratio']:.1f}×), same answers {hook['same_answers']} of "
        f"{hook['answers']}; MCP first answer {figures['mcp']['first_answer_s']:.2f} s "
        f"({figures['mcp']['first_answer_ratio']:.2f}× a bare fastmcp server's), "
        f"suggest p95 {figures['mcp']['suggest']['p95_ms']:.1f} ms, server peak "
        f"{figures['mcp']['peak_rss_mb']:.0f} MB")
    return figures


def parse_scales(text: str) -> list[float]:
    scales = [float(x) for x in text.split(",") if x.strip()]
    if not scales or any(s <= 0 or s > 100 for s in scales):
        raise ValueError(f"scales must be numbers in (0, 100], got {text!r}")
    return scales


def parse_backends(text: str) -> list[str]:
    chosen = [b.strip() for b in text.split(",") if b.strip()]
    unknown = [b for b in chosen if b not in BACKENDS]
    if not chosen or unknown:
        raise ValueError(f"backends are {', '.join(BACKENDS)}; got {text!r}")
    return chosen
