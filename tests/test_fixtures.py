"""The shared fixtures keep their promises: the copied index is fresh, the CLI runners agree."""

from __future__ import annotations

from pathlib import Path

from conftest import RunCli
from memory import Notes, load_config


def test_the_copied_store_has_a_fresh_index(store_dir: Path) -> None:
    messages: list[str] = []
    notes = Notes(load_config(store_dir, env={}), notify=messages.append)
    try:
        report = notes.index.refresh()
        notes_on_disk = len(list(store_dir.rglob("*.md")))
        assert (report.indexed, report.removed, report.rebuilt) == ([], [], False)
        assert report.unchanged == notes_on_disk > 50
        assert notes.suggest("redis eviction").hits
        assert messages == []  # no "building the index"
    finally:
        notes.close()


def test_the_unindexed_store_has_no_state(unindexed_store: Path) -> None:
    assert not (unindexed_store / ".notes").exists()
    assert len(list(unindexed_store.rglob("*.md"))) > 50


def test_in_process_and_real_cli_answer_alike(run_cli: RunCli, run_cli_process: RunCli) -> None:
    for args in (["suggest", "redis eviction", "--json"], ["read", "nope/missing"],
                 ["suggest", "x", "--limit", "0"]):
        inside, real = run_cli(*args), run_cli_process(*args)
        assert (inside.returncode, inside.stdout, inside.stderr) == \
            (real.returncode, real.stdout, real.stderr), args
