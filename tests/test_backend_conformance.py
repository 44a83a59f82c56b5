"""One conformance suite for every index backend (Whoosh, tantivy): what the ladder shows must
not depend on the backend. Golden routing, section scores, freshness after edits (library,
editor saves, other processes, the watcher), rebuild after damage or a version change, and
hostile queries that must never act as operators.

Each backend's index is built once per module and copied for each test: of the example
store, or of the small store (conftest.SMALL_NOTES) for the tests that rebuild it.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from conftest import NOTES_BIN, SMALL_NOTES, copy_example, copy_notes
from memory import Notes, load_config
from memory.config import Config
from memory.errors import ConfigError
from memory.index import ScopedIndex, StoredNote, StoredPart, parse_query
from memory.retrieval.ladder import Ladder
from memory.state.integrity import HistoryGuard
from memory.state.store import Store

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
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          indexed_example: Path) -> Iterator[tuple[str, Path]]:
    """The example store with this backend's index built (once per module; Whoosh's is the
    session's ``indexed_example``, the index every ``store_dir`` has, not built again)."""
    yield _built(str(request.param), tmp_path_factory, indexed_example, None)


@pytest.fixture(scope="module", params=BACKENDS)
def built_small(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                indexed_small_example: Path) -> Iterator[tuple[str, Path]]:
    """The small store with this backend's index built, as ``built`` is (Whoosh's is the
    session's ``indexed_small_example``)."""
    yield _built(str(request.param), tmp_path_factory, indexed_small_example, SMALL_NOTES)


def _built(backend: str, tmp_path_factory: pytest.TempPathFactory, indexed: Path,
           notes: tuple[str, ...] | None) -> tuple[str, Path]:
    store = tmp_path_factory.mktemp(f"built-{backend}") / "notes"
    if backend == "whoosh":
        copy_example(indexed, store)
    else:
        copy_notes(store, notes)
    opened = Notes(config_for(store, backend), notify=lambda _: None)
    opened.refresh_index()
    opened.close()
    return backend, store


@pytest.fixture
def copy(built: tuple[str, Path], tmp_path: Path) -> tuple[str, Path]:
    """A private copy of the built store (notes and index)."""
    backend, store = built
    target = tmp_path / "notes"
    shutil.copytree(store, target)
    return backend, target


@pytest.fixture
def small_copy(built_small: tuple[str, Path], tmp_path: Path) -> tuple[str, Path]:
    """A private copy of the built small store (notes and index): for the tests of
    rebuilds, which need no more notes than it has."""
    backend, store = built_small
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


@pytest.mark.slow(9)
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


def test_only_the_changed_note_is_reindexed(small_copy: tuple[str, Path]) -> None:
    backend, store = small_copy
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
def test_damage_rebuilds_once(small_copy: tuple[str, Path], damage: str,
                              while_open: bool) -> None:
    backend, store = small_copy
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


def test_version_change_rebuilds_with_one_message(small_copy: tuple[str, Path]) -> None:
    backend, store = small_copy
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
    hits, _ = notes.index.run_search(lambda s: s.search_notes(parse_query(word), 3))
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


# -- the seam: what a backend's searcher gives (memory/index/interface.py) -----------------
def test_the_searcher_gives_typed_stored_documents(copy: tuple[str, Path]) -> None:
    backend, store = copy
    notes = open_notes(store, backend)
    notes.refresh_index()
    stored = notes.index.run_search(lambda s: s.stored_notes())
    assert all(isinstance(n, StoredNote) for n in stored)
    assert sorted(n.note_id for n in stored) == [n.note for n in notes.list_notes()]
    redis = notes.index.run_search(lambda s: s.stored_note("infra/redis"))
    assert redis is not None and redis.note_id == "infra/redis" and redis.title
    assert redis.tokens > redis.state_tokens > 0 and redis.entries >= 1 and redis.date
    assert (redis.size, redis.mtime_ns) == _stat(store / "infra" / "redis.md")
    assert notes.index.run_search(lambda s: s.stored_note("no/such-note")) is None
    hits, total = notes.index.run_search(
        lambda s: s.search_notes(parse_query("redis eviction"), 2))
    top = notes.suggest("redis eviction", limit=2)
    assert [h.doc.note_id for h in hits] == [h.note for h in top.hits] and total == top.total
    assert isinstance(hits[0].doc, StoredNote) and hits[0].score >= hits[1].score
    for kind in ("section", "paragraph"):
        parts, count = notes.index.run_search(lambda s, k=kind: s.search_parts(
            parse_query("redis eviction"), k, None, note_id="infra/redis"))
        assert parts and count == len(parts), kind
        assert {p.doc.note_id for p in parts} == {"infra/redis"}, kind
        assert all(isinstance(p.doc, StoredPart) and p.doc.kind == kind for p in parts)
        assert all(p.doc.lines[0] < p.doc.lines[1] and p.matched for p in parts), kind
        everywhere, _ = notes.index.run_search(lambda s, k=kind: s.search_parts(
            parse_query("redis eviction"), k, None))
        assert [(p.doc.id, p.score, p.matched) for p in parts] == [
            (p.doc.id, p.score, p.matched) for p in everywhere
            if p.doc.note_id == "infra/redis"], kind  # one note's scope changes no score
        assert {p.doc.kind for p in everywhere} == {kind}  # a kind's search finds no other
    assert notes.index.run_search(lambda s: s.search_notes(parse_query("the of"), 5)) \
        == ([], 0)  # stop words only: nothing to search
    notes.close()


REDIS = frozenset({"incidents/redis-eviction-2026-03", "infra/redis"})


def test_a_scope_leaves_notes_out_of_every_search(copy: tuple[str, Path]) -> None:
    """``Searcher.without``: the excluded notes are filtered inside the backend's search, so
    a limit still gives that many hits among the others, the counts are of the others, the
    scores do not change, and their stored documents are not there either."""
    backend, store = copy
    notes = open_notes(store, backend)
    notes.refresh_index()
    query = parse_query("redis eviction")
    everything, total = notes.index.run_search(lambda s: s.search_notes(query, None))
    assert REDIS <= {h.doc.note_id for h in everything[:2]}  # the two best, unscoped
    others = [(h.doc.note_id, h.score) for h in everything if h.doc.note_id not in REDIS]
    hits, count = notes.index.run_search(lambda s: s.without(REDIS).search_notes(query, 3))
    assert [(h.doc.note_id, h.score) for h in hits] == others[:3] and count == total - 2
    for kind in ("section", "paragraph"):
        parts, all_count = notes.index.run_search(
            lambda s, k=kind: s.search_parts(query, k, None))
        kept = [(h.doc.id, h.score) for h in parts if h.doc.note_id not in REDIS]
        scoped, scoped_count = notes.index.run_search(
            lambda s, k=kind: s.without(REDIS).search_parts(query, k, 5))
        assert [(h.doc.id, h.score) for h in scoped] == kept[:5], kind
        assert scoped_count == len(kept) < all_count, kind
        assert notes.index.run_search(lambda s, k=kind: s.without(REDIS).search_parts(
            query, k, None, note_id="infra/redis")) == ([], 0), kind
    # views compose, and leave the stored documents out too
    both = notes.index.run_search(lambda s: s.without(frozenset({"infra/redis"})).without(
        frozenset({"incidents/redis-eviction-2026-03"})).search_notes(query, 3))
    assert [h.doc.note_id for h in both[0]] == [note for note, _ in others[:3]]
    assert notes.index.run_search(lambda s: s.without(REDIS).stored_note("infra/redis")) is None
    listed = notes.index.run_search(lambda s: s.without(REDIS).stored_notes())
    assert sorted(n.note_id for n in listed) == sorted(
        n.note for n in notes.list_notes() if n.note not in REDIS)
    assert notes.index.run_search(lambda s: s.without(frozenset()).search_notes(query, None)) \
        == (everything, total)  # an empty scope leaves nothing out
    notes.close()


def test_a_ladder_over_a_scoped_index_sees_only_the_allowed_notes(
        copy: tuple[str, Path]) -> None:
    """:class:`ScopedIndex`: the real ladder over the view, unchanged, never routes to,
    recalls from or finds a paragraph of an excluded note; the scope can be set again."""
    backend, store = copy
    notes = open_notes(store, backend)
    scope = ScopedIndex(notes.index, REDIS)
    ladder = Ladder(notes.store, scope, notes.counter)
    message = "how did we fix the redis eviction incident"
    assert notes.suggest(message, limit=4).hits[0].note in REDIS  # unscoped: a redis note
    suggested = ladder.suggest(message, limit=4)
    assert suggested.hits and REDIS.isdisjoint(h.note for h in suggested.hits)
    recalled = ladder.recall(message, 1000)
    assert recalled.groups and REDIS.isdisjoint(g.note for g in recalled.groups)
    found, _ = ladder.search(parse_query(message), "paragraph", 20)
    assert len(found) == 20 and REDIS.isdisjoint(h.doc.note_id for h in found)
    with scope.searcher() as searcher:
        assert searcher.stored_note("infra/redis") is None
    scope.exclude = ()
    assert ladder.suggest(message, limit=4).hits[0].note in REDIS
    notes.close()


def _stat(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


# -- one after-write path (memory/state/commit.py, Committer._recorded) -------------------
def test_a_write_parses_the_note_once_and_records_it_once(
        copy: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """`notes log` used to parse the written note three times (the index read the file it
    was just given) and record it in the ledger twice (the write, then the index's
    observer). Now: one read of the note before the edit, one parse of what was written,
    one ledger observation, and the index holds the file as written."""
    backend, store = copy
    notes = open_notes(store, backend)
    notes.refresh_index()
    calls: list[str] = []
    for cls, name in [(Store, "load_bytes"), (Store, "load_path"), (HistoryGuard, "observe")]:
        monkeypatch.setattr(cls, name, _counted(getattr(cls, name), name, calls))
    notes.append_history("infra/redis", "Calabaza", "Calabaza entry.", "2026-12-01")
    assert sorted(calls) == ["load_bytes", "load_bytes", "observe"], calls
    calls.clear()
    notes.write_state("infra/redis", "- Remolacha is the state now.\n")
    notes.create_note("zz/new", "Chirivía")
    assert sorted(calls) == ["load_bytes"] * 3 + ["observe"] * 2, calls
    assert notes.suggest("calabaza").hits[0].note == "infra/redis"
    assert notes.suggest("remolacha").hits[0].note == "infra/redis"
    assert notes.suggest("chirivía").hits[0].note == "zz/new"
    stored = notes.index.run_search(lambda s: s.stored_note("infra/redis"))
    assert stored is not None and (stored.size, stored.mtime_ns) == _stat(
        store / "infra" / "redis.md")
    assert notes.refresh_index().indexed == []  # as written is as on disk: nothing to redo
    notes.close()


def _counted(method: Callable[..., object], name: str,
             calls: list[str]) -> Callable[..., object]:
    def counted(*args: object, **kwargs: object) -> object:
        calls.append(name)
        return method(*args, **kwargs)

    return counted


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_note_written_past_the_size_limit_is_indexed_as_a_refresh_would(
        backend: str, tmp_path: Path) -> None:
    """The index reads only the head of a note past ``max_note_bytes``; a write that makes a
    note that large hands the index the file, not the whole text."""
    (tmp_path / "big.md").write_text("# Big\n\n## Current state\n- pomelo\n\n## History\n")
    config = dataclasses.replace(config_for(tmp_path, backend), max_note_bytes=2_000)
    notes = Notes(config, notify=lambda _: None)
    notes.refresh_index()
    notes.append_history("big", "Long", "relleno " * 300 + "\n\nmangostino at the end.",
                         "2026-12-01")
    assert notes.suggest("pomelo").hits[0].note == "big"
    assert not notes.suggest("mangostino").hits  # past the head the index reads
    assert notes.refresh_index().indexed == []
    notes.close()


# -- what imports a backend (memory/index/whoosh, memory/index/tantivy) -------------------
def test_only_the_backends_folders_import_their_libraries() -> None:
    root = Path(__file__).resolve().parent.parent
    found = []
    for path in [*root.joinpath("memory").rglob("*.py"), *root.joinpath("benchmarks").rglob(
            "*.py"), root / "mcp_server.py"]:
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            match = re.match(r"\s*(?:import|from)\s+(whoosh|tantivy)\b", line)
            home = root / "memory" / "index" / (match[1] if match else "")
            if match and home not in path.parents:
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert not found


def test_whoosh_is_imported_only_when_a_whoosh_index_is_made(store_dir: Path) -> None:
    loaded = "[m for m in sys.modules if m.split('.')[0] in ('whoosh', 'tantivy')]"
    script = (f"import sys\nimport memory, memory.api, memory.index, memory.retrieval.recall, "
              f"memory.services.promote, memory.bench.reader\nprint({loaded})\n"
              f"from memory import Notes, load_config\n"
              f"notes = Notes(load_config(sys.argv[1]), notify=lambda _: None)\n"
              f"notes.read_section('infra/redis', 'state')\nprint({loaded})\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    backends = ["tantivy"] if HAS_TANTIVY else []
    seen = {backend: subprocess.run([sys.executable, "-c", script + (
        "notes.suggest('redis')\nprint(" + loaded + ")\n"), str(store_dir)],
        env=env | {"NOTES_BACKEND": backend}, capture_output=True, text=True, check=True)
        .stdout.splitlines() for backend in ["whoosh", *backends]}
    assert seen["whoosh"][0] == "[]"  # importing the package, the ladder, the bench: no Whoosh
    assert "'whoosh'" in seen["whoosh"][1]  # a Whoosh index made: Whoosh
    assert "tantivy" not in seen["whoosh"][2]
    if HAS_TANTIVY:
        assert seen["tantivy"][0] == "[]"
        assert "whoosh" not in seen["tantivy"][2] and "'tantivy'" in seen["tantivy"][2]


TIED = "# Kiwi\n\n## Estado vigente\n- The kiwi grows {where}.\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_equal_scores_come_in_note_order_however_the_index_was_written(
        backend: str, tmp_path: Path) -> None:
    """Three notes that score alike come by note id, before and after one of them is
    written again (an edit re-adds its documents at the end of the index, the order a
    backend keeps ties in), and a cut inside the tie keeps the first by id."""
    for name in ("kiwi-one", "kiwi-two", "kiwi-three"):
        (tmp_path / f"{name}.md").write_text(TIED.format(where="here"), encoding="utf-8")
    notes = open_notes(tmp_path, backend)
    in_order = ["kiwi-one", "kiwi-three", "kiwi-two"]
    assert [h.note for h in notes.suggest("kiwi").hits] == in_order
    (tmp_path / "kiwi-one.md").write_text(TIED.format(where="there"), encoding="utf-8")
    hits = notes.suggest("kiwi").hits
    assert len({round(h.score, 6) for h in hits}) == 1, hits  # still a tie
    assert [h.note for h in hits] == in_order
    assert [h.note for h in notes.suggest("kiwi", limit=2).hits] == in_order[:2]
    assert [g.note for g in notes.recall("kiwi", budget=100).groups][:1] == ["kiwi-one"]
    notes.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_irregular_past_form_matches_its_base_verb(backend: str, tmp_path: Path) -> None:
    """"choose" finds the note that says "chose", "go" the one that says "went", in the
    stemmed fields of both backends (the exact fields keep the word as written)."""
    (tmp_path / "database.md").write_text(
        "# Database\n\n## Estado vigente\n- We chose Postgres after we went to the meetup.\n",
        encoding="utf-8")
    (tmp_path / "other.md").write_text(
        "# Other\n\n## Estado vigente\n- Postgres and MySQL were compared at length here.\n",
        encoding="utf-8")
    notes = open_notes(tmp_path, backend)
    hits = notes.suggest("why did we choose postgres, and where did we go").hits
    assert hits[0].note == "database"
    assert {"choose", "go"} <= set(hits[0].matched), hits[0]
    assert notes.index.stem_terms("we chose") == notes.index.stem_terms("we choose")
    notes.close()
