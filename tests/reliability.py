"""Figures that the attack tests measure on the way, and docs/reliability.md made from them.

Any test can take the ``figures`` fixture (tests/conftest.py) and ``add`` rows under its
title (the first line of its docstring). With ``NOTES_RELIABILITY_REPORT=FILE`` set, the test
session writes every figure it collected into FILE when it ends:

    NOTES_RELIABILITY_REPORT=docs/reliability.md NOTES_STRESS_SECONDS=60 \\
        .venv/bin/python -m pytest
"""

from __future__ import annotations

import datetime as dt
import os
import platform
from pathlib import Path

FIGURES: dict[str, list[tuple[str, str]]] = {}
COMMAND = ("NOTES_RELIABILITY_REPORT=docs/reliability.md NOTES_STRESS_SECONDS=60 "
           ".venv/bin/python -m pytest")


class Figures:
    """What one scenario measured, as (what, value) rows under its title."""

    def __init__(self, title: str) -> None:
        self.rows = FIGURES.setdefault(title, [])

    def add(self, what: str, value: object) -> None:
        self.rows.append((what, str(value)))


def write_report(target: Path, exitstatus: int) -> None:
    outcome = "passed" if exitstatus == 0 else f"FAILED (exit status {exitstatus})"
    lines = ["# Reliability figures", "",
             f"Produced {dt.datetime.now().isoformat(timespec='minutes')} on "
             f"{platform.machine()} ({os.cpu_count()} cores) by the committed test suite, "
             f"which {outcome}:", "", f"    {COMMAND}", "",
             "Each section is one test (the attack tests of `tests/` and the stress suite in "
             "`tests/stress/`); its assertions are the claims, and these are the figures it "
             "measured on the way.", ""]
    for title, rows in FIGURES.items():
        lines += [f"## {title}", "", "| what | figure |", "|---|---|"]
        lines += [f"| {what} | {value} |" for what, value in rows]
        lines.append("")
    target.write_text("\n".join(lines))
