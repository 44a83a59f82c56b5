"""The mixed writers of test_editors.py (the CLI, an MCP server and two editors on the same
notes) with the tantivy backend (NOTES_BACKEND=tantivy) in every process and `notes watch`
keeping its index fresh.

Besides what test_editors.py checks (no entry lost or duplicated, header and state intact,
`notes check` clean), the index must hold every note as it ends on disk, without the test
refreshing it: only the watcher (and the writers' own re-indexing) may have; and a search
for the writers' words finds exactly the entries they wrote.

Duration: NOTES_STRESS_SECONDS of writing (default 4; docs/reliability.md was made with 60).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from memory import Notes, load_config
from memory.index import parse_query
from memory.model.note import parse_note
from stress.helpers import NOTES_BIN, Figures
from stress.test_editors import _cli_writer, _editor, _mcp_writer

WRITERS = {"cli": "cli", "mcp": "mcp", "editor": "saved"}  # a word of each writer's entries


def _watch(store: Path, log: Path) -> subprocess.Popen[bytes]:
    with open(log, "w") as out:
        process = subprocess.Popen([str(NOTES_BIN), "watch"], stderr=out, stdout=out,
                                   env={**os.environ, "NOTES_DIR": str(store)})
    deadline = time.monotonic() + 120
    while "watching" not in log.read_text():
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)
    return process


def _stale(notes: Notes, names: list[str]) -> list[str]:
    """The notes whose indexed digest is not their file's (read from the index as it is:
    nothing is refreshed here)."""
    stored = notes.index.run_search(lambda s: {n: s.stored_note(n) for n in names})
    return [n for n in names if (found := stored[n]) is None or found.digest != hashlib
            .sha256(notes.store.path_for(n).read_bytes()).hexdigest()]


def _indexed_entries(notes: Notes, word: str) -> set[str]:
    hits, _ = notes.index.run_search(
        lambda s: s.search_parts(parse_query(word), "section", None))
    return {hit.doc.id for hit in hits if hit.doc.note_id.startswith("mixed/")
            and hit.doc.section not in ("state", "history")}  # entries only


@pytest.mark.slow(25)
def test_tantivy_and_watch_under_mixed_writers(store_dir: Path, tmp_path: Path,
                                               figures: Figures,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Mixed writers with the tantivy backend and `notes watch` running"""
    pytest.importorskip("tantivy")
    monkeypatch.setenv("NOTES_BACKEND", "tantivy")  # for this process and every child
    count = 4
    names = [f"mixed/note-{n}" for n in range(count)]
    notes = Notes(load_config(store_dir), notify=lambda _: None)
    assert type(notes.index).__module__.startswith("memory.index.tantivy")
    for name in names:
        notes.create_note(name, name.split("/")[1].title(), ["mixed"])
        notes.write_state(name, "- the first state")
    watch = _watch(store_dir, tmp_path / "watch.log")
    written: list[str] = []
    refused: list[str] = []
    errors: list[str] = []
    started = time.monotonic()
    try:
        editors = {mode: _editor(store_dir / "mixed", [n.split("/")[1] for n in names], mode,
                                 tmp_path / f"{mode}.txt") for mode in ("rename", "truncate")}
        cli = threading.Thread(target=_cli_writer, args=(store_dir, names, written, refused,
                                                         errors))
        cli.start()
        asyncio.run(_mcp_writer(store_dir, names, tmp_path / "mcp.log", written, refused,
                                errors))
        cli.join()
        for editor in editors.values():
            assert editor.wait(timeout=120) == 0
        writing = time.monotonic() - started
        deadline = time.monotonic() + 60  # the watcher re-indexes within a second or so
        while (stale := _stale(notes, names)) and time.monotonic() < deadline:
            time.sleep(0.2)
        caught_up = time.monotonic() - started - writing
    finally:
        watch.terminate()
        watch.wait(timeout=60)
    assert errors == []
    assert stale == [], f"the index lags the files of {stale}"
    saved = [line for mode in editors for line in (tmp_path / f"{mode}.txt").read_text()
             .split()]
    titles: list[str] = []
    on_disk: dict[str, set[str]] = {writer: set() for writer in WRITERS}
    for name in names:
        note = parse_note(notes.store.path_for(name).read_text())
        assert not [p for p in note.problems if p.severity == "error"], (name, note.problems)
        assert note.state is not None and note.meta.get("title") == name.split("/")[1].title()
        titles += [e.title for e in note.entries]
        for entry in note.entries:
            writer = entry.title.split("-")[0]
            on_disk["editor" if writer in ("rename", "truncate") else writer].add(
                f"{name}#{entry.id}")
    expected = [t for t in written if not t.startswith("state:")] + saved
    lost = sorted(set(expected) - set(titles))
    duplicated = sorted({t for t in titles if titles.count(t) > 1})
    assert lost == [] and duplicated == []
    for writer, word in WRITERS.items():
        assert _indexed_entries(notes, word) == on_disk[writer], writer
    assert notes.check() == []
    notes.close()
    log = (tmp_path / "watch.log").read_text()
    assert "Traceback" not in log and "Error" not in log, log[-3000:]
    assert "Traceback" not in (tmp_path / "mcp.log").read_text()
    figures.add("backend / notes / seconds of writing", f"tantivy / {count} / {writing:.0f} s")
    figures.add("tool entries and states written / editor saves",
                f"{len(written)} / {len(saved)}")
    figures.add("entries lost / duplicated", f"{len(lost)} / {len(duplicated)}")
    figures.add("`notes watch` re-index passes (lines in its log)",
                log.count("re-indexed:"))
    figures.add("index caught up with the files after the last write in",
                f"{caught_up:.1f} s")
    figures.add("entries the index finds by each writer's word / on disk",
                " · ".join(f"{w} {len(on_disk[w])} / {len(on_disk[w])}" for w in WRITERS))
