"""The stress suite: every test here is marked `stress` and records the figures it measured.

Run it alone, and write docs/reliability.md from its figures, with:

    NOTES_RELIABILITY_REPORT=docs/reliability.md .venv/bin/python -m pytest tests/stress

It also runs as part of the ordinary test command (a few minutes on two cores).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
from collections.abc import Iterator
from pathlib import Path

import pytest

from stress.helpers import FIGURES, Figures


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.stress)


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Iterator[Figures]:
    doc = (request.function.__doc__ or request.function.__name__).strip().splitlines()[0]
    yield Figures(doc)


def _outcome(exitstatus: int) -> str:
    return "passed" if exitstatus == 0 else f"FAILED (exit status {exitstatus})"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    target = os.environ.get("NOTES_RELIABILITY_REPORT")
    if not target or not FIGURES:
        return
    lines = ["# Reliability figures", "",
             f"Produced {dt.datetime.now().isoformat(timespec='minutes')} on "
             f"{platform.machine()} ({os.cpu_count()} cores) by the committed stress suite, "
             f"which {_outcome(exitstatus)}:",
             "", "    NOTES_RELIABILITY_REPORT=docs/reliability.md .venv/bin/python -m pytest "
             "tests/stress", "",
             "Each section is one test of `tests/stress/`; its assertions are the claims, and "
             "these are the figures it measured on the way.", ""]
    for title, rows in FIGURES.items():
        lines += [f"## {title}", "", "| what | figure |", "|---|---|"]
        lines += [f"| {what} | {value} |" for what, value in rows]
        lines.append("")
    Path(target).write_text("\n".join(lines))
