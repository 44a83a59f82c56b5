"""Shared fixtures: every test gets its own copy of the example store and its own state."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memory import Notes, load_config
from reliability import FIGURES, Figures, write_report

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "notes_example"
NOTES_BIN = Path(sys.executable).parent / "notes"


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the user's NOTES_* settings, home, data, config or cache folders: the
    per-user default store and Claude Code's files (~/.claude*) are the test's own."""
    for name in list(os.environ):
        if name.startswith("NOTES_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    """A private copy of notes_example/ (without any index)."""
    target = tmp_path / "notes"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".*"))
    return target


@pytest.fixture
def notes(store_dir: Path) -> Iterator[Notes]:
    messages: list[str] = []
    instance = Notes(load_config(store_dir), notify=messages.append)
    yield instance
    instance.close()


@pytest.fixture
def empty_store(tmp_path: Path) -> Path:
    target = tmp_path / "empty"
    target.mkdir()
    return target


RunCli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_cli(store_dir: Path) -> RunCli:
    """Run the installed `notes` command as a user would, on the test's store."""

    def run(*args: str, input: str | None = None, notes_dir: Path | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "NOTES_DIR": str(notes_dir or store_dir), **(env or {})}
        return subprocess.run([str(NOTES_BIN), *args], input=input, capture_output=True,
                              text=True, env=full_env, timeout=120)

    return run


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Iterator[Figures]:
    """Rows for docs/reliability.md under this test's title (see tests/reliability.py)."""
    doc = (request.function.__doc__ or request.function.__name__).strip().splitlines()[0]
    yield Figures(doc)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = os.environ.get("NOTES_RELIABILITY_REPORT")
    if target and FIGURES:
        write_report(Path(target), exitstatus)
