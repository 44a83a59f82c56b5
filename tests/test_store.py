"""The store: confinement of note ids, atomic writes, concurrent writers, history safety."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import worker_processes
from memory import InvalidArgument, InvalidNoteId, NoteNotFound, Notes, load_config
from memory.model.note import parse_note
from memory.state import store as store_module
from memory.state.store import validate_note_id

HOSTILE_IDS = [
    "../outside", "../../etc/passwd", "a/../../b", "/etc/passwd", "C:\\Windows\\x", "a\\b",
    "a/./b", "", "   ", "a//b", ".hidden", "a/.notes/index", "name\x00.md", "tab\tname",
    "x" * 300, "con", "aux.md", "nul/x", "a/", "caf\u0065\u0301",  # decomposed é: not NFC
    "zero\u200bwidth", "rtl\u202eevil", "trailing.", "a /b",
]


@pytest.mark.parametrize("bad", HOSTILE_IDS, ids=repr)
def test_hostile_ids_are_refused(bad: str) -> None:
    with pytest.raises(InvalidNoteId) as info:
        validate_note_id(bad)
    assert "notes list" in str(info.value) or "note id" in str(info.value)


@pytest.mark.parametrize("good", ["a", "infra/search", "people/lucía", "2026 plan", "v1.2"])
def test_ordinary_ids_are_accepted(good: str) -> None:
    assert validate_note_id(good + ".md") == good


def test_symlink_leaving_the_store_is_refused(notes: Notes, tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.md").write_text("---\ntitle: Secret\n---\n# Secret\n\n## State\n- pw\n")
    os.symlink(outside, notes.config.notes_dir / "escape")
    os.symlink(outside / "key.md", notes.config.notes_dir / "leak.md")
    for note_id in ("escape/key", "leak"):
        with pytest.raises(InvalidNoteId, match="outside the store"):
            notes.read_section(note_id, "state")
        with pytest.raises(InvalidNoteId):
            notes.append_history(note_id, "x", "y")
    assert "leak" not in notes.store.note_ids()
    assert not any(h.note.startswith("escape") for h in notes.suggest("secret pw").hits)


def test_unknown_note_names_the_closest(notes: Notes) -> None:
    with pytest.raises(NoteNotFound) as info:
        notes.section_map("howto/deploy-prod")
    assert "howto/deploy-production" in str(info.value)


def test_a_note_is_parsed_again_only_when_its_bytes_change(notes: Notes) -> None:
    """The store keeps the notes it parsed by their bytes' hash (recall reads dozens a
    call): an unchanged file is not parsed twice, and a careless editor's rewrite with the
    same size and the old time stamps is still read anew."""
    path = notes.store.path_for("infra/redis")
    first = notes.store.load("infra/redis")
    assert notes.store.load("infra/redis") is first
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    changed = text.replace("Redis", "Xedis", 1)
    assert changed != text and len(changed.encode()) == before.st_size
    path.write_text(changed, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    again = notes.store.load("infra/redis")
    assert again is not first and again.note.text == changed and again.digest != first.digest
    assert notes.section_map("infra/redis").title == again.note.title


def test_the_parsed_notes_kept_are_bounded_in_bytes(notes: Notes,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A store of huge notes must not keep hundreds of them parsed in a long-running
    server: past PARSED_BYTES the oldest go, and a note bigger than that is never kept."""
    monkeypatch.setattr(store_module, "PARSED_BYTES", 6_000)
    store = notes.store
    sizes = {n: store.path_for(n).stat().st_size for n in store.note_ids()}
    small = [n for n, size in sizes.items() if size < 3_000][:3]
    big = next(n for n, size in sizes.items() if size > 6_000)
    loaded = {n: store.load(n) for n in small}
    assert sum(sizes[n] for n in small) > 6_000  # the three do not fit together
    assert store.load(small[-1]) is loaded[small[-1]]  # the latest is kept
    assert store.load(small[0]) is not loaded[small[0]]  # the oldest went
    assert store.load(big) is not store.load(big)  # too big to keep


def test_writes_are_atomic_and_leave_no_temp_files(notes: Notes) -> None:
    notes.create_note("scratch/atomic", "Atomic", ["t"])
    for i in range(5):
        notes.append_history("scratch/atomic", f"Entry {i}", f"body {i}", date=f"2026-01-0{i + 1}")
    folder = notes.config.notes_dir / "scratch"
    assert sorted(p.name for p in folder.iterdir()) == ["atomic.md"]
    note = parse_note((folder / "atomic.md").read_text())
    assert [e.id for e in note.entries] == [f"2026-01-0{i + 1}-entry-{i}" for i in range(5)]


def _append_many(store: str, state: str, worker: int, count: int) -> None:
    notes = Notes(load_config(store, state), notify=lambda _: None)
    for i in range(count):
        notes.append_history("shared/log", f"worker {worker} entry {i}", f"from {worker}: {i}",
                             date="2026-11-30")
    notes.close()


@pytest.mark.slow(15)
def test_four_processes_appending_lose_nothing(notes: Notes) -> None:
    notes.create_note("shared/log", "Shared log", [])
    ctx = worker_processes()
    args = (str(notes.config.notes_dir), str(notes.config.state_dir))
    workers = [ctx.Process(target=_append_many, args=(*args, w, 25)) for w in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=300)
        assert w.exitcode == 0
    note = parse_note((notes.config.notes_dir / "shared/log.md").read_text())
    assert len(note.entries) == 100
    titles = {e.title for e in note.entries}
    assert titles == {f"worker {w} entry {i}" for w in range(4) for i in range(25)}
    assert not [p for p in note.problems if p.severity == "error"]


@pytest.mark.slow(35)
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bodies=st.lists(st.text(max_size=80), min_size=1, max_size=5))
def test_appends_never_lose_earlier_entries(notes: Notes, bodies: list[str]) -> None:
    note_id = "howto/deploy-production"
    path = notes.store.path_for(note_id)
    before = [e.text.rstrip() for e in parse_note(path.read_text()).entries]
    for body in bodies:
        try:
            notes.append_history(note_id, "Fuzz", body, date="2026-11-30")
        except InvalidArgument:
            continue
    after = [e.text.rstrip() for e in parse_note(path.read_text()).entries]
    assert after[: len(before)] == before
