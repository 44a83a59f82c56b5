"""`notes bench` run as a user would: from-locomo, then run on the first 50 questions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import LOCOMO, shared_file

from memory.bench.policies import POLICIES

NOTES_BIN = Path(sys.executable).parent / "notes"


def notes(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(NOTES_BIN), *args], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))


@pytest.mark.slow(30)
def test_from_locomo_then_run(tmp_path: Path) -> None:
    shared_file(LOCOMO)
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


@pytest.mark.slow(9)
def test_backends_side_by_side(tmp_path: Path) -> None:
    """`--backend whoosh,tantivy`: each policy once per backend in one report."""
    pytest.importorskip("tantivy")
    from test_bench_policies import write_tiny_bench

    bench = write_tiny_bench(tmp_path / "tiny")
    ran = notes("bench", "run", str(bench), "--backend", "whoosh,tantivy", "--policies",
                "ladder@1,fragments@5", "--json", "--out", str(tmp_path / "both"))
    assert ran.returncode == 0, ran.stderr
    data = json.loads(ran.stdout)
    assert data["backends"] == ["whoosh", "tantivy"]
    assert list(data["policies"]) == ["ladder@1 [whoosh]", "ladder@1 [tantivy]",
                                      "fragments@5 [whoosh]", "fragments@5 [tantivy]"]
    assert data["policies"]["ladder@1 [whoosh]"]["hits"] == 4  # as in a whoosh-only run
    assert data["policies"]["fragments@5 [whoosh]"]["hits"] == 3
    assert all(f["questions"] == 5 for f in data["policies"].values())
    assert set(data["routing_by_backend"]) == {"whoosh", "tantivy"}
    text = (tmp_path / "both" / "report.md").read_text()
    assert "## Backends side by side" in text and "| ladder@1 |" in text
    first = json.loads((tmp_path / "both" / "results.jsonl").read_text().splitlines()[0])
    assert set(first["gold_ranks"]) == {"whoosh", "tantivy"}
    one = notes("bench", "run", str(bench), "--backend", "tantivy", "--limit", "2", "--out",
                str(tmp_path / "one"))
    assert one.returncode == 0, one.stderr
    assert "| ladder@1 |" in one.stdout and "[tantivy]" not in one.stdout
    assert "- index backend: tantivy" in (tmp_path / "one" / "report.md").read_text()
    wrong = notes("bench", "run", str(bench), "--backend", "whoosh,lucene")
    assert wrong.returncode == 1 and "--backend whoosh,tantivy" in wrong.stderr
