"""`notes bench` run as a user would: from-locomo, then run on the first 50 questions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory.bench.policies import POLICIES

NOTES_BIN = Path(sys.executable).parent / "notes"
LOCOMO = (Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "locomo"
          / "locomo10.json")


def notes(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(NOTES_BIN), *args], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))


def test_from_locomo_then_run(tmp_path: Path) -> None:
    if not LOCOMO.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{LOCOMO} is missing and CI is set")
        pytest.skip(f"{LOCOMO} is not here")
    bench = tmp_path / "locomo"
    made = notes("bench", "from-locomo", str(LOCOMO), "--out", str(bench))
    assert made.returncode == 0, made.stderr
    assert "10 conversations, 272 sessions, 5882 turns, 1986 questions" in made.stdout
    again = notes("bench", "from-locomo", str(LOCOMO), "--out", str(bench))
    assert again.returncode == 1 and "--force" in again.stderr

    ran = notes("bench", "run", str(bench), "--limit", "50")
    assert ran.returncode == 0, ran.stderr
    report = bench / "report"
    for name in ("report.md", "report.json", "results.jsonl", "hit-rate-vs-tokens.png"):
        assert (report / name).stat().st_size > 0, name
    data = json.loads((report / "report.json").read_text())
    assert list(data["policies"]) == list(POLICIES)
    assert data["questions"]["read"] == 50
    assert data["questions"]["run"] + data["questions"]["skipped_no_answer_lines"] == 50
    assert data["policies"]["full"]["hit_rate"] == 1.0
    assert data["command"] == f"notes bench run {bench} --limit 50"
    assert not (bench / "notes" / ".notes").exists()  # the index lives outside the bench
    assert "| ladder@1 |" in ran.stdout
    wrong = notes("bench", "run", str(bench), "--policies", "ladder@9")
    assert wrong.returncode == 1 and "unknown policies: ladder@9" in wrong.stderr
