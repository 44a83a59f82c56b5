"""A history entry's time must exist, and a note keeps its own line ends, CR-only ones (old
Mac) too, on every line the tools add (issue 33, item 9). Through the real CLI."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import RunCli

CR_NOTE = ("---\rtitle: Old Mac\rtags: []\r---\r# Old Mac\r\r## Current state\r\r"
           "- written on a Mac of 1999\r\r## History\r\r### 2026-01-02 · First\rBody one.\r")


def _refused(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.startswith("Error: ") and "Traceback" not in result.stderr
    return result.stderr


@pytest.mark.parametrize("stamp", ["2026-01-01 25:61", "2026-01-01 24:00",
                                   "2026-01-01 23:60", "2026-01-01 99:00"])
def test_a_time_that_does_not_exist_is_refused(run_cli: RunCli, store_dir: Path,
                                               stamp: str) -> None:
    before = (store_dir / "infra/redis.md").read_bytes()
    message = _refused(run_cli("log", "infra/redis", "--title", "t", "--date", stamp,
                               input="body\n"))
    assert stamp in message and "00-23" in message and "00-59" in message
    assert (store_dir / "infra/redis.md").read_bytes() == before


def test_the_last_minute_of_a_day_is_a_time(run_cli: RunCli, store_dir: Path) -> None:
    wrote = run_cli("log", "infra/redis", "--title", "late", "--date", "2026-01-01 23:59",
                    input="body\n")
    assert wrote.returncode == 0, wrote.stderr
    assert "### 2026-01-01 23:59 · late\n" in (store_dir / "infra/redis.md").read_text()


def test_a_cr_only_note_stays_cr_only(run_cli: RunCli, tmp_path: Path) -> None:
    store = tmp_path / "mac"
    store.mkdir()
    path = store / "old-mac.md"
    path.write_bytes(CR_NOTE.encode())
    logged = run_cli("log", "old-mac", "--title", "Second", "--date", "2026-01-03",
                     input="line one\nline two\r\nline three\n", notes_dir=store)
    assert logged.returncode == 0, logged.stderr
    stated = run_cli("state", "old-mac", input="- new state\n- second line\n",
                     notes_dir=store)
    assert stated.returncode == 0, stated.stderr
    again = run_cli("log", "old-mac", "--title", "Third", "--date", "2026-01-04 09:30",
                    input="last\n", notes_dir=store)
    assert again.returncode == 0, again.stderr
    raw = path.read_bytes()
    assert b"\n" not in raw, raw  # every line the tools added ends in CR, as the note's do
    assert b"### 2026-01-02 \xc2\xb7 First\rBody one.\r" in raw
    assert b"### 2026-01-03 \xc2\xb7 Second\rline one\rline two\rline three\r" in raw
    assert b"## Current state\r- new state\r- second line\r\r## History\r" in raw
    assert raw.endswith(b"### 2026-01-04 09:30 \xc2\xb7 Third\rlast\r")
    checked = run_cli("check", notes_dir=store)
    assert checked.returncode == 0 and "no problems found" in checked.stdout, checked
    read = run_cli("read", "old-mac", "2026-01-03-second", notes_dir=store)
    assert "line three" in read.stdout, read
