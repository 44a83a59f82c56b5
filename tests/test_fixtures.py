"""The shared fixtures keep their promises: the copied index is fresh, the CLI runners agree."""

from __future__ import annotations

from pathlib import Path

from conftest import EXAMPLE, SMALL_NOTES, RunCli
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


def test_the_small_store_has_a_fresh_index_of_its_ten_notes(small_store_dir: Path) -> None:
    messages: list[str] = []
    notes = Notes(load_config(small_store_dir, env={}), notify=messages.append)
    try:
        report = notes.index.refresh()
        assert (report.indexed, report.removed, report.rebuilt) == ([], [], False)
        assert sorted(n.note for n in notes.list_notes()) == sorted(SMALL_NOTES)
        assert report.unchanged == len(SMALL_NOTES) == 10
        for note in SMALL_NOTES:  # the example's notes, as they are there
            assert (small_store_dir / f"{note}.md").read_bytes() == \
                (EXAMPLE / f"{note}.md").read_bytes()
        assert {h.note for h in notes.suggest("redis eviction").hits[:2]} == {
            "infra/redis", "incidents/redis-eviction-2026-03"}
        assert messages == []  # no "building the index"
    finally:
        notes.close()


def test_the_unindexed_small_store_has_no_state(unindexed_small_store: Path) -> None:
    assert not (unindexed_small_store / ".notes").exists()
    assert sorted(str(p.relative_to(unindexed_small_store).with_suffix(""))
                  for p in unindexed_small_store.rglob("*.md")) == sorted(SMALL_NOTES)


def test_in_process_and_real_cli_answer_alike(run_cli: RunCli, run_cli_process: RunCli) -> None:
    for args in (["suggest", "redis eviction", "--json"], ["read", "nope/missing"],
                 ["suggest", "x", "--limit", "0"]):
        inside, real = run_cli(*args), run_cli_process(*args)
        assert (inside.returncode, inside.stdout, inside.stderr) == \
            (real.returncode, real.stdout, real.stderr), args
