"""How Whoosh indexes are written (memory/index/whoosh/build.py).

A whole new index built by worker processes must answer exactly as one built in one process,
and a worker that dies must neither hang the build nor leave it short: the build is done
again in one process. A commit of a few notes merges no segments until MERGE_AT small ones
wait, and `tidy` (run by `notes index` and `notes watch`) merges them without changing any
answer."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
from whoosh.multiproc import SubWriterTask

from conftest import NOTES_BIN, SMALL_NOTES, copy_notes
from memory import Notes, load_config
from memory.index.whoosh import build as whoosh_build
from memory.index.whoosh.build import build_procs
from memory.index.whoosh.workers import GuardedMpWriter

GOLDEN = [json.loads(line) for line in
          (Path(__file__).parent / "golden_routing.jsonl").read_text().splitlines() if line]
needs_fork = pytest.mark.skipif(not whoosh_build.parallel_safe(),
                                reason="worker processes start by fork only")


def built_notes(store: Path, state: Path, procs: int, messages: list[str]) -> Notes:
    config = dataclasses.replace(load_config(store, state), backend="whoosh", usage_log=False)
    notes = Notes(config, notify=messages.append)
    notes.index.build_procs = procs
    notes.refresh_index(rebuild=True)
    return notes


def prebuilt_notes(store: Path) -> Notes:
    """``store``'s own index as the ``store_dir`` fixture gives it (a copy of the example's,
    built once per session): for tests of what later commits do, which need an index of the
    example to start from, not a build of their own."""
    config = dataclasses.replace(load_config(store), backend="whoosh", usage_log=False)
    return Notes(config, notify=lambda _: None)


@dataclasses.dataclass(frozen=True)
class Built:
    """What the tests compare of an index: its segments, documents, answers and notes."""
    segments: int
    documents: int
    answers: list[object]
    notes: list[str]


def measured(notes: Notes) -> Built:
    built = Built(len(segment_files(notes)), notes.index.open().doc_count_all(), answers(notes),
                  [n.note for n in notes.list_notes()])
    notes.close()
    return built


@pytest.fixture(scope="module")
def one_process_build(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The small store's index (conftest.SMALL_NOTES) built in one process, once for the tests
    that compare a build by workers of the same notes with it (they only read it)."""
    store = copy_notes(tmp_path_factory.mktemp("one-process") / "notes", SMALL_NOTES)
    return measured(built_notes(store, store.parent / "state", 1, []))


def answers(notes: Notes) -> list[object]:
    """Every golden question's hits and scores, the map of its gold note and what recall
    gathers for it, each in the order given: equal scores come in note-id and position
    order (memory.index.stored.tie_key), so not even their order may differ between
    builds. (The map only of a gold note the store holds: the small store has ten.)"""
    seen: list[object] = []
    held = {n.note for n in notes.list_notes()}
    for case in GOLDEN:
        hits = notes.suggest(case["question"], limit=8).hits
        seen.append([(round(h.score, 6), h.note) for h in hits])
        if case["note"] in held:
            section_map = notes.section_map(case["note"], query=case["question"])
            seen.append([(round(row.score or 0.0, 6), row.id, row.tokens)
                         for row in section_map.rows])
        recalled = notes.recall(case["question"], budget=600)
        seen.append([(group.note, group.ref, group.tokens) for group in recalled.groups])
    return seen


def segment_files(notes: Notes) -> list[str]:
    return sorted(p.name for p in Path(notes.index.dir).glob("*.seg"))


@pytest.mark.slow(8)
@needs_fork
def test_workers_build_the_same_index_as_one_process(unindexed_small_store: Path,
                                                     tmp_path: Path,
                                                     one_process_build: Built) -> None:
    serial = one_process_build
    parallel = measured(built_notes(unindexed_small_store, tmp_path / "two", 2, []))
    assert serial.segments == 1
    assert parallel.segments == 2  # one per worker: the parallel path ran
    assert parallel.documents == serial.documents
    assert parallel.answers == serial.answers
    assert parallel.notes == serial.notes


@pytest.mark.slow(8)
@needs_fork
def test_a_worker_that_dies_costs_a_second_build_not_documents(
        unindexed_small_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        one_process_build: Built) -> None:
    def die(self: SubWriterTask, filename: str, doc_count: int) -> None:
        os._exit(3)  # in the forked worker only: this process never calls it

    monkeypatch.setattr(SubWriterTask, "_process_file", die)
    messages: list[str] = []
    notes = built_notes(unindexed_small_store, tmp_path / "state", 2, messages)
    assert any("building the index again in this process" in m for m in messages), messages
    assert len(segment_files(notes)) == 1
    monkeypatch.undo()
    again = measured(notes)
    assert again.documents == one_process_build.documents
    assert again.answers == one_process_build.answers


@needs_fork
def test_cancel_stops_the_workers(tmp_path: Path) -> None:
    from whoosh import fields, index

    ix = index.create_in(str(tmp_path), fields.Schema(body=fields.TEXT))
    writer = GuardedMpWriter(ix, procs=2, multisegment=True, batchsize=10)
    for number in range(100):
        writer.add_document(body=f"document {number}")
    assert writer.tasks
    writer.cancel()
    assert not any(task.is_alive() for task in writer.tasks)


def test_one_process_where_forking_is_unsafe_or_does_not_pay() -> None:
    assert build_procs(whoosh_build.PARALLEL_MIN_NOTES - 1) == 1
    assert build_procs(10_000, requested=1) == 1
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:  # a server or `notes watch` has other threads: never fork there
        assert build_procs(10_000) == 1
        assert build_procs(10_000, requested=4) == 1
    finally:
        stop.set()
        other.join()


@needs_fork
def test_a_big_store_uses_every_core() -> None:
    assert build_procs(10_000) == whoosh_build.available_cores()
    assert build_procs(5, requested=2) == 2


@needs_fork
def test_a_build_leaves_no_thread_behind(unindexed_small_store: Path, tmp_path: Path) -> None:
    """Whoosh's queues start a feeder thread each; left running, they would make every later
    build in this process (a second `rebuild`, a test run) fall back to one process."""
    before = threading.active_count()
    notes = built_notes(unindexed_small_store, tmp_path / "state", 2, [])
    assert len(segment_files(notes)) == 2
    assert threading.active_count() == before
    notes.close()


def edit(store: Path, note: str, word: str) -> None:
    path = store / f"{note}.md"
    path.write_text(path.read_text(encoding="utf-8") + f"\n- Added {word}.\n", encoding="utf-8")


def small_count(notes: Notes) -> int:
    return len(whoosh_build.small_segments(list(notes.index.open()._segments())))


def test_quick_commits_merge_nothing_until_tidy_merges_them(store_dir: Path,
                                                            tmp_path: Path) -> None:
    notes = prebuilt_notes(store_dir)
    targets = ["infra/redis", "infra/ci-pipeline", "infra/terraform"]
    for number, note in enumerate(targets):
        edit(store_dir, note, f"zqquick{number}")
        notes.refresh_index()
        assert [h.note for h in notes.suggest(f"zqquick{number}").hits] == [note]
    assert small_count(notes) == len(targets)  # one per commit, none merged yet
    generation = notes.index.open().latest_generation()
    assert notes.tidy_index() == len(targets)
    assert small_count(notes) == 1  # merged into one (still small beside the build's)
    assert notes.tidy_index() == 0  # nothing left: and nothing written
    assert notes.index.open().latest_generation() == generation + 1
    for number, note in enumerate(targets):
        assert [h.note for h in notes.suggest(f"zqquick{number}").hits] == [note]
    # Deleted documents still count in BM25's statistics until their segment is merged, so
    # scores drift a little from a fresh build's (as before this change); the routing holds.
    reference = built_notes(store_dir, tmp_path / "reference", 1, [])
    assert first_notes(notes) == first_notes(reference)
    notes.close()
    reference.close()


def first_notes(notes: Notes) -> list[str]:
    return [notes.suggest(case["question"]).hits[0].note for case in GOLDEN]


def test_a_commit_merges_once_enough_small_segments_wait(store_dir: Path) -> None:
    notes = prebuilt_notes(store_dir)
    counts = []
    for number in range(whoosh_build.MERGE_AT):
        edit(store_dir, "infra/redis", f"zqmerge{number}")
        notes.refresh_index()
        counts.append(small_count(notes))
    assert counts[:-1] == list(range(1, whoosh_build.MERGE_AT))
    assert counts[-1] <= 1  # the commit that would make MERGE_AT merged them all
    assert all(notes.suggest(f"zqmerge{n}").hits for n in range(whoosh_build.MERGE_AT))
    notes.close()


def test_notes_index_tidies(store_dir: Path) -> None:
    notes = prebuilt_notes(store_dir)
    for number in range(2):
        edit(store_dir, "infra/redis", f"zqcli{number}")
        notes.refresh_index()
    assert small_count(notes) == 2
    notes.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    env |= {"NOTES_DIR": str(store_dir), "NOTES_BACKEND": "whoosh"}
    done = subprocess.run([NOTES_BIN, "index"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    after = prebuilt_notes(store_dir)
    assert small_count(after) == 1
    assert [h.note for h in after.suggest("zqcli1").hits] == ["infra/redis"]
    after.close()


def test_a_view_file_reads_like_bytesio_without_copying_the_view() -> None:
    import io
    import pickle

    from memory.index.whoosh.files import view_file

    data = pickle.dumps(["a", 1, {"b": 2.5}], 2) + b"line one\nline two\nlast"
    source = bytearray(data)
    ours, theirs = view_file(memoryview(source)), io.BytesIO(data)
    for handle in (ours, theirs):
        assert pickle.load(handle) == ["a", 1, {"b": 2.5}]
    assert ours.tell() == theirs.tell()
    assert ours.readline() == theirs.readline() == b"line one\n"
    assert list(ours) == list(theirs) == [b"line two\n", b"last"]
    for offset, whence in [(3, 0), (-4, 2), (2, 1), (0, 0)]:
        assert ours.seek(offset, whence) == theirs.seek(offset, whence)
        assert ours.read(5) == theirs.read(5)
    assert ours.read() == theirs.read() and ours.read(3) == theirs.read(3) == b""
    source[0:1] = b"X"  # the view is read in place: a change to its memory shows
    ours.seek(0)
    assert ours.read(1) == b"X"
