"""`notes delete` and `notes move` through the real CLI (docs/cli.md, "Managing notes"): a
deleted note goes to a dated trash in the state folder and comes back with --restore, out of
the index and of what `notes check` expects meanwhile; a moved note keeps its recorded
history, its usage rows, the links to it and its project can be changed."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from conftest import NOTES_BIN, copy_initialised
from memory.model.note import parse_note


def notes(*args: str, store: Path, input: str | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")} | (env or {})
    return subprocess.run([str(NOTES_BIN), "--notes", str(store), *args], cwd=store.parent,
                          env=full, input=input, capture_output=True, text=True, timeout=120)


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, initialised_store: Path) -> Path:
    """The store every test starts from, made once for the module through the real CLI
    (eight commands, ~1.5 s of CPU): two notes with a state and an entry each, a suggest and
    a read in the usage log. Its notes record the folder it was made from as their project;
    the tests' copies sit in that same folder (``store``), so their commands run from the
    notes' project as the store's maker's did. Its home and XDG folders are its own
    (conftest's ``isolated_env`` does not exist yet at module scope)."""
    folder = tmp_path_factory.mktemp("manage")
    env = {"HOME": str(folder / "home"), **{f"XDG_{kind}_HOME": str(folder / kind.lower())
                                            for kind in ("CACHE", "DATA", "CONFIG", "STATE")}}
    store = copy_initialised(initialised_store, folder / "made")  # as `notes init` makes it
    for note, title, state in (("shop/deploy", "Deploys", "Deploys run from the release "
                                "branch with blue-green switching.\n"),
                               ("people/ana", "Ana", "Ana owns the payment service.\n")):
        ok(notes("new", note, "--title", title, store=store, env=env))
        ok(notes("state", note, store=store, input=state, env=env))
        ok(notes("log", note, "--title", "First entry", "--date", "2026-03-01", store=store,
                 input=f"Started {note}.\n", env=env))
    ok(notes("suggest", "blue-green deploys", store=store, env=env))
    ok(notes("read", "shop/deploy", "state", store=store, env=env))
    return store


@pytest.fixture
def store(made: Path, request: pytest.FixtureRequest) -> Path:
    """A copy of ``made`` of this test's own (every file's mtime kept, so its index is
    fresh), beside it."""
    return shutil.copytree(made, made.parent / request.node.name, copy_function=shutil.copy2)


def suggested(store: Path, query: str) -> list[str]:
    return [h["note"] for h in json.loads(ok(notes("suggest", query, "--json",
                                                    store=store)))["hits"]]


def test_delete_goes_to_the_trash_and_restore_brings_it_back(store: Path) -> None:
    text = (store / "shop" / "deploy.md").read_text()
    said = ok(notes("delete", "shop/deploy", store=store))
    assert not (store / "shop" / "deploy.md").exists()
    trashed = list((store / ".notes" / "trash").glob("*/shop/deploy.md"))
    assert len(trashed) == 1 and trashed[0].read_text() == text
    assert f"deleted shop/deploy: {trashed[0]}" in said and "--restore shop/deploy" in said
    assert "shop/deploy" not in suggested(store, "blue-green deploys")
    assert "shop/deploy" not in ok(notes("list", store=store))
    ok(notes("check", "--strict", store=store))  # nothing expected of it any more

    ok(notes("delete", "--restore", "shop/deploy", store=store))
    assert (store / "shop" / "deploy.md").read_text() == text
    assert not list((store / ".notes" / "trash").glob("*/shop/deploy.md"))
    assert suggested(store, "blue-green deploys")[0] == "shop/deploy"
    ok(notes("check", "--strict", store=store))
    again = notes("delete", "--restore", "shop/deploy", store=store)
    assert again.returncode == 1 and "is not in the trash" in again.stderr
    missing = notes("delete", "shop/deplyo", store=store)
    assert missing.returncode == 1 and "shop/deploy" in missing.stderr  # the closest id


def test_move_keeps_history_usage_and_links(store: Path) -> None:
    os.symlink("deploy.md", store / "shop" / "deploys.md")
    said = ok(notes("move", "shop/deploy", "howto/deploy", store=store))
    assert "moved howto/deploy" in said and "renamed from shop/deploy" in said
    assert not (store / "shop" / "deploy.md").exists()
    assert (store / "howto" / "deploy.md").is_file()
    assert os.path.realpath(store / "shop" / "deploys.md") == \
        os.path.realpath(store / "howto" / "deploy.md")
    assert "blue-green" in ok(notes("read", "shop/deploys", "state", store=store))
    assert suggested(store, "blue-green deploys")[0] == "howto/deploy"
    assert "error" not in ok(notes("check", store=store))  # the link is a warning
    with sqlite3.connect(store / ".notes" / "usage.sqlite") as db:
        named = {row[0] for row in db.execute("SELECT note FROM calls WHERE note != ''")}
        ranked = " ".join(row[0] for row in db.execute("SELECT ranked FROM calls"))
    assert "howto/deploy" in named and "shop/deploy" not in named
    assert '"shop/deploy"' not in ranked and '"howto/deploy"' in ranked

    # the ledger followed: an entry taken out by hand is noticed under the new id
    path = store / "howto" / "deploy.md"
    path.write_text(path.read_text().replace("Started shop/deploy.\n", ""))
    checked = ok(notes("check", store=store))
    assert "howto/deploy.md" in checked and "[history-changed]" in checked

    taken = notes("move", "people/ana", "howto/deploy", store=store)
    assert taken.returncode == 1 and "already exists" in taken.stderr
    assert (store / "people" / "ana.md").is_file()


def test_move_changes_the_project(store: Path) -> None:
    ok(notes("move", "people/ana", "--project", "github.com/ana/shop", store=store))
    note = parse_note((store / "people" / "ana.md").read_text())
    assert note.meta["project"] == "github.com/ana/shop" and note.title == "Ana"
    assert "people/ana" in ok(notes("list", "--project", "github.com/ana/shop",
                                    store=store))
    ok(notes("move", "people/ana", "--project", "none", store=store))
    assert "project" not in parse_note((store / "people" / "ana.md").read_text()).meta
    ok(notes("check", "--strict", store=store))
    nothing = notes("move", "people/ana", store=store)
    assert nothing.returncode == 1 and "give the new id" in nothing.stderr
