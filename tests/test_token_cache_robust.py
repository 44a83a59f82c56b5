"""The token cache (``tokens.sqlite``) is only a cache: whatever happens to it, counts are right
and nothing raises. A damaged file is started anew, a bad value is recounted, a folder that
cannot be written leaves the counts in memory."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memory.state.tokens import TokenCounter, count_exact

TEXT = "## Current state\n- Redis evicts with allkeys-lru since the 2026 incident.\n"


def cached(path: Path) -> dict[str, int]:
    db = sqlite3.connect(path)
    rows = dict(db.execute("SELECT h, n FROM tokens").fetchall())
    db.close()
    return rows


def test_a_cache_folder_that_cannot_be_made_counts_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("a file where the state folder should be")
    messages: list[str] = []
    counter = TokenCounter(blocker / "tokens.sqlite", report=messages.append)
    assert counter.count(TEXT) == count_exact(TEXT)
    counter.flush()
    assert counter.count(TEXT) == count_exact(TEXT)
    assert len(messages) == 1 and "kept in memory" in messages[0]
    assert "is a file, not a folder" in messages[0]


def test_a_damaged_cache_is_started_anew(tmp_path: Path) -> None:
    path = tmp_path / "tokens.sqlite"
    path.write_bytes(b"this is not a database" * 200)
    counter = TokenCounter(path)
    assert counter.count(TEXT) == count_exact(TEXT)
    counter.flush()
    assert list(cached(path).values()) == [count_exact(TEXT)]


def test_a_bad_value_in_the_cache_is_recounted(tmp_path: Path) -> None:
    path = tmp_path / "tokens.sqlite"
    first = TokenCounter(path)
    first.count(TEXT)
    first.flush()
    (key,) = cached(path)
    for bad in ("abc", -5, 1.5, b"\x00"):
        db = sqlite3.connect(path)
        with db:
            db.execute("UPDATE tokens SET n = ? WHERE h = ?", (bad, key))
        db.close()
        assert TokenCounter(path).count(TEXT) == count_exact(TEXT), bad


def test_a_page_damaged_under_a_running_counter_is_started_anew(tmp_path: Path) -> None:
    path = tmp_path / "tokens.sqlite"
    counter = TokenCounter(path)
    texts = [f"line {i} of a note about redis eviction\n" * 3 for i in range(3000)]
    for text in texts:
        counter.count(text)
    counter.flush()
    fresh = TokenCounter(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    size = path.stat().st_size
    assert size > 40 * 4096
    with open(path, "r+b") as handle:  # the file as another process's crash could leave it
        for page in range(2, size // 4096 - 1, 2):
            handle.seek(page * 4096 + 8)
            handle.write(b"\xa5" * 2000)
    for text in texts[:50]:
        assert fresh.count(text) == count_exact(text)
    fresh.flush()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()


def test_an_oversized_cache_is_started_anew(tmp_path: Path) -> None:
    path = tmp_path / "tokens.sqlite"
    counter = TokenCounter(path, max_bytes=256 * 1024)
    for i in range(6000):
        counter.count(f"text number {i}")
    counter.flush()
    big = path.stat().st_size
    reopened = TokenCounter(path, max_bytes=256 * 1024)
    assert reopened.count("text number 7") == count_exact("text number 7")
    reopened.flush()
    assert big > 256 * 1024 > path.stat().st_size


def test_texts_not_remembered_are_counted_once_a_while_and_never_kept_on_disk(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A block counted with ``remember=False`` for one question is not encoded again for
    the next (recall counts the same blocks question after question), yet it stays out of
    the remembered counts and the disk cache, and its memory is bounded."""
    from memory.state import tokens

    counter = TokenCounter(tmp_path / "tokens.sqlite")
    encoded: list[str] = []
    real = counter._count_new
    monkeypatch.setattr(counter, "_count_new", lambda text: encoded.append(text) or real(text))
    monkeypatch.setattr(tokens, "PASSING_ENTRIES", 3)
    block = "- 2026-06-22: Jonas dislikes the ArgoCD rollback"
    assert counter.count(block, remember=False) == count_exact(block)
    assert counter.count(block, remember=False) == count_exact(block)
    assert encoded == [block]
    counter.flush()
    with sqlite3.connect(tmp_path / "tokens.sqlite") as db:
        assert db.execute("SELECT count(*) FROM tokens").fetchone() == (0,)
    for n in range(5):
        counter.count(f"another block {n}", remember=False)
    assert len(counter._passing) == 3
    assert counter.count(block, remember=False) == count_exact(block)
    assert encoded.count(block) == 2  # pushed out by newer ones: counted again


def test_counting_leaves_no_copy_of_the_ranks_file_in_the_temporary_folder(
        tmp_path: Path) -> None:
    """tiktoken copies the bundled ranks file into ``$TMPDIR/data-gym-cache`` when it loads
    the encoding (1.6 MB left behind by a user's first `notes` call); the encoding is built
    here from the file itself, its hash checked as tiktoken checks it."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")}
    code = ("from memory.state.tokens import count_exact\n"
            "print(count_exact('¿cómo despliego a producción?'))\n")
    done = subprocess.run([sys.executable, "-c", code], env={**env, "TMPDIR": str(temp)},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == count_exact("¿cómo despliego a producción?") > 0
    assert list(temp.iterdir()) == []


def test_a_ranks_file_without_its_published_hash_is_refused() -> None:
    from memory.state.tokens import BPE_SHA256, bpe_ranks

    good = b"IQ== 0\nIg== 1\n"
    assert bpe_ranks(good, hashlib.sha256(good).hexdigest()) == {b"!": 0, b'"': 1}
    with pytest.raises(ValueError, match="published hash"):
        bpe_ranks(good, BPE_SHA256)
