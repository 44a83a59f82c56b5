"""Golden routing: questions over notes_example/ whose note must come first (or in the top 3).

Each line of golden_routing.jsonl is {"question", "note", "rank", "lang"}. The test prints how
many hold, per language, and fails if any does not: a routing change that breaks one must
either fix it or change the question on purpose.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory import Notes

GOLDEN = Path(__file__).resolve().parent / "golden_routing.jsonl"
CASES = [json.loads(line) for line in GOLDEN.read_text().splitlines() if line.strip()]


def test_golden_file_is_varied() -> None:
    assert len(CASES) >= 25
    langs = {c["lang"] for c in CASES}
    assert {"es", "en"} <= langs
    unaccented = [c for c in CASES if c["lang"] == "es" and c["question"].isascii()]
    assert len(unaccented) >= 5


def test_golden_routing(notes: Notes, capsys: pytest.CaptureFixture[str]) -> None:
    misses = []
    for case in CASES:
        ranked = [h.note for h in notes.suggest(case["question"], limit=5).hits]
        if case["note"] not in ranked[: case["rank"]]:
            misses.append(f"  {case['question']!r}: want {case['note']} in top {case['rank']}, "
                          f"got {ranked[:3]}")
    held = len(CASES) - len(misses)
    with capsys.disabled():
        print(f"\ngolden routing: {held}/{len(CASES)} hold")
        print("\n".join(misses))
    assert not misses
