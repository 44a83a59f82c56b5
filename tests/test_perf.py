"""The store generator and `python -m benchmarks perf`: deterministic, realistic, end to end.

No timing is asserted here: figures depend on the machine; the report states the targets.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from benchmarks.perf.generator import TOKENS_PER_NOTE, generate_store, load_queries
from benchmarks.perf.report import KEEP_MARKER
from conftest import run_lab
from memory.model.note import parse_note
from memory.state.tokens import count_exact

SCALE = 0.05  # 11 notes, about 50,000 tokens


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    generate_store(out, SCALE, seed=7, queries=60)
    return out


def test_same_seed_same_bytes(generated: Path, tmp_path: Path) -> None:
    generate_store(tmp_path / "again", SCALE, seed=7, queries=60)
    assert _files(tmp_path / "again") == _files(generated)
    generate_store(tmp_path / "other", SCALE, seed=8, queries=60)
    assert _files(tmp_path / "other" / "notes") != _files(generated / "notes")


def test_a_smaller_scale_is_a_prefix(generated: Path, tmp_path: Path) -> None:
    manifest = generate_store(tmp_path / "small", 0.02, seed=7, queries=10)
    small = _files(tmp_path / "small" / "notes")
    assert len(small) == manifest["notes"] == 4
    assert all(_files(generated / "notes")[name] == data for name, data in small.items())


def test_size_and_shape(generated: Path) -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted((generated / "notes").rglob("*.md"))]
    assert len(texts) == round(220 * SCALE)
    tokens = [count_exact(t) for t in texts]
    assert 0.75 * TOKENS_PER_NOTE <= sum(tokens) / len(tokens) <= 1.25 * TOKENS_PER_NOTE
    assert 0.8 * 1_000_000 * SCALE <= sum(tokens) <= 1.2 * 1_000_000 * SCALE
    for text in texts:
        note = parse_note(text)
        assert note.state is not None and 120 <= count_exact(note.state.text) <= 800
        assert 10 <= len(note.entries) <= 40
        assert note.tags and note.aliases
    joined = "\n".join(texts)
    assert "```" in joined and "`" in joined.replace("```", "")
    for word in (" de la ", " the ", "ó", "á", "## Estado actual", "## Current state"):
        assert word in joined, word


def test_every_note_parses_cleanly_and_round_trips(generated: Path) -> None:
    for path in sorted((generated / "notes").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        note = parse_note(text)
        assert note.problems == (), (path, note.problems)
        assert note.render() == text
        ids = [s.id for s in note.sections]
        assert len(ids) == len(set(ids))


def test_queries_name_their_notes(generated: Path) -> None:
    queries = load_queries(generated / "queries.jsonl")
    assert len(queries) == 60
    kinds = {q.kind.removesuffix("-noaccent") for q in queries}
    assert kinds == {"topic-es", "topic-en", "cross", "entry"}
    assert any(q.kind.endswith("-noaccent") and q.question.isascii() for q in queries)
    for query in queries:
        note = parse_note((generated / "notes" / f"{query.note}.md").read_text("utf-8"))
        if query.section:
            assert note.section(query.section) is not None, query


@pytest.mark.slow(40)
def test_bench_perf_end_to_end(tmp_path: Path) -> None:
    import importlib.util

    backends = "whoosh,tantivy" if importlib.util.find_spec("tantivy") else "whoosh"
    out = tmp_path / "report"
    out.mkdir()
    (out / "performance.md").write_text(f"stale figures\n{KEEP_MARKER}\n## Why, by hand\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    # one run of each timed step: the harness's every figure is still made and checked (two
    # runs measured the same code twice, 9 s of the suite's CPU)
    result = run_lab(["perf", "--scale", "0.02", "--queries", "10", "--runs", "1",
                      "--backend", backends, "--out", str(out), "--work",
                      str(tmp_path / "work")], env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    data = json.loads((out / "performance.json").read_text())
    assert data["command"].startswith("python -m benchmarks perf --scale 0.02")
    scale = data["scales"][0]
    assert scale["notes"] == 4 and scale["fts5"]["build_s"] > 0
    for backend in backends.split(","):
        figures = scale["backends"][backend]
        assert figures["build"]["tokens"] > 10_000
        assert figures["warm"]["suggest"]["n"] == 10
        assert figures["update"]["found"] == figures["update"]["runs"] == 1
        assert figures["mcp"]["peak_rss_mb"] > 0
        mcp = figures["mcp"]  # the start against a bare fastmcp server's, in the same run
        assert mcp["first_answer_ratio"] == pytest.approx(
            mcp["first_answer_s"] / mcp["bare_first_answer_s"])
        assert mcp["bare_first_answer_s"] > 0.05
        hook = figures["hook"]
        assert hook["cold"]["runs"] == hook["served"]["runs"] == 3  # 3 hooks a --runs
        assert hook["same_answers"] == hook["answers"] == 3  # the server answers alike
        assert hook["cold"]["ratio"] > 1 and hook["served"]["bare_median_ms"] > 0
    report = (out / "performance.md").read_text()
    assert "## Targets" in report and "python -m benchmarks perf --scale 0.02" in report
    assert "stale figures" not in report  # rewritten above the marker, kept below it
    assert report.index("## Targets") < report.index(KEEP_MARKER) < report.index("## Why, by")
    assert (out / "performance.png").stat().st_size > 0
    assert "report in" in result.stdout


def test_a_process_that_ignores_sigterm_is_killed_not_waited_on_forever() -> None:
    """The harness stops `notes watch` and servers it started; on a loaded machine a clean
    exit can be slow, and the run must go on instead of failing on a timeout."""
    import sys
    import time

    from benchmarks.perf.measure import stop_process

    ignore = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); " \
             "print('ready', flush=True); time.sleep(60)"
    proc = subprocess.Popen([sys.executable, "-c", ignore], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    start = time.monotonic()
    stop_process(proc, patience=0.5)
    proc.stdout.close()
    assert proc.returncode == -9
    assert time.monotonic() - start < 30
