"""The index: fresh after edits, rebuilt after version changes or damage, never a traceback."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import NOTES_BIN, RunCli, unprivileged
from memory import Notes, load_config
from memory.index import parse_query
from memory.index.stored import settle_ties, tied_reach
from memory.index.words import base_forms


def test_an_edit_on_disk_is_seen_by_the_next_suggest(notes: Notes, store_dir: Path) -> None:
    assert not notes.suggest("quetzalcoatl").hits
    path = store_dir / "infra" / "redis.md"
    text = path.read_text().replace("## History", "- Quetzalcoatl is the new cache host.\n\n"
                                    "## History", 1)
    path.write_text(text)
    hits = notes.suggest("quetzalcoatl").hits
    assert [h.note for h in hits] == ["infra/redis"]
    path.unlink()
    assert not notes.suggest("quetzalcoatl").hits


def test_editor_style_rename_save_is_seen(notes: Notes, store_dir: Path) -> None:
    notes.suggest("warmup")
    path = store_dir / "glossary.md"
    tmp = store_dir / ".glossary.md.swp"
    tmp.write_text(path.read_text() + "\n- Xylophone: our fictional new term.\n")
    os.replace(tmp, path)
    assert notes.suggest("xylophone").hits[0].note == "glossary"


def test_version_change_triggers_a_rebuild_with_one_message(small_store_dir: Path) -> None:
    store_dir = small_store_dir
    messages: list[str] = []
    notes = Notes(load_config(store_dir), notify=messages.append)
    notes.suggest("deploy")
    version = notes.index.dir / "version.json"
    version.write_text(json.dumps({"schema": 0, "analyzer": 0}))
    notes.close()
    messages.clear()
    again = Notes(load_config(store_dir), notify=messages.append)
    assert again.suggest("deploy").hits
    assert len(messages) == 1 and "another version" in messages[0]


@pytest.mark.slow(8)
@pytest.mark.parametrize("damage", ["truncate", "delete-segments", "garbage-toc"])
def test_damaged_index_rebuilds_itself(run_cli_process: RunCli, small_store_dir: Path,
                                       damage: str) -> None:
    """The real command, as a user meets a damaged index (in this process, Whoosh's reading of
    a damaged table of contents leaves a file for the garbage collector to close)."""
    store_dir = small_store_dir

    def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli_process(*args, notes_dir=store_dir)

    assert run_cli("index").returncode == 0
    folder = store_dir / ".notes" / "index"
    files = [p for p in folder.iterdir() if p.suffix in (".seg", ".toc")]
    for path in files:
        if damage == "truncate":
            path.write_bytes(path.read_bytes()[:10])
        elif damage == "delete-segments" and path.suffix == ".seg":
            path.unlink()
        elif damage == "garbage-toc" and path.suffix == ".toc":
            path.write_bytes(b"\x00garbage" * 10)
    result = run_cli("suggest", "redis eviction")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("building the index") == 1
    assert "infra/redis" in result.stdout


def test_read_only_notes_folder_uses_a_cache_folder(unindexed_small_store: Path) -> None:
    """Run the CLI without the right to write the store: the state goes to a cache folder."""
    store_dir = unindexed_small_store
    if os.geteuid() != 0:
        runner: list[str] = []
        for folder in [store_dir, *[p for p in store_dir.rglob("*") if p.is_dir()]]:
            folder.chmod(0o555)
    elif shutil.which("setpriv"):
        runner, other = unprivileged()
    else:
        pytest.skip("needs setpriv to drop root privileges")
    shared = Path(tempfile.mkdtemp(prefix="notes-ro-"))
    try:
        shared.chmod(0o777)
        store = shared / "store"
        shutil.copytree(store_dir, store)
        for path in [store, *store.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)
            if os.geteuid() == 0:
                os.chown(path, other, other)  # someone else's store, which nobody may write
        cache = shared / "cache"
        cache.mkdir(mode=0o777)
        cache.chmod(0o777)
        env = {**os.environ, "NOTES_DIR": str(store), "XDG_CACHE_HOME": str(cache),
               "HOME": str(cache)}
        result = subprocess.run([*runner, str(NOTES_BIN), "suggest", "redis", "--json"],
                                env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["hits"]
        assert not (store / ".notes").exists()
        assert list((cache / "notes-memory").glob("store-*/index/*.toc"))
    finally:
        for path in [shared, *shared.rglob("*")]:
            path.chmod(0o777)
        shutil.rmtree(shared, ignore_errors=True)
        for folder in [store_dir, *[p for p in store_dir.rglob("*") if p.is_dir()]]:
            folder.chmod(0o755)



def test_state_lives_in_one_hidden_folder(notes: Notes, store_dir: Path) -> None:
    before = {p for p in store_dir.rglob("*") if ".notes" not in p.parts}
    notes.suggest("deploy")
    notes.section_map("howto/deploy-production", "rollback")
    after = {p for p in store_dir.rglob("*") if ".notes" not in p.parts}
    assert before == after
    assert notes.config.state_dir == store_dir / ".notes"


def test_watch_reindexes_a_saved_note_then_tidies_when_quiet(store_dir: Path) -> None:
    env = {**os.environ, "NOTES_DIR": str(store_dir)}
    subprocess.run([str(NOTES_BIN), "index"], env=env, check=True, capture_output=True)
    watcher = subprocess.Popen([str(NOTES_BIN), "watch", "--quiet-seconds", "0.2"], env=env,
                               stderr=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()
    assert watcher.stderr is not None
    threading.Thread(target=lambda: [lines.put(x) for x in watcher.stderr or ()],
                     daemon=True).start()
    try:
        assert "watching" in lines.get(timeout=60)
        for note, term in [("glossary", "Zeppelin"), ("infra/redis", "Quokka")]:
            path = store_dir / f"{note}.md"
            tmp = store_dir / "4913"
            tmp.write_text(path.read_text() + f"\n- {term}: the watcher test's term.\n")
            os.replace(tmp, path)  # an editor's rename-save
            assert f"re-indexed: {note}" in lines.get(timeout=60)
        notes = Notes(load_config(store_dir), notify=lambda _: None)
        with notes.index.searcher() as searcher:  # no refresh: the watcher did the work
            from memory.index import parse_query

            hits, _ = searcher.search_notes(parse_query("zeppelin"), 5)
        assert [h.doc.note_id for h in hits] == ["glossary"]
        # each save was one quick commit (a small segment); once quiet, they are merged
        assert "tidied: merged 2 small index segments" in lines.get(timeout=60)
        assert [h.note for h in notes.suggest("quokka").hits] == ["infra/redis"]
        notes.close()
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)
        watcher.stderr.close()
    assert watcher.returncode == 0


def test_query_syntax_is_never_an_operator(notes: Notes) -> None:
    plain = notes.suggest("redis eviction").hits
    for hostile in ["redis NOT eviction", "redis AND eviction*", "title:redis (eviction",
                    'redis "eviction', "redis^3 eviction~2", "[redis TO eviction]"]:
        hits = notes.suggest(hostile).hits
        assert hits and hits[0].note == plain[0].note, hostile


def test_spanish_and_english_meet_without_accents() -> None:
    from memory.index.whoosh.search import query_terms

    parsed = parse_query("configuración configuracion estado")
    words = {w: (e, s) for w, e, s, _ in query_terms(parsed)}
    assert words["configuración"][0] == words["configuracion"][0] == "configuracion"
    assert words["estado"][0] == "estado"  # removed from the Spanish stop list
    assert query_terms(parse_query("configuring"))[0][2] == words["configuración"][1] \
        == "configur"


def test_the_word_lists_are_whooshs_and_make_the_same_terms() -> None:
    """memory/index/wordlists.py holds Whoosh's stop words and accent table as data, so the
    query's words need no Whoosh: they must stay Whoosh's, and the pure-Python exact terms
    (memory/index/words.py) must be the Whoosh exact analyzer's, on every note of the
    example and on the characters the accent table folds."""
    from whoosh.lang import stopwords_for_language
    from whoosh.support.charset import accent_map

    from conftest import EXAMPLE
    from memory.index.whoosh.analysis import exact_analyzer, terms
    from memory.index.wordlists import ACCENTS, ENGLISH, SPANISH
    from memory.index.words import accent_table, exact_terms

    assert SPANISH == stopwords_for_language("es") and ENGLISH == stopwords_for_language("en")
    assert accent_table() == accent_map and sum(map(len, ACCENTS.values())) == len(accent_map)
    folded = " ".join("x" + chr(c) + "y" for c in accent_map)
    texts = [p.read_text() for p in EXAMPLE.rglob("*.md")] + [folded, "İstanbul Ǆemal ǅ ß ﬁx"]
    for text in texts:
        assert exact_terms(text) == terms(text, exact_analyzer())


def test_commands_work_without_any_network(small_store_dir: Path) -> None:
    """Index, suggest, map and read inside a network namespace with no interfaces up."""
    store_dir = small_store_dir
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare to cut the network off")
    env = {**os.environ, "NOTES_DIR": str(store_dir)}
    for args in (["index", "--rebuild"], ["suggest", "despliegue"],
                 ["map", "infra/redis", "--query", "eviction"], ["read", "infra/redis", "#2"]):
        result = subprocess.run(["unshare", "-n", str(NOTES_BIN), *args], env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, (args, result.stderr)


# -- the shared Whoosh searcher (memory/index/whoosh/searcher.py) ------------------------------
def _find(notes: Notes, word: str) -> list[str]:
    """The notes a search of ``word`` finds, without refreshing the index first."""
    from memory.index import parse_query

    hits, _ = notes.index.run_search(lambda s: s.search_notes(parse_query(word), 5))
    return [h.doc.note_id for h in hits]


def _add_line(store_dir: Path, note: str, line: str) -> None:
    path = store_dir / f"{note}.md"
    path.write_text(path.read_text() + f"\n- {line}\n")


def test_the_searcher_is_reused_until_the_files_change(notes: Notes, store_dir: Path) -> None:
    notes.suggest("warmup")
    with notes.index.searcher() as first:
        pass
    with notes.index.searcher() as again:
        assert again is first and not first.is_closed
    other = Notes(load_config(store_dir), notify=lambda _: None)  # another index object
    _add_line(store_dir, "infra/redis", "Quetzalcoatl guards the cache.")
    assert other.refresh_index().indexed == ["infra/redis"]
    other.close()
    assert _find(notes, "quetzalcoatl") == ["infra/redis"]  # no refresh by `notes` itself
    with notes.index.searcher() as after:
        assert after is not first and first.is_closed
    notes.close()
    assert after.is_closed


def test_a_commit_by_another_process_is_seen(notes: Notes, store_dir: Path,
                                             run_cli: RunCli) -> None:
    assert not _find(notes, "ornitorrinco")
    _add_line(store_dir, "glossary", "Ornitorrinco: a test word.")
    assert run_cli("index").returncode == 0
    assert _find(notes, "ornitorrinco") == ["glossary"]


def test_threads_share_the_searcher_while_notes_change(notes: Notes, store_dir: Path) -> None:
    import threading

    plain = _find(notes, "redis eviction")
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for _ in range(15):
                assert _find(notes, "redis eviction") == plain
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    for number in range(4):
        _add_line(store_dir, "glossary", f"Palabrahilo{number}: written while searching.")
        notes.index.refresh()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert all(_find(notes, f"palabrahilo{n}") == ["glossary"] for n in range(4))


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_damage_under_the_cached_searcher_rebuilds_once(small_store_dir: Path) -> None:
    messages: list[str] = []
    notes = Notes(load_config(small_store_dir), notify=messages.append)
    plain = [h.note for h in notes.suggest("redis eviction").hits]
    messages.clear()  # the first build
    for path in notes.index.dir.iterdir():
        if path.suffix == ".seg":
            path.write_bytes(path.read_bytes()[:64])  # truncated in place, same inode
    assert [h.note for h in notes.suggest("redis eviction").hits] == plain
    assert len([m for m in messages if "building the index" in m]) == 1, messages
    notes.close()


def test_a_watcher_callback_that_fails_is_reported_and_watching_goes_on(
        tmp_path: Path) -> None:
    from memory.state.watch import Debouncer

    calls: list[list[Path]] = []
    errors: list[Exception] = []

    def on_change(paths: list[Path]) -> None:
        calls.append(paths)
        if len(calls) == 1:
            raise OSError("disk full")

    debouncer = Debouncer(tmp_path, on_change, quiet=0.05, on_error=errors.append)
    thread = threading.Thread(target=debouncer.run, daemon=True)
    thread.start()
    try:
        for name in ("a.md", "b.md"):
            with debouncer.lock:
                debouncer.pending[str(tmp_path / name)] = 0.0
            deadline = time.monotonic() + 10
            while len(calls) < ("a.md", "b.md").index(name) + 1 and time.monotonic() < deadline:
                time.sleep(0.01)
        assert [p.name for batch in calls for p in batch] == ["a.md", "b.md"]
        assert [str(e) for e in errors] == ["disk full"] and thread.is_alive()
    finally:
        debouncer.stopped.set()
        thread.join(timeout=5)


def test_irregular_past_forms_become_their_base_verb_and_ambiguous_words_stay() -> None:
    assert base_forms("She Chose it, went home and wrote.") == "She choose it, go home and write."
    kept_as_written = "I left the bit I found; I saw a rose and fell, felt the shot"
    assert base_forms(kept_as_written) == kept_as_written
    assert base_forms("chosen_one chose2 elegí") == "chosen_one chose2 elegí"  # whole words only


def test_scores_that_differ_in_their_last_bits_are_a_tie_in_note_order() -> None:
    """Two builds can sum the same document's BM25 in another order (a segment without one
    of the query's terms); the last bits must not decide which of two tied hits comes first,
    nor which one a cut keeps."""
    def hit(note: str, score: float) -> tuple[dict[str, object], float, tuple[str, ...]]:
        return {"note_id": note, "id": note}, score, ()

    one_build = [hit("b", 2.5 + 4e-16), hit("a", 2.5), hit("c", 1.0)]
    other_build = [hit("a", 2.5 + 4e-16), hit("b", 2.5), hit("c", 1.0)]
    for hits in (one_build, other_build):
        assert tied_reach([h[1] for h in hits], 1) == 2
        assert [h[0]["note_id"] for h in settle_ties(hits, 1)] == ["a"]
        assert [h[0]["note_id"] for h in settle_ties(hits, None)] == ["a", "b", "c"]


def test_a_vanished_table_of_contents_is_retried_a_missing_segment_is_not() -> None:
    """A commit elsewhere removing the TOC being read is a race (read again); a segment file
    still missing after Whoosh's own half second of retries is damage: the rebuild starts at
    once, not after 2.5 s more of retries (twice, in the probe and the open)."""
    from memory.index.whoosh.opening import retrying

    calls: list[str] = []

    def gone(name: str, then: str | None = None) -> Callable[[], str]:
        def attempt() -> str:
            calls.append(name)
            if then is None or len(calls) == 1:
                raise FileNotFoundError(2, "No such file", f"/x/index/{name}")
            return then
        return attempt

    assert retrying(gone("_MAIN_7.toc", then="opened")) == "opened" and len(calls) == 2
    calls.clear()
    with pytest.raises(FileNotFoundError):
        retrying(gone("MAIN_abc.seg"))
    assert calls == ["MAIN_abc.seg"]
    calls.clear()
    with pytest.raises(FileNotFoundError):
        retrying(gone("_MAIN_8.toc"), attempts=3)
    assert len(calls) == 3


@pytest.mark.parametrize("first", ["write", "read"])
def test_a_write_that_builds_the_index_indexes_its_note_once(tmp_path: Path,
                                                             first: str) -> None:
    """A write to a store without an index (`notes init`'s starter note, a log after the
    index was deleted) builds it from the notes on disk, the one just written among them,
    and does not index that note a second time: one commit, one segment."""
    store = tmp_path / "store"
    (store / "infra").mkdir(parents=True)
    (store / "infra" / "redis.md").write_text(
        "# Redis\n\n## Current state\n- eviction is allkeys-lru\n\n## History\n")
    notes = Notes(load_config(store), notify=lambda _: None)
    try:
        if first == "read":  # built by a read, then written: indexed again, on its own
            assert notes.suggest("eviction").hits
        notes.append_history("infra/redis", "Quetzalcoatl cache host", "- moved to it")
        assert [h.note for h in notes.suggest("quetzalcoatl").hits] == ["infra/redis"]
        assert [h.note for h in notes.suggest("eviction").hits] == ["infra/redis"]
        tocs = sorted(p.name for p in notes.index.dir.glob("*.toc"))
        segments = list(notes.index.dir.glob("*.seg"))
    finally:
        notes.close()
    assert tocs == (["_MAIN_1.toc"] if first == "write" else ["_MAIN_2.toc"])
    assert len(segments) == (1 if first == "write" else 2)
