"""What a cold process reads to open a Whoosh index (memory/index/whoosh/known.py, schema.py,
columns.py): the copy of what the index holds of each note, used only while it is of the
index's generation; the schema this version builds instead of the pickled one; stored-field
offsets summed in C. Each gives the answers reading the index itself gives."""

from __future__ import annotations

import dataclasses
import json
from array import array
from pathlib import Path

import pytest
from whoosh import index as whoosh_index

from memory import Notes, load_config
from memory.index.whoosh.columns import running_offsets
from memory.index.whoosh.known import KNOWN_FILE
from memory.index.whoosh.schema import build_schema


def whoosh_notes(store: Path) -> Notes:
    config = dataclasses.replace(load_config(store), backend="whoosh", usage_log=False)
    return Notes(config, notify=lambda _: None)


def kept(notes: Notes) -> dict[str, object]:
    data: dict[str, object] = json.loads((notes.index.dir / KNOWN_FILE).read_text())
    return data


def add_line(store: Path, note: str, line: str) -> None:
    path = store / f"{note}.md"
    path.write_text(path.read_text() + f"\n- {line}\n")


def test_a_cold_process_takes_what_the_index_holds_from_the_kept_copy(store_dir: Path) -> None:
    first = whoosh_notes(store_dir)
    assert first.refresh_index().indexed == []
    first.close()
    copy = kept(first)
    rows = copy["notes"]
    assert isinstance(rows, list) and len(rows) == len(list(store_dir.rglob("*.md")))
    # A copy saying the index holds another mtime for one note: a process that uses the
    # copy re-indexes that note (one that read the index would find nothing to do).
    fields = copy["fields"]
    assert isinstance(fields, list)
    at = fields.index("mtime_ns")
    rows[0][at] -= 1
    (first.index.dir / KNOWN_FILE).write_text(json.dumps(copy))
    second = whoosh_notes(store_dir)
    assert second.refresh_index().indexed == [rows[0][0]]
    second.close()


def test_a_copy_of_another_generation_is_read_again_and_replaced(store_dir: Path) -> None:
    notes = whoosh_notes(store_dir)
    notes.refresh_index()
    notes.close()
    before = kept(notes)["stamp"]
    add_line(store_dir, "glossary", "Ornitorrinco: a test word.")
    writer = whoosh_notes(store_dir)
    assert writer.refresh_index().indexed == ["glossary"]  # a commit: a new generation
    writer.close()
    cold = whoosh_notes(store_dir)
    assert cold.refresh_index().indexed == []  # the stale copy was not taken as the index
    assert [h.note for h in cold.suggest("ornitorrinco").hits] == ["glossary"]
    cold.close()
    after = kept(cold)["stamp"]
    assert isinstance(before, list) and isinstance(after, list) and after[0] > before[0]


@pytest.mark.parametrize("damage", ["garbage", "empty", "foreign-types", "short-row",
                                    "other-fields"])
def test_a_damaged_copy_is_ignored_and_replaced(store_dir: Path, damage: str) -> None:
    notes = whoosh_notes(store_dir)
    notes.refresh_index()
    notes.close()
    path = notes.index.dir / KNOWN_FILE
    whole = kept(notes)
    copy = kept(notes)
    rows = copy["notes"]
    assert isinstance(rows, list)
    if damage == "garbage":
        path.write_bytes(b"\x00\xffnot json")
    elif damage == "empty":
        path.write_text("")
    else:
        if damage == "foreign-types":
            rows[0][2] = "many"  # tokens
        elif damage == "short-row":
            rows[0] = rows[0][:3]
        else:
            copy["fields"] = ["note_id"]
        path.write_text(json.dumps(copy))
    cold = whoosh_notes(store_dir)
    assert cold.refresh_index().indexed == []
    cold.close()
    assert kept(cold) == whole  # replaced by what the index holds


def test_the_schema_an_index_is_opened_with_is_the_one_it_holds(store_dir: Path) -> None:
    notes = whoosh_notes(store_dir)
    notes.refresh_index()
    folder = notes.index.dir
    notes.close()
    stored = whoosh_index.open_dir(str(folder)).schema  # unpickled from the table of contents
    built = build_schema()
    assert stored.names() == built.names()
    samples = ["Los despliegues del canary fallaron; rollback a las 14:05 con `kubectl`.",
               "Running the migrations ran twice: déjà vu, naïve café, ＦＵＬＬ width 42"]
    for name in built.names():
        mine, theirs = built[name], stored[name]
        assert type(theirs) is type(mine)
        assert (theirs.stored, theirs.unique, theirs.scorable) == \
            (mine.stored, mine.unique, mine.scorable)
        assert getattr(theirs, "field_boost", 1.0) == getattr(mine, "field_boost", 1.0)
        if mine.analyzer is not None:
            for text in samples:
                assert [t.text for t in theirs.analyzer(text)] == \
                    [t.text for t in mine.analyzer(text)]


def test_running_offsets_are_whooshs_own() -> None:
    for lengths in ([], [0], [5], [3, 0, 7, 1], list(range(50_000))):
        expected = array("L")
        base = 0
        for length in lengths:  # Whoosh's loop (whoosh/columns.py, VarBytesColumn.Reader)
            expected.append(base)
            base += length
        assert running_offsets(array("L", lengths)) == expected
