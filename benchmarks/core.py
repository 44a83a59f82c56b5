"""Core benchmark: index build, refresh and ladder latency on a store (default notes_example/).

Prints the figures and writes them to docs/benchmarks-core.md. Every figure is measured in this
run next to a baseline from the same run on the same notes and queries:

- full index build, against reading + parsing every note without indexing (the floor);
- warm `suggest` latency, against a plain Python scan of every note for the query words
  (what an agent without an index pays per question);
- a cold `notes suggest` process, against a cold `grep -rli` process over the same folder.

Run: python benchmarks/core.py [--notes DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory import Notes, load_config  # noqa: E402
from memory.index.words import query_words  # noqa: E402
from memory.state.store import Store  # noqa: E402

NOTES_BIN = Path(sys.executable).parent / "notes"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def queries() -> list[str]:
    golden = ROOT / "tests" / "golden_routing.jsonl"
    return [json.loads(line)["question"] for line in golden.read_text().splitlines() if line]


def scan_baseline(root: Path, query: str) -> list[str]:
    words = [w for w, _ in query_words(query)]
    hits = []
    for path in root.rglob("*.md"):
        text = path.read_text(errors="replace").casefold()
        if any(w in text for w in words):
            hits.append(path.name)
    return hits


def measure(store: Path, runs: int) -> dict[str, float]:
    config = load_config(store)
    notes = Notes(config, notify=lambda _: None)
    figures: dict[str, float] = {}
    builds = [timed(lambda: notes.refresh_index(rebuild=True)) for _ in range(runs)]
    figures["build_s"] = statistics.median(builds)
    plain = Store(config)
    figures["parse_all_s"] = statistics.median(
        timed(lambda: [plain.load_path(f.note_id, f.path) for f in plain.files()])
        for _ in range(runs))
    figures["refresh_noop_ms"] = 1000 * statistics.median(
        timed(notes.refresh_index) for _ in range(runs * 5))
    qs = queries()
    notes.suggest(qs[0])
    warm = [1000 * timed(lambda q=q: notes.suggest(q)) for q in qs for _ in range(runs)]
    scans = [1000 * timed(lambda q=q: scan_baseline(store, q)) for q in qs for _ in range(runs)]
    figures |= {"suggest_p50_ms": pct(warm, 0.5), "suggest_p95_ms": pct(warm, 0.95),
                "scan_p50_ms": pct(scans, 0.5), "scan_p95_ms": pct(scans, 0.95)}
    maps = [1000 * timed(lambda: notes.section_map("howto/deploy-production", "rollback"))
            for _ in range(runs * 5)]
    figures["map_query_p50_ms"] = pct(maps, 0.5)
    figures["index_mb"] = sum(p.stat().st_size for p in notes.index.dir.iterdir()) / 1e6
    figures["tokens"] = sum(n.tokens for n in notes.list_notes())
    figures["notes"] = len(notes.list_notes())
    notes.close()
    env = {**os.environ, "NOTES_DIR": str(store)}
    cold = [timed(lambda: subprocess.run([str(NOTES_BIN), "suggest", "despliegue producción"],
                                         env=env, capture_output=True, check=True))
            for _ in range(runs * 2)]
    grep = [timed(lambda: subprocess.run(["grep", "-rli", "despliegue", str(store)],
                                         capture_output=True)) for _ in range(runs * 2)]
    hook_input = json.dumps({"prompt": "cómo hago rollback de un despliegue", "session_id": "b",
                             "transcript_path": "", "cwd": str(store)})
    hook = [timed(lambda: subprocess.run([str(NOTES_BIN), "hook", "user-prompt"], env=env,
                                         input=hook_input, text=True, capture_output=True,
                                         check=True)) for _ in range(runs * 2)]
    figures["cold_hook_ms"] = 1000 * statistics.median(hook)
    figures["cold_cli_ms"] = 1000 * statistics.median(cold)
    figures["cold_grep_ms"] = 1000 * statistics.median(grep)
    return figures


def _ratio(a: float, b: float, digits: int = 2) -> str:
    return f"{a / b:.{digits}f}×" if b else ""


def report(f: dict[str, float], store_name: str, runs: int) -> str:
    rows = [
        ("full index build", f"{f['build_s']:.2f} s",
         f"read + parse every note: {f['parse_all_s']:.2f} s",
         _ratio(f["build_s"], f["parse_all_s"], 1)),
        ("refresh with nothing changed (stat every file)", f"{f['refresh_noop_ms']:.1f} ms", "",
         ""),
        ("warm `suggest`, p50", f"{f['suggest_p50_ms']:.1f} ms",
         f"plain scan of every note: {f['scan_p50_ms']:.1f} ms",
         _ratio(f["suggest_p50_ms"], f["scan_p50_ms"])),
        ("warm `suggest`, p95", f"{f['suggest_p95_ms']:.1f} ms",
         f"plain scan p95: {f['scan_p95_ms']:.1f} ms",
         _ratio(f["suggest_p95_ms"], f["scan_p95_ms"])),
        ("warm `section_map` with a query, p50", f"{f['map_query_p50_ms']:.1f} ms", "", ""),
        ("cold `notes suggest` process", f"{f['cold_cli_ms']:.0f} ms",
         f"cold `grep -rli`: {f['cold_grep_ms']:.0f} ms",
         _ratio(f["cold_cli_ms"], f["cold_grep_ms"], 0)),
        ("cold `notes hook user-prompt` process (a typical prompt)",
         f"{f['cold_hook_ms']:.0f} ms", f"cold `grep -rli`: {f['cold_grep_ms']:.0f} ms",
         _ratio(f["cold_hook_ms"], f["cold_grep_ms"], 0)),
        ("index size on disk", f"{f['index_mb']:.1f} MB", "", ""),
    ]
    table = "\n".join(f"| {' | '.join(r)} |" for r in rows)
    return f"""# Core benchmark figures

Measured {dt.date.today().isoformat()} on this project's machine kind (2 cores, shared and noisy),
on `{store_name}` ({int(f['notes'])} notes, {int(f['tokens']):,} cl100k tokens), median of {runs}
runs unless stated (cold processes: median of {2 * runs}). Produced by:

    .venv/bin/python benchmarks/core.py --runs {runs}

| what | figure | baseline in the same run | ratio |
|---|---|---|---|
{table}

Warm `suggest` includes the freshness check (a `stat` of every note) that makes edits visible
without a manual rebuild. The plain scan finds files containing any query word but does not
rank them; grep neither ranks nor folds accents: they are floors, not competitors.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=Path, default=ROOT / "notes_example")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks-core.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(args.notes, store, ignore=shutil.ignore_patterns(".*"))
        figures = measure(store, args.runs)
    text = report(figures, args.notes.name, args.runs)
    print(text)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
