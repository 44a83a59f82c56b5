"""Figures that the attack tests measure on the way, and docs/reliability.md made from them.

Any test can take the ``figures`` fixture (tests/conftest.py) and ``add`` rows under its
title (the first line of its docstring). With ``NOTES_RELIABILITY_REPORT=FILE`` set, the test
session writes every figure it collected into FILE when it ends, in the order of the tests in
the collection. Under pytest-xdist each worker collects the figures of the tests it ran and
hands them to the controller when it finishes (:func:`dump`, :func:`merge`, wired in
tests/conftest.py), which writes the report:

    NOTES_RELIABILITY_REPORT=docs/reliability.md NOTES_STRESS_SECONDS=60 \\
        .venv/bin/python -m pytest

What follows the line :data:`KEPT` in the report (prose written by hand) is kept as it is.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
from pathlib import Path

FIGURES: dict[str, list[tuple[str, str]]] = {}
ORDER: dict[str, int] = {}  # title: where its (first) test stands in the collection


def command() -> str:
    """The command that made the report, with the stress length it ran at."""
    seconds = os.environ.get("NOTES_STRESS_SECONDS", "4")
    return (f"NOTES_RELIABILITY_REPORT=docs/reliability.md NOTES_STRESS_SECONDS={seconds} "
            ".venv/bin/python -m pytest")


class Figures:
    """What one scenario measured, as (what, value) rows under its title."""

    def __init__(self, title: str, order: int = 0) -> None:
        self.rows = FIGURES.setdefault(title, [])
        ORDER[title] = min(ORDER.get(title, order), order)

    def add(self, what: str, value: object) -> None:
        self.rows.append((what, str(value)))


def dump() -> str:
    """This process's figures, for another process to :func:`merge`."""
    return json.dumps({"figures": FIGURES, "order": ORDER})


def merge(dumped: str) -> None:
    """Add the figures another process collected (a :func:`dump`) to this one's."""
    data = json.loads(dumped)
    for title, rows in data["figures"].items():
        FIGURES.setdefault(title, []).extend((what, value) for what, value in rows)
        order = int(data["order"].get(title, 0))
        ORDER[title] = min(ORDER.get(title, order), order)


def write_report(target: Path, exitstatus: int) -> None:
    outcome = "passed" if exitstatus == 0 else f"FAILED (exit status {exitstatus})"
    lines = ["# Reliability figures", "",
             f"Produced {dt.datetime.now().isoformat(timespec='minutes')} on "
             f"{platform.machine()} ({os.cpu_count()} cores) by the committed test suite, "
             f"which {outcome}:", "", f"    {command()}", "",
             "Each section is one test (the attack tests of `tests/` and the stress suite in "
             "`tests/stress/`); its assertions are the claims, and these are the figures it "
             "measured on the way.", ""]
    for title in sorted(FIGURES, key=lambda title: ORDER.get(title, 0)):
        rows = FIGURES[title]
        lines += [f"## {title}", "", "| what | figure |", "|---|---|"]
        lines += [f"| {what} | {value} |" for what, value in rows]
        lines.append("")
    target.write_text("\n".join(lines) + _kept(target))


KEPT = "<!-- Written by hand from here on: kept when the figures are made again. -->"


def _kept(target: Path) -> str:
    """The report's hand-written end (from :data:`KEPT` on), carried into the new report."""
    try:
        old = target.read_text()
    except OSError:
        return ""
    return "\n" + old[old.index(KEPT):] if KEPT in old else ""
