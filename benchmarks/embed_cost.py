"""What the ``semantic`` lever's embedding costs on a store of 1 M tokens (issue #34, item 4).

Usage (needs the ``semantic`` extra):
  .venv/bin/python benchmarks/embed_cost.py NOTES_DIR [--tokens 1000000] [--sample 400]

Takes the store's notes in its own order (as ``notes embed`` lists them) until ``--tokens``
tokens (cl100k, as ``notes tokens`` counts them; the whole store when it is smaller), counts
the lines ``notes embed`` would embed in them (:func:`memory.retrieval.semantic.note_lines`),
embeds an evenly spaced sample of those lines with the store's own embedder (the model loaded
first, its load timed apart), and projects the time and the vectors' size to the lines of
``--tokens`` tokens. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from memory.config import load_config
from memory.retrieval.semantic import DIM, SemanticRouter, note_lines
from memory.state.store import Store
from memory.state.tokens import count_exact


def store_prefix(store: Store, tokens: int) -> tuple[list[str], int, int]:
    """The embedded lines of the store's notes, read as ``notes embed`` reads them and taken
    in the store's order up to ``tokens`` tokens; the tokens and the notes taken."""
    lines: list[str] = []
    taken = notes = 0
    for note_id in store.note_ids():
        text = store.load(note_id).note.text
        taken += count_exact(text)
        lines += note_lines(text)
        notes += 1
        if taken >= tokens:
            break
    return lines, taken, notes


def measure(notes_dir: Path, tokens: int, sample: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="notes-embed-cost-") as scratch:
        store = Store(load_config(notes_dir, Path(scratch) / "state", env={}))
        lines, taken, notes = store_prefix(store, tokens)
        step = max(1, len(lines) // sample)
        chosen = lines[::step][:sample]
        router = SemanticRouter(store, Path(scratch), notify=lambda _: None)
        started = time.perf_counter()
        router.embed_lines(["load the model"])
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        router.embed_lines(chosen)
        per_line = (time.perf_counter() - started) / max(1, len(chosen))
    scale = tokens / max(1, taken)
    projected_lines = round(len(lines) * scale)
    return {"store": str(notes_dir), "notes": notes, "tokens": taken, "lines": len(lines),
            "sample": len(chosen), "model_load_s": round(load_s, 2),
            "seconds_per_line": round(per_line, 4),
            "mean_line_tokens": round(sum(count_exact(x) for x in chosen)
                                      / max(1, len(chosen)), 1),
            "projected": {"tokens": tokens, "lines": projected_lines,
                          "minutes": round(projected_lines * per_line / 60, 1),
                          "vectors_mb": round(projected_lines * DIM * 2 / 1e6, 1)}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notes", type=Path)
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--sample", type=int, default=400)
    args = parser.parse_args()
    json.dump(measure(args.notes, args.tokens, args.sample), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
