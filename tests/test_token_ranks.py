"""Counts from the ranks table are tiktoken's counts, and a cold hook needs no tiktoken."""

from __future__ import annotations

import base64
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import EXAMPLE
from memory.hook.answer import HEADER
from memory.state.token_ranks import RANKS_FILE, BundledRanks, RankTable, write_ranks
from memory.state.tokens import TokenCounter, _bundled_ranks, count_exact, encoding

# Letters, digits, spaces and line ends of every kind, punctuation, accents (also combining),
# CJK, emoji, contractions: what the pieces and merges turn on.
ALPHABET = st.sampled_from(list("abcxyzAZéñüß 0123456789\n\r\t  .,;:!?¿'\"-_/·`()[]{}<>#*=+")
                           + ["日本", "語", "😀", "\u0301", "\u200b", "'s", "'LL", "    ",
                              "\n\n", "http://", "1234567", "ção", "—"])


def printed(script: str, folder: str, timeout: int = 120) -> list[str]:
    """What a fresh Python process running ``script`` (with ``folder`` as its argument)
    prints, word by word; the process must succeed."""
    done = subprocess.run([sys.executable, "-c", script, folder], capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> RankTable:
    path = tmp_path_factory.mktemp("ranks") / RANKS_FILE
    assert write_ranks(path, encoding())
    return RankTable(path)


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=60).map("".join))
def test_counts_are_tiktokens(table: RankTable, text: str) -> None:
    assert table.count(text) == count_exact(text)


def test_hook_lines_and_long_words(table: RankTable) -> None:
    texts = [HEADER + "\n- people/docker-retention · Docker retention · state 295 of 5269 tokens",
             "Retención de jenkins · Trabajadores de cron", "x" * 150, "ab" * 90 + "\n",
             "a" * 300]  # a piece past the limit is left to the encoding
    counts = [table.count(t) for t in texts]
    assert counts[:4] == [count_exact(t) for t in texts[:4]]
    assert counts[4] is None


def test_a_table_of_another_install_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / RANKS_FILE
    assert write_ranks(path, encoding())
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'tiktoken/core.py:1:1' WHERE key = 'stamp'")
    assert RankTable(path).count("hello") is None
    counter = TokenCounter(tmp_path / "tokens.sqlite")
    assert counter.save_ranks()  # written again for this install
    assert RankTable(path).count("hello world") == count_exact("hello world")


def test_a_folder_that_cannot_be_written_leaves_no_table(tmp_path: Path) -> None:
    missing = tmp_path / "not-a-folder"
    missing.write_text("x")
    assert not write_ranks(missing / RANKS_FILE, encoding())


def test_a_cold_hook_counts_without_tiktoken(store_dir: Path) -> None:
    env = {**os.environ, "NOTES_DIR": str(store_dir)}
    first = subprocess.run([sys.executable, "-m", "memory", "index"], env=env,
                           capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    assert (store_dir / ".notes" / RANKS_FILE).is_file()  # written by `notes index`
    prompt = json.dumps({"prompt": "cómo hago rollback de un despliegue", "session_id": "s"})
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "memory", "hook",
                           "user-prompt"], input=prompt, env=env, capture_output=True,
                          text=True, timeout=120)
    assert "howto/deploy-production" in done.stdout
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
              if line.startswith("import time:")}
    assert "tiktoken" not in loaded and "whoosh" in loaded  # counted here, from the table
    assert not loaded & {"asyncio", "urllib.request", "cached_property"}  # Whoosh's unused
    assert count_exact(text) <= 120


def test_a_process_counting_many_texts_loads_the_encoding(table: RankTable,
                                                          tmp_path: Path) -> None:
    """The ranks table serves a few counts (the hook's); past QUICK_COUNTS texts the
    encoding is loaded, since each count from the table costs a query per piece (a cold
    `notes recall` counts hundreds of blocks). Run in a fresh process: the encoding is
    loaded once per process."""
    import shutil

    shutil.copy(table.path, tmp_path / RANKS_FILE)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from memory.state.tokens import QUICK_COUNTS, TokenCounter, encoding\n"
        "counter = TokenCounter(Path(sys.argv[1]) / 'counts.sqlite')\n"
        "texts = [f'- block {n}: the eviction policy, again' for n in range(QUICK_COUNTS + 5)]\n"
        "counts = [counter.count(t, remember=False) for t in texts[:QUICK_COUNTS]]\n"
        "print(encoding.cache_info().currsize)\n"
        "counts += [counter.count(t, remember=False) for t in texts[QUICK_COUNTS:]]\n"
        "print(encoding.cache_info().currsize)\n"
        "from memory.state.tokens import count_exact\n"
        "print(counts == [count_exact(t) for t in texts])\n")
    assert printed(script, str(tmp_path)) == ["0", "1", "True"]


@pytest.fixture(scope="module")
def bundled() -> BundledRanks:
    ranks = _bundled_ranks()
    assert ranks.usable()
    return ranks


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=60).map("".join))
def test_counts_from_the_bundled_file_are_tiktokens(bundled: BundledRanks, text: str) -> None:
    assert bundled.count(text) == count_exact(text)


def test_the_bundled_file_is_looked_up_by_each_tokens_own_base64(bundled: BundledRanks) -> None:
    """A substring's rank is found by its base64: so every token the file holds must be
    written as ``b64encode`` writes it, and the ranks must be the encoding's."""
    assert dict(bundled.items()) == encoding()._mergeable_ranks
    assert all(base64.b64encode(base64.b64decode(key)) == key for key in bundled._table)


# Counts a note's sections as the index does (the cuts before '#' lines: count_parts), in a
# process of its own, and says whether the encoding was loaded and whether the counts are
# tiktoken's.
COUNT_A_NOTE = (
    "import sys\n"
    "from pathlib import Path\n"
    "from memory.index.documents import section_tokens\n"
    "from memory.model.note import parse_note\n"
    "from memory.state.tokens import TokenCounter, encoding\n"
    "counter = TokenCounter(Path(sys.argv[1]) / 'tokens.sqlite')\n"
    "note = parse_note(Path(sys.argv[2]).read_text(encoding='utf-8'))\n"
    "tokens = section_tokens(note, counter)\n"
    "print(encoding.cache_info().currsize)\n"
    "from memory.state.tokens import count_exact\n"
    "print(tokens[''] == count_exact(note.text) and all(\n"
    "    tokens[s.id] == count_exact(s.text) for s in note.sections))\n")


@pytest.mark.parametrize("with_table", [True, False])
def test_a_write_counts_its_note_without_loading_the_encoding(
        table: RankTable, tmp_path: Path, with_table: bool) -> None:
    """What a write counts (the sections of the note it wrote) comes from the store's ranks
    table, or in a new store without one from the bundled ranks file: tiktoken's counts,
    without the encoding's load (most of `notes init`, `log`, `state` in a new store)."""
    import shutil

    if with_table:
        shutil.copy(table.path, tmp_path / RANKS_FILE)
    done = subprocess.run([sys.executable, "-c", COUNT_A_NOTE, str(tmp_path),
                           str(EXAMPLE / "infra" / "redis.md")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "True"]
    assert (tmp_path / RANKS_FILE).exists() == with_table  # a count writes no table


def test_the_table_is_written_from_the_bundled_file(tmp_path: Path) -> None:
    """A process that counted from the bundled file writes the table from it (the hook's
    keep_token_ranks), without loading the encoding: the table the encoding writes."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from memory.state.tokens import TokenCounter, encoding\n"
        "counter = TokenCounter(Path(sys.argv[1]) / 'tokens.sqlite')\n"
        "counter.count('- eviction is allkeys-lru')\n"
        "print(counter.ranks_read(), counter.save_ranks(), encoding.cache_info().currsize)\n")
    assert printed(script, str(tmp_path)) == ["True", "True", "0"]
    assert write_ranks(tmp_path / "from-encoding.sqlite", encoding())
    rows = "SELECT * FROM ranks ORDER BY piece"
    meta = "SELECT key, value FROM meta ORDER BY key"
    with sqlite3.connect(tmp_path / RANKS_FILE) as ours, \
            sqlite3.connect(tmp_path / "from-encoding.sqlite") as theirs:
        assert ours.execute(rows).fetchall() == theirs.execute(rows).fetchall()
        assert ours.execute(meta).fetchall() == theirs.execute(meta).fetchall()


@pytest.mark.parametrize("with_table", [True, False])
def test_a_process_counting_much_new_text_loads_the_encoding(
        table: RankTable, tmp_path: Path, with_table: bool) -> None:
    """A few long texts are many characters to count piece by piece: past QUICK_CHARS
    characters the encoding is loaded (a first `notes index` counts every section), from the
    table as from the bundled file."""
    import shutil

    if with_table:
        shutil.copy(table.path, tmp_path / RANKS_FILE)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from memory.state.tokens import QUICK_CHARS, TokenCounter, count_exact, encoding\n"
        "counter = TokenCounter(Path(sys.argv[1]) / 'counts.sqlite')\n"
        "texts = [f'- line {n} of a long section about the eviction policy.\\n' * 60\n"
        "         for n in range(12)]\n"
        "first = 0\n"
        "while first < len(texts) and sum(map(len, texts[:first + 1])) < QUICK_CHARS:\n"
        "    first += 1\n"
        "counts = [counter.count(t) for t in texts[:first + 1]]\n"
        "print(first + 1 < len(texts), encoding.cache_info().currsize)\n"
        "counts += [counter.count(t) for t in texts[first + 1:]]\n"
        "print(encoding.cache_info().currsize, counts == [count_exact(t) for t in texts])\n")
    assert printed(script, str(tmp_path)) == ["True", "0", "1", "True"]


def test_an_index_build_counts_with_the_encoding_from_the_start(tmp_path: Path) -> None:
    """A build that reads more text than the quick counts cover (the example's 62 notes)
    loads the encoding at its first new count, instead of first counting QUICK_CHARS
    characters piece by piece (and reading the bundled ranks file) for nothing."""
    import shutil

    shutil.copytree(EXAMPLE, tmp_path / "notes", ignore=shutil.ignore_patterns(".*"))
    script = (
        "import sys\n"
        "from memory import Notes, load_config\n"
        "notes = Notes(load_config(sys.argv[1], env={}), notify=lambda _: None)\n"
        "notes.index.refresh()\n"
        "print(notes.counter.quick_counted, notes.counter.encoding_loaded(),\n"
        "      len(notes.list_notes()))\n"
        "notes.close()\n")
    assert printed(script, str(tmp_path / "notes"), timeout=300) == ["0", "True", "62"]
