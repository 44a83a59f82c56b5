"""A state folder on a full disk, on a read-only file system, not writable by this user, or
impossible to make: the usage log and the token cache degrade, never a traceback.

The ladder still answers (logging is skipped with one notice on stderr, token counts stay in
memory) and `notes promote` reads what is there, read-only, or says in one `Error:` line what to
do. The disks are real: a small tmpfs mounted for the test (skipped where mounting is not
permitted), and another user is a real one (``setpriv`` to nobody, skipped when not root).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from disks import fill_disk, mounted_tmpfs

from conftest import NOTES_BIN, RunCli, unprivileged
from memory.state.tokens import TokenCounter, count_exact

LADDER = [("suggest", "redis eviction"), ("map", "infra/redis"),
          ("read", "infra/redis", "state"), ("recall", "redis eviction", "--budget", "300")]
OWNER = unprivileged()[1]  # of the shared copy: not the user the commands run as


def assert_clean(result: subprocess.CompletedProcess[str], code: int = 0) -> None:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr, result.stderr


def usage_notices(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "usage log" in line]


def built_state(run_cli: RunCli, store_dir: Path) -> Path:
    """The store's state as a user has it: index, ledger, token cache and a usage log."""
    assert_clean(run_cli("suggest", "redis"))
    assert_clean(run_cli("read", "infra/redis", "state"))
    assert_clean(run_cli("check"), code=run_cli("check").returncode)
    return store_dir / ".notes"


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A fresh 32 MB tmpfs, unmounted after the test."""
    with mounted_tmpfs(tmp_path / "disk", 32) as where:
        yield where


def run_on(run_cli: RunCli, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env={"NOTES_STATE_DIR": str(state)})


def check_ladder_and_promote(run_cli: RunCli, state: Path, reason: str) -> None:
    for args in LADDER:
        result = run_on(run_cli, state, *args)
        assert_clean(result)
        notices = usage_notices(result.stderr)
        assert len(notices) == 1 and reason in notices[0], result.stderr
        assert "could not write the usage log" in notices[0]
    report = run_on(run_cli, state, "promote")
    assert_clean(report)
    assert "ladder calls in" in report.stdout  # read from the file, read-only


# -- a full disk --------------------------------------------------------------------------
def test_a_full_disk_leaves_the_ladder_and_promote_answering(run_cli: RunCli, store_dir: Path,
                                                             tmpfs: Path) -> None:
    shutil.copytree(built_state(run_cli, store_dir), tmpfs, dirs_exist_ok=True)
    fill_disk(tmpfs)
    check_ladder_and_promote(run_cli, tmpfs, "is full")


def test_a_full_disk_leaves_check_answering(run_cli: RunCli, store_dir: Path,
                                            tmpfs: Path) -> None:
    shutil.copytree(built_state(run_cli, store_dir), tmpfs, dirs_exist_ok=True)
    fill_disk(tmpfs)
    result = run_on(run_cli, tmpfs, "check")
    assert "Traceback" not in result.stderr, result.stderr


# -- a read-only file system ----------------------------------------------------------------
def remount_read_only(disk: Path) -> None:
    done = subprocess.run(["mount", "-o", "remount,ro", str(disk)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot remount read-only here: {done.stderr.strip()}")


def test_a_read_only_state_folder_leaves_the_ladder_and_promote_answering(
        run_cli: RunCli, store_dir: Path, tmpfs: Path) -> None:
    shutil.copytree(built_state(run_cli, store_dir), tmpfs, dirs_exist_ok=True)
    remount_read_only(tmpfs)
    check_ladder_and_promote(run_cli, tmpfs, "read-only")


def test_a_read_only_state_folder_leaves_check_answering(run_cli: RunCli, store_dir: Path,
                                                         tmpfs: Path) -> None:
    shutil.copytree(built_state(run_cli, store_dir), tmpfs, dirs_exist_ok=True)
    remount_read_only(tmpfs)
    checked = run_on(run_cli, tmpfs, "check")
    assert "Traceback" not in checked.stderr, checked.stderr


# -- another user ---------------------------------------------------------------------------
@pytest.fixture
def shared_copy(run_cli: RunCli, store_dir: Path) -> Iterator[tuple[Path, Path]]:
    """The store and its state copied where any user can read them, owned by another user
    than the one the commands run as (:func:`as_nobody`), so that none may write them."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("running as another user needs root and setpriv")
    state = built_state(run_cli, store_dir)
    top = Path(tempfile.mkdtemp(prefix="notes-shared-", dir="/tmp"))
    try:
        shutil.copytree(store_dir, top / "notes", ignore=shutil.ignore_patterns(".notes"))
        shutil.copytree(state, top / "state")
        for folder, _dirs, names in os.walk(top):
            os.chmod(folder, 0o755)
            os.chown(folder, OWNER, OWNER)
            for name in names:
                os.chmod(Path(folder) / name, 0o644)
                os.chown(Path(folder) / name, OWNER, OWNER)
        yield top / "notes", top / "state"
    finally:
        shutil.rmtree(top)


def as_nobody(notes: Path, state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NOTES_DIR": str(notes), "NOTES_STATE_DIR": str(state),
           "HOME": "/nonexistent"}
    runner, _ = unprivileged()  # able to run this checkout's notes, even in a private folder
    return subprocess.run([*runner, str(NOTES_BIN), *args], capture_output=True, text=True,
                          env=env, timeout=120)


def test_a_state_folder_this_user_cannot_write_leaves_the_ladder_and_promote_answering(
        shared_copy: tuple[Path, Path]) -> None:
    notes, state = shared_copy
    for args in LADDER:
        result = as_nobody(notes, state, *args)
        assert_clean(result)
        notices = usage_notices(result.stderr)
        assert len(notices) == 1 and "not writable by this user" in notices[0], result.stderr
    report = as_nobody(notes, state, "promote", "--json")
    assert_clean(report)
    assert '"calls": ' in report.stdout


# -- a state folder that cannot exist (a file where a folder should be) ---------------------
def test_a_state_folder_under_a_file_reads_and_promote_says_what_to_do(
        run_cli: RunCli, tmp_path: Path) -> None:
    blocker = tmp_path / "state-file"
    blocker.write_text("not a folder")
    state = blocker / "state"
    result = run_on(run_cli, state, "read", "infra/redis", "state")
    assert_clean(result)
    notices = usage_notices(result.stderr)
    assert len(notices) == 1 and "is a file, not a folder" in notices[0]
    promote = run_on(run_cli, state, "promote")
    assert_clean(promote, code=1)
    errors = [line for line in promote.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "NOTES_STATE_DIR" in errors[0], promote.stderr


def test_a_state_folder_under_a_file_suggest_fails_in_one_line(run_cli: RunCli,
                                                               tmp_path: Path) -> None:
    blocker = tmp_path / "state-file"
    blocker.write_text("not a folder")
    result = run_on(run_cli, blocker / "state", "suggest", "redis")
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert result.returncode == 0 or (result.returncode == 1 and len(errors) == 1
                                      and "NOTES_STATE_DIR" in errors[0]), result.stderr


def test_the_token_cache_on_a_full_disk_counts_in_memory(tmpfs: Path) -> None:
    path = tmpfs / "tokens.sqlite"
    known = "## Current state\n- known before the disk filled\n"
    first = TokenCounter(path)
    first.count(known)
    first.flush()
    fill_disk(tmpfs)
    messages: list[str] = []
    counter = TokenCounter(path, report=messages.append)
    texts = [f"new text number {i} that the full disk cannot keep\n" * 20 for i in range(600)]
    assert [counter.count(t) for t in texts] == [count_exact(t) for t in texts]
    counter.flush()
    assert counter.count(known) == count_exact(known)
    assert len(messages) == 1 and "is full" in messages[0], messages
