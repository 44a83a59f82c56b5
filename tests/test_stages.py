"""Retrieval as named stages (issue #36, item 1): the import rule that keeps the rungs from
calling back into the ladder, the lever registry, and `notes bench run --levers list`."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

from conftest import NOTES_BIN, ROOT
from memory.retrieval.levers import DEFAULT, NAMES, Levers, parse_levers, registered
from memory.retrieval.stages import MODULES, POINTS, REGISTRY

RETRIEVAL = ROOT / "memory" / "retrieval"


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, at any depth (inside functions and TYPE_CHECKING
    blocks too), by absolute name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_no_retrieval_module_but_the_facade_imports_the_ladder() -> None:
    # the stages read through a Reader: none of them may call back into the Ladder façade
    offenders = sorted(str(path.relative_to(ROOT)) for path in RETRIEVAL.rglob("*.py")
                       if path.name != "ladder.py" or path.parent != RETRIEVAL
                       if "memory.retrieval.ladder" in imported_modules(path))
    assert offenders == []


def test_the_reader_and_the_stages_know_nothing_of_the_rungs_above_them() -> None:
    # the context object and the lever stages sit under the pipelines, never beside them
    above = {"memory.retrieval.ladder", "memory.retrieval.suggest", "memory.retrieval.mapping"}
    for path in [RETRIEVAL / "reader.py", *(RETRIEVAL / "stages").glob("*.py")]:
        assert not imported_modules(path) & above, path.name


def test_every_registered_stage_is_a_lever_with_its_name_summary_and_points() -> None:
    assert NAMES == tuple(stage.name for stage in REGISTRY)
    assert len(MODULES) == len(set(NAMES)) == len(REGISTRY)
    for stage in REGISTRY:
        assert stage.summary and stage.points(), stage.name
        assert set(stage.points()) <= set(POINTS)
        assert type(stage).__module__.startswith("memory.retrieval.stages.")
    assert [row.name for row in registered()] == list(NAMES)


def test_the_levers_are_the_registry_s_names_as_flags() -> None:
    assert DEFAULT.on() == tuple(s.name for s in REGISTRY if s.default) == ("replies",)
    chosen = Levers(block_route=True, spread=True)
    assert chosen.block_route and chosen.spread and not chosen.names
    assert chosen.label() == "spread,block-route" == parse_levers("block-route,spread").label()
    assert parse_levers("+spread,+across") == DEFAULT.replace(spread=True, across=True)
    assert parse_levers("-replies") == DEFAULT.replace(replies=False)
    assert hash(parse_levers("none")) == hash(Levers()) and Levers() != DEFAULT


def test_bench_run_lists_the_registered_levers() -> None:
    shown = subprocess.run([str(NOTES_BIN), "bench", "run", "--levers", "list"],
                           capture_output=True, text=True, check=True).stdout
    rows = {line.split()[0]: line.split()[1] for line in shown.splitlines()[:len(NAMES)]}
    assert rows == {s.name: "on" if s.default else "off" for s in REGISTRY}
    for stage in REGISTRY:
        assert stage.summary in shown
