"""The coverage lever's line terms are made as the index reads a note and kept in
``lines.sqlite``, so a later process (a cold CLI call) re-ranks without reading or stemming
the candidates again. The file is only a cache: a bad value or a damaged file means the
terms are made again from the note, never a wrong rank nor an error."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import cast

import pytest
from test_levers import offsite_sessions

from conftest import NOTES_BIN
from memory import Notes, load_config
from memory.retrieval.coverage import LINES_FILE, LineCoverage, LineTerms, note_lines
from memory.retrieval.ladder import Ladder
from memory.state.store import LoadedNote

NOTE_IDS = ("work/other", "work/scattered", "work/together")
HAS_TANTIVY = importlib.util.find_spec("tantivy") is not None


class NoReads:
    """A ladder that fails the test if a note is read: the terms must come from the file."""

    def load(self, note_id: str) -> LoadedNote:
        raise AssertionError(f"{note_id} was read")


def covering(root: Path) -> Notes:
    return Notes(dataclasses.replace(load_config(root), levers="+coverage"),
                 notify=lambda _: None)


def rows(path: Path) -> dict[str, str]:
    db = sqlite3.connect(path)
    try:
        return dict(db.execute("SELECT h, terms FROM lines").fetchall())
    finally:
        db.close()


def made(notes: Notes) -> dict[str, tuple[str, LineTerms]]:
    """Each note's digest and its line terms made from its text."""
    loaded = {n: notes._ladder.load(n) for n in NOTE_IDS}
    stem = notes.index.stem_terms
    return {n: (got.digest, note_lines(got.note, stem)) for n, got in loaded.items()}


def test_the_index_makes_line_terms_that_a_cold_cli_call_uses(tmp_path: Path) -> None:
    """`notes suggest` with the lever on builds the index, which makes every note's line
    terms and writes them; a later process gets them from the file, reading no note."""
    root = offsite_sessions(tmp_path / "notes")
    state = tmp_path / "state"
    env = {**os.environ, "NOTES_DIR": str(root), "NOTES_STATE_DIR": str(state),
           "NOTES_LEVERS": "+coverage"}
    runs = [subprocess.run([str(NOTES_BIN), "suggest", "offsite budget"], env=env,
                           capture_output=True, text=True, timeout=120) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0] and runs[0].stdout == runs[1].stdout
    assert runs[0].stdout.index("work/together") < runs[0].stdout.index("work/scattered")
    assert len(rows(state / LINES_FILE)) == len(NOTE_IDS)
    notes = covering(root)
    try:
        expected = made(notes)
        stem, stemming = notes.index.stem_terms, notes.index.stemming()
    finally:
        notes.close()
    cold = LineCoverage(stem, stemming, state / LINES_FILE)
    try:
        for note_id, (digest, terms) in expected.items():
            assert cold.line_terms(cast(Ladder, NoReads()), note_id, digest) == terms
    finally:
        cold.close()


def test_a_store_without_the_lever_makes_no_line_terms(tmp_path: Path) -> None:
    root = offsite_sessions(tmp_path / "notes")
    notes = Notes(dataclasses.replace(load_config(root), levers="-coverage"),
                  notify=lambda _: None)
    try:
        notes.suggest("offsite budget", 3)
    finally:
        notes.close()
    assert not (notes.config.state_dir / LINES_FILE).exists()


def test_a_bad_value_in_the_file_is_made_again(tmp_path: Path) -> None:
    root = offsite_sessions(tmp_path / "notes")
    notes = covering(root)
    try:
        notes.index.refresh()  # no suggest: the index alone makes the terms
        expected = made(notes)
    finally:
        notes.close()
    path = notes.config.state_dir / LINES_FILE
    assert len(rows(path)) == len(NOTE_IDS)
    (key,) = [k for k in rows(path) if ":work/together:" in k]
    good = rows(path)[key]
    for bad in ("not json", '{"title": "x"}', good.replace('"lines":', '"lines":-'),
                good.replace('"where":{', '"where":{"offsit":[99],'), 7):
        db = sqlite3.connect(path)
        with db:
            db.execute("UPDATE lines SET terms = ? WHERE h = ?", (bad, key))
        db.close()
        again = covering(root)
        try:
            digest, terms = expected["work/together"]
            assert again._ladder.line_coverage().line_terms(
                again._ladder, "work/together", digest) == terms, bad
            assert again.suggest("offsite budget", 3).hits[0].note == "work/together"
        finally:
            again.close()


def test_a_damaged_file_is_started_anew(tmp_path: Path) -> None:
    root = offsite_sessions(tmp_path / "notes")
    state = load_config(root).state_dir
    state.mkdir(parents=True, exist_ok=True)
    (state / LINES_FILE).write_bytes(b"this is not a database" * 200)
    notes = covering(root)
    try:
        assert notes.suggest("offsite budget", 3).hits[0].note == "work/together"
    finally:
        notes.close()
    assert len(rows(state / LINES_FILE)) == len(NOTE_IDS)


def test_an_edited_note_gets_new_terms_in_the_file(tmp_path: Path) -> None:
    """The file keys terms by the note's content: after an edit the next process makes
    them anew from the new text (and keeps both until the file is started anew)."""
    root = offsite_sessions(tmp_path / "notes")
    first = covering(root)
    try:
        assert first.suggest("offsite budget", 3).hits[0].note == "work/together"
    finally:
        first.close()
    path = root / "work/together.md"
    path.write_text(path.read_text(encoding="utf-8").replace(
        "we cut the offsite budget in half", "we cut the offsite\n- Cy: budget in half"),
        encoding="utf-8")
    second = covering(root)
    try:
        assert second.suggest("offsite budget", 3).hits[0].note == "work/scattered"
    finally:
        second.close()
    assert len(rows(second.config.state_dir / LINES_FILE)) == len(NOTE_IDS) + 1


@pytest.mark.skipif(not HAS_TANTIVY, reason="the tantivy extra is not installed")
def test_each_backend_stems_with_its_own_analyzer_and_keeps_its_own_terms(
        tmp_path: Path) -> None:
    """With tantivy the lever stems with tantivy's analyzer (no Whoosh loaded) and ranks
    alike; the terms each backend made are kept apart in the file, so a store that changes
    backend never compares one stemmer's terms with the other's."""
    root = offsite_sessions(tmp_path / "notes")
    firsts, stemmings = [], []
    for backend in ("whoosh", "tantivy"):
        notes = Notes(dataclasses.replace(load_config(root), backend=backend,
                                          levers="+coverage"), notify=lambda _: None)
        try:
            firsts.append(notes.suggest("offsite budget", 3).hits[0].note)
            stemmings.append(notes.index.stemming())
        finally:
            notes.close()
    assert firsts == ["work/together", "work/together"]
    assert stemmings[0] != stemmings[1]
    keys = rows(load_config(root).state_dir / LINES_FILE)
    assert sorted({key.split(":")[1] for key in keys}) == sorted(stemmings)
    assert len(keys) == 2 * len(NOTE_IDS)
