"""A folder or file given on the command line that the OS refuses (a part of it is a file,
a place that takes no new folders, a name too long) ends in one line, ``Error: …`` naming
the path, why and what to do, exit 1; and an output folder is checked before any long work
(issue 33, item 8)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_bench_policies import write_tiny_bench

from conftest import RunCli, run_lab

UNDER_A_FILE = ("a part of it is a file, not a folder", "FILE/sub")
IN_PROC = ("cannot be made there", "/proc/self/x")
TOO_LONG = ("too long for the file system", "LONG")


def _path(kind: str, tmp_path: Path) -> str:
    if kind == "FILE/sub":
        (tmp_path / "FILE").write_text("a regular file\n")
        return str(tmp_path / "FILE" / "sub")
    if kind == "LONG":
        return str(tmp_path / ("x" * 300))
    return kind


def _one_clear_line(result: subprocess.CompletedProcess[str], path: str, why: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, result.stderr
    assert why in lines[0] and "; give " in lines[0], lines[0]  # the why, then the next step
    if path.startswith("/proc/self/"):  # resolved by some commands to /proc/PID/
        assert "/proc/" in lines[0] and "/x " in lines[0], lines[0]
    else:
        assert path in lines[0], lines[0]


@pytest.mark.parametrize("why,kind", [UNDER_A_FILE, IN_PROC, TOO_LONG])
def test_promote_report_dir(run_cli: RunCli, tmp_path: Path, why: str, kind: str) -> None:
    path = _path(kind, tmp_path)
    result = run_cli("promote", "--report-dir", path)
    _one_clear_line(result, path, why)
    assert "--report-dir" in result.stderr


@pytest.mark.parametrize("why,kind", [UNDER_A_FILE, IN_PROC, TOO_LONG])
def test_init_a_folder_that_cannot_be(run_cli: RunCli, tmp_path: Path, why: str,
                                      kind: str) -> None:
    path = _path(kind, tmp_path)
    _one_clear_line(run_cli("init", path), path, why)
    _one_clear_line(run_cli("--notes", path, "init"), path, why)


@pytest.mark.parametrize("args", [["--notes", "{p}", "suggest", "redis"],
                                  ["--state-dir", "{p}", "suggest", "redis"],
                                  ["import", "--claude", "--project", "{p}"],
                                  ["install", "claude-code", "--dry-run", "--project", "{p}"]])
def test_a_name_too_long_anywhere(run_cli: RunCli, tmp_path: Path, args: list[str]) -> None:
    path = _path("LONG", tmp_path)
    result = run_cli(*[a.replace("{p}", path) for a in args])
    _one_clear_line(result, path, TOO_LONG[0])


@pytest.mark.parametrize("why,kind", [UNDER_A_FILE, IN_PROC])
def test_bench_output_folders_are_checked_first(run_cli: RunCli, tmp_path: Path, why: str,
                                                kind: str, store_dir: Path) -> None:
    path = _path(kind, tmp_path)
    bench = write_tiny_bench(tmp_path / "tiny")
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    cases = [(["bench", "run", str(bench), "--out", path], "--out"),
             (["bench", "run", str(bench), "--vectors", path], "--vectors"),
             (["bench", "from-transcripts", str(transcripts), "--notes", str(store_dir),
               "--out", path], "--out")]
    lab = [(["perf", "--generate-only", "--scale", "0.01", "--work", path], "--work"),
           (["perf", "--scale", "0.01", "--out", path], "--out"),
           (["visible", "--benches", "example-followups", "--work", path], "--work"),
           (["visible", "--benches", "example-followups", "--out", path], "--out")]
    ran = [(run_cli(*args), args, option) for args, option in cases]
    ran += [(run_lab(args), args, option) for args, option in lab]  # python -m benchmarks
    for result, args, option in ran:
        _one_clear_line(result, path, why)
        assert f"the {option} folder" in result.stderr, (args, result.stderr)
    assert not (bench / "report").exists()  # refused before the run, not after it


def test_import_skips_a_named_pipe(run_cli_process: RunCli, tmp_path: Path) -> None:
    """A named pipe among the Markdown files blocked `notes import` for good (reading it
    waits for a writer); now it is skipped, and one given by name is refused."""
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "real.md").write_text("# Real\n\nA real note.\n")
    os.mkfifo(folder / "pipe.md")
    result = run_cli_process("import", "--dry-run", str(folder))  # killed after 120 s
    assert result.returncode == 0, result.stderr
    assert "memory/real" in result.stdout and "not a regular file" in result.stdout
    named = run_cli_process("import", str(folder / "pipe.md"))
    _one_clear_line(named, str(folder / "pipe.md"), "not a regular file")
