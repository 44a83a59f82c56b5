"""One conformance suite for every index backend (Whoosh, tantivy): what the ladder shows must
not depend on the backend. Golden routing, section scores, freshness after edits (library,
editor saves, other processes, the watcher), rebuild after damage or a version change, and
hostile queries that must never act as operators.

Each backend's index is built once per module and copied for each test.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import EXAMPLE, NOTES_BIN
from memory import Notes, load_config
from memory.config import Config
from memory.errors import ConfigError

HAS_TANTIVY = importlib.util.find_spec("tantivy") is not None
BACKENDS = ["whoosh", pytest.param("tantivy", marks=pytest.mark.skipif(
    not HAS_TANTIVY, reason="the tantivy extra is not installed"))]
GOLDEN = [json.loads(line) for line in
          (Path(__file__).parent / "golden_routing.jsonl").read_text().splitlines() if line]
INDEX_FOLDER = {"whoosh": "index", "tantivy": "index-tantivy"}
HOSTILE = ["redis NOT eviction", "redis AND eviction*", "title:redis (eviction",
           'redis "eviction', "redis^3 eviction~2", "[redis TO eviction]", "redis +eviction -x",
           "redis eviction {}", "redis\\ eviction /.*/", "redis eviction \x00"]


def config_for(store: Path, backend: str) -> Config:
    return dataclasses.replace(load_config(store), backend=backend, usage_log=False)


@pytest.fixture(scope="module", params=BACKENDS)
def built(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The example store with this backend's index built (once per module)."""
    backend = str(request.param)
    store = tmp_path_factory.mktemp(f"built-{backend}") / "notes"
    shutil.copytree(EXAMPLE, store, ignore=shutil.ignore_patterns(".*"))
    notes = Notes(config_for(store, backend), notify=lambda _: None)
    notes.refresh_index()
    notes.close()
    yield backend, store


@pytest.fixture
def copy(built: tuple[str, Path], tmp_path: Path) -> tuple[str, Path]:
    """A private copy of the built store (notes and index)."""
    backend, store = built
    target = tmp_path / "notes"
    shutil.copytree(store, target)
    return backend, target


def open_notes(store: Path, backend: str, messages: list[str] | None = None) -> Notes:
    sink = messages if messages is not None else []
    return Notes(config_for(store, backend), notify=sink.append)


def test_golden_questions_route_the_same(copy: tuple[str, Path]) -> None:
    backend, store = copy
    notes = open_notes(store, backend)
    misses = [case["question"] for case in GOLDEN
              if case["note"] not in [h.note for h in notes.suggest(
                  case["question"], limit=5).hits][:case["rank"]]]
    notes.close()
    assert not misses, f"{backend}: {misses}"


@pytest.mark.skipif(not HAS_TANTIVY, reason="the tantivy extra is not installed")
def test_backends_agree_on_notes_sections_and_words(store_dir: Path) -> None:
    """Same top note and matched words; the best section of one is among the other's two
    best; match counts within 10 % (stemmers differ on a few words)."""
    pair = {b: open_notes(store_dir, b) for b in ("whoosh", "tantivy")}
    for case in GOLDEN:
        found = {b: n.suggest(case["question"]) for b, n in pair.items()}
        assert found["whoosh"].hits[0].note == found["tantivy"].hits[0].note, case
        assert found["whoosh"].hits[0].matched == found["tantivy"].hits[0].matched, case
        low, high = sorted(f.total for f in found.values())
        assert high - low <= max(1, high // 10), case
        maps = {b: n.section_map(case["note"], case["question"]) for b, n in pair.items()}
        if maps["whoosh"].best:
            assert maps["whoosh"].best[0] in maps["tantivy"].best, case
            assert maps["tantivy"].best[0] in maps["whoosh"].best, case
    for notes in pair.values():
        notes.close()


def test_section_scores(copy: tuple[str, Path]) -> None:
    backend, store = copy
    notes = open_notes(store, backend)
    mapped = notes.section_map("howto/deploy-production", "rollback canary")
    assert mapped.best[0] == "2026-06-22-rollback-procedure-fixed"
    scores = {row.id: row.score for row in mapped.rows}
    assert "2026-07-16-deploy-dashboard" not in scores  # neither word: left out of the map
    assert mapped.omitted is not None and mapped.omitted.entries >= 1
    assert all(s is not None and s >= 0 for s in scores.values())
    assert {"header", "history"}.isdisjoint(mapped.best)
    assert notes.section_map("howto/deploy-production").rows[0].score is None
    notes.close()


def test_edits_on_disk_are_seen_by_the_next_suggest(copy: tuple[str, Path]) -> None:
    backend, store = copy
    notes = open_notes(store, backend)
    assert not notes.suggest("quetzalcoatl").hits
    path = store / "infra" / "redis.md"
    path.write_text(path.read_text().replace("## History", "- Quetzalcoatl hosts the cache.\n\n"
                                             "## History", 1))
    assert [h.note for h in notes.suggest("quetzalcoatl").hits] == ["infra/redis"]
    tmp = store / ".glossary.md.swp"
    tmp.write_text((store / "glossary.md").read_text() + "\n- Xylophone: a new term.\n")
    os.replace(tmp, store / "glossary.md")  # an editor's rename-save
    assert notes.suggest("xylophone").hits[0].note == "glossary"
    path.unlink()
    assert not notes.suggest("quetzalcoatl").hits
    report = notes.refresh_index()
    assert report.indexed == [] and report.removed == []
    notes.close()


def test_only_the_changed_note_is_reindexed(copy: tuple[str, Path]) -> None:
    backend, store = copy
    notes = open_notes(store, backend)
    total = len(notes.list_notes())
    path = store / "glossary.md"
    path.write_text(path.read_text() + "\n- Ornitorrinco: only this note changed.\n")
    report = notes.refresh_index()
    assert report.indexed == ["glossary"] and report.unchanged == total - 1
    os.utime(path)  # a new mtime, the same content: re-read, not re-indexed as changed
    assert notes.refresh_index().indexed in ([], ["glossary"])
    assert notes.refresh_index().indexed == []
    notes.close()


def test_writes_are_searchable_at_once(copy: tuple[str, Path]) -> None:
    backend, store = copy
    notes = open_notes(store, backend)
    result = notes.append_history("infra/redis", "Zanahoria cache test", "Zanahoria body.",
                                  "2026-12-01")
    assert notes.suggest("zanahoria").hits[0].note == "infra/redis"
    assert notes.section_map("infra/redis", "zanahoria").best[0] == result.section
    notes.write_state("infra/redis", "- Berenjena is the state now.\n")
    assert notes.suggest("berenjena").hits[0].note == "infra/redis"
    notes.close()


# Whoosh leaves a damaged TOC file open when it fails to read it (its own leak, reported as
# an unraisable ResourceWarning once the file object is collected).
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(("damage", "while_open"), [("truncate", False), ("garbage", True),
                                                    ("wipe", True)])
def test_damage_rebuilds_once(copy: tuple[str, Path], damage: str, while_open: bool) -> None:
    backend, store = copy
    messages: list[str] = []
    notes = open_notes(store, backend, messages)
    plain = [h.note for h in notes.suggest("redis eviction").hits]
    if not while_open:
        notes.close()
    _damage(store / ".notes" / INDEX_FOLDER[backend], damage)
    if not while_open:
        notes = open_notes(store, backend, messages)
    assert [h.note for h in notes.suggest("redis eviction").hits] == plain
    assert len([m for m in messages if "building the index" in m]) == 1, messages
    notes.close()


def _damage(folder: Path, how: str) -> None:
    if how == "wipe":
        shutil.rmtree(folder)
        return
    for path in folder.rglob("*"):
        if not path.is_file() or path.name.endswith(".lock") or path.name == "version.json":
            continue
        if how == "truncate":
            path.write_bytes(path.read_bytes()[:16])
        else:
            with open(path, "r+b") as handle:
                handle.write(b"\x00garbage" * (path.stat().st_size // 8 + 1))


def test_version_change_rebuilds_with_one_message(copy: tuple[str, Path]) -> None:
    backend, store = copy
    (store / ".notes" / INDEX_FOLDER[backend] / "version.json").write_text('{"schema": 0}')
    messages: list[str] = []
    notes = open_notes(store, backend, messages)
    assert notes.suggest("deploy").hits
    assert len(messages) == 1 and "another version" in messages[0]
    assert not list((store / ".notes").glob("index*.new-*"))  # built aside, then swapped in
    notes.close()


def test_hostile_queries_are_words(copy: tuple[str, Path]) -> None:
    backend, store = copy
    notes = open_notes(store, backend)
    plain = notes.suggest("redis eviction").hits[0].note
    for query in HOSTILE:
        hits = notes.suggest(query).hits
        assert hits and hits[0].note == plain, (backend, query)
    for query in ["*", "NOT", "(((", "\U0001f600", "a" * 5000, "é" * 300, "AND OR NOT"]:
        notes.suggest(query)  # answers (perhaps nothing), never raises
    notes.close()


def test_other_processes_writing_and_the_watcher(copy: tuple[str, Path]) -> None:
    """Writers in other processes wait for each other; this process sees their commits
    (no refresh of its own), and `notes watch` re-indexes an editor's save."""
    backend, store = copy
    env = {**os.environ, "NOTES_DIR": str(store), "NOTES_BACKEND": backend}
    writers = [subprocess.Popen([str(NOTES_BIN), "log", note, "-t", f"Palabra{i}", "-d",
                                 "2026-12-01"], env=env, stdin=subprocess.PIPE, text=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
               for i, note in enumerate(["infra/redis", "glossary", "infra/redis"])]
    for i, proc in enumerate(writers):
        _, err = proc.communicate(f"Mandarina{i} entry.\n", timeout=120)
        assert proc.returncode == 0, err
    notes = open_notes(store, backend)
    for i in range(3):
        assert _indexed(notes, f"mandarina{i}"), i
    watcher = subprocess.Popen([str(NOTES_BIN), "watch", "--quiet-seconds", "0.2"], env=env,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert watcher.stderr is not None and "watching" in watcher.stderr.readline()
        tmp = store / "4913"
        tmp.write_text((store / "glossary.md").read_text() + "\n- Zeppelin: watched.\n")
        os.replace(tmp, store / "glossary.md")
        assert "re-indexed: glossary" in watcher.stderr.readline()
        assert _indexed(notes, "zeppelin")
    finally:
        watcher.terminate()
        watcher.wait(timeout=30)
        if watcher.stderr is not None:
            watcher.stderr.close()
    notes.close()


def _indexed(notes: Notes, word: str) -> bool:
    from memory.search import parse_query, search

    hits, _ = notes.index.run_search(lambda s: search(s, parse_query(word), "note", 3))
    return bool(hits)


def test_the_backend_is_configured(store_dir: Path) -> None:
    assert load_config(store_dir, env={}).backend == "whoosh"
    assert load_config(store_dir, env={"NOTES_BACKEND": " Tantivy "}).backend == "tantivy"
    with pytest.raises(ConfigError, match="NOTES_BACKEND"):
        load_config(store_dir, env={"NOTES_BACKEND": "lucene"})


MESSY: dict[str, bytes] = {
    "good.md": b"---\ntitle: Good\n---\n# Good\n\n## Current state\n- zanahoria azul\n",
    "bad-yaml.md": b"---\ntitle: [unclosed\n---\n# Bad\n\n## Current state\n- pepino verde\n",
    "latin1.md": "---\ntitle: L\n---\n# L\n\n## Estado\n- configuración berenjena\n"
                 .encode("latin-1"),
    "empty.md": b"",
    "binary.md": bytes(range(256)) * 40,
    "odd.md": ("# Odd\n\n## Current state\n- rábano \U0001f600 東京 \u200b "
               + "x" * 100_000 + " final\n").encode(),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_broken_files_never_stop_indexing(backend: str, tmp_path: Path) -> None:
    for name, data in MESSY.items():
        (tmp_path / name).write_bytes(data)
    notes = open_notes(tmp_path, backend)
    for word, note in [("zanahoria", "good"), ("pepino", "bad-yaml"),
                       ("berenjena configuracion", "latin1"), ("rabano final", "odd")]:
        assert notes.suggest(word).hits[0].note == note, (backend, word)
    assert len(notes.list_notes()) == 6  # listed, even the binary one (its text is not indexed)
    notes.close()
