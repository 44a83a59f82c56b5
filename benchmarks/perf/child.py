"""Work the benchmark runs in a fresh process, so its time and peak memory are its own.

``python -m benchmarks.perf.child build NOTES STATE BACKEND`` builds the whole index (timed from
the call, imports excluded) and prints one JSON line: seconds, peak RSS (``ru_maxrss``, with
the worker processes of a parallel Whoosh build counted), notes, tokens, index size on disk.
"""

from __future__ import annotations

import dataclasses
import json
import resource
import sys
import time
from pathlib import Path


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def peak_rss_mb(workers: int) -> float:
    """This process's peak resident memory plus, for a build by worker processes, the
    largest worker's peak times their number: an upper bound of what the build held at once
    (the peaks need not coincide, and pages a forked worker shares are counted twice)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if workers > 1 else 0
    return (own + worker * workers) / 1024


def build(notes_dir: str, state_dir: str, backend: str) -> dict[str, float]:
    from memory.api import Notes
    from memory.config import load_config

    config = dataclasses.replace(load_config(notes_dir, state_dir), backend=backend,
                                 usage_log=False)
    notes = Notes(config, notify=lambda _: None)
    seen: list[int] = []
    start = time.perf_counter()
    report = notes.refresh_index(rebuild=True, progress=lambda done, total: seen.append(done))
    seconds = time.perf_counter() - start
    peak_mb = peak_rss_mb(getattr(notes.index, "last_build_procs", 1))
    listed = notes.list_notes()
    result = {"seconds": seconds, "peak_rss_mb": peak_mb, "notes": len(report.indexed),
              "tokens": sum(n.tokens for n in listed), "progress_calls": len(seen),
              "index_mb": folder_bytes(Path(notes.index.dir)) / 1e6}
    notes.close()
    return result


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[0] != "build":
        print("usage: python -m benchmarks.perf.child build NOTES STATE BACKEND", file=sys.stderr)
        return 2
    print(json.dumps(build(argv[1], argv[2], argv[3])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
