"""The stress suite: every test here is marked `stress` and records the figures it measured
(the ``figures`` fixture and the report: tests/reliability.py). It runs as part of the ordinary
test command; ``-m "not stress"`` leaves it out.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.stress)
