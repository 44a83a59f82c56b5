"""The `notes` command as a user runs it. The installed command runs as a subprocess
(``run_cli_process``) for each command group here (read, write, maintain; setup and bench in
their own files) and for the exit statuses and stderr; the other cases run the same click
group in this process (``run_cli``, see tests/conftest.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import SMALL_NOTES, RunCli


def test_suggest_prints_a_table_with_tokens_and_matched_words(run_cli_process: RunCli) -> None:
    run_cli = run_cli_process
    result = run_cli("suggest", "desplegar a producción", "--limit", "3")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("note |"))
    assert header == "note | title | score | state/total tokens | matched"
    rows = lines[lines.index(header) + 1:]
    assert len(rows) == 3
    assert rows[0].split(" | ")[0] == "howto/deploy-production"
    state, total = rows[0].split(" | ")[3].split("/")
    assert 0 < int(state) < int(total)
    assert "hidden" in lines[0]  # the list was cut, and the first line says so


def test_suggest_json_matches_the_table(run_cli: RunCli) -> None:
    result = run_cli("suggest", "deploy production rollback", "--json")
    data = json.loads(result.stdout)
    assert data["hits"][0]["note"] == "howto/deploy-production"
    assert data["total"] >= len(data["hits"]) and data["hidden"] == data["total"] - 5
    assert "deploy" in data["hits"][0]["matched"]


def test_suggest_json_lists_the_query_words_in_the_query_order(run_cli: RunCli) -> None:
    """The same question prints the same answer in every run (they came from a set, in an
    order that changed from one process to the next)."""
    words = ["redis", "eviction", "postgres", "backup", "celery", "deploy"]
    result = run_cli("suggest", " ".join(words), "--json")
    assert json.loads(result.stdout)["query_words"] == words


def test_map_tokens_add_up_to_the_note(run_cli: RunCli) -> None:
    data = json.loads(run_cli("map", "howto/deploy-production", "--json").stdout)
    top = [r for r in data["rows"] if r["parent"] is None]
    assert [r["kind"] for r in top][:3] == ["header", "state", "history"]
    # top-level sections partition the file: their tokens add up, give or take a few tokens
    # where BPE merges across a section boundary
    assert abs(sum(r["tokens"] for r in top) - data["tokens"]) <= len(top)
    entries = [r for r in data["rows"] if r["kind"] == "entry"]
    history = next(r for r in data["rows"] if r["kind"] == "history")
    assert len(entries) >= 15
    assert abs(history["tokens"] - sum(r["tokens"] for r in entries)) <= 10 + len(entries)


def test_map_with_query_scores_sections(run_cli: RunCli) -> None:
    result = run_cli("map", "howto/deploy-production", "--query", "rollback")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1] == "# | id | kind | date | tokens | match"
    assert lines[-1].startswith("best match: ")


def test_read_by_id_prefix_and_position(run_cli: RunCli) -> None:
    state = run_cli("read", "howto/deploy-production", "state")
    assert state.returncode == 0
    assert state.stdout.startswith("## Current state\n- GitOps: ")  # the text, no label
    by_pos = run_cli("read", "howto/deploy-production", "#2")
    assert by_pos.stdout == state.stdout
    whole = run_cli("read", "howto/deploy-production", "--json")
    assert json.loads(whole.stdout)["kind"] == "note"


def test_read_shows_the_text_alone_and_says_when_there_is_none(run_cli: RunCli,
                                                               tmp_path: Path) -> None:
    store = tmp_path / "bare"
    store.mkdir()
    (store / "blank.md").write_text("")
    empty = run_cli("read", "blank", notes_dir=store)
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout == "[blank · note · empty]\n"


def test_new_state_log_then_read_back(run_cli_process: RunCli, store_dir: Path) -> None:
    run_cli = run_cli_process
    created = run_cli("new", "team/retro", "--title", "Retrospectivas", "--tags", "team,proceso")
    assert created.returncode == 0, created.stderr
    state_set = run_cli("state", "team/retro", input="- Cada dos semanas, los viernes.\n")
    assert state_set.returncode == 0, state_set.stderr
    logged = run_cli("log", "team/retro", "--title", "Primera retro", "--date", "2026-11-27",
                     input="Acordamos revisar el tablero de incidencias.\n")
    assert logged.returncode == 0, logged.stderr
    assert "team/retro#2026-11-27-primera-retro" in logged.stdout
    read = run_cli("read", "team/retro", "2026-11-27")
    assert "Acordamos revisar el tablero" in read.stdout
    state = run_cli("read", "team/retro", "state")
    assert "Cada dos semanas" in state.stdout
    found = run_cli("suggest", "retrospectiva tablero incidencias", "--json")
    assert json.loads(found.stdout)["hits"][0]["note"] == "team/retro"
    text = (store_dir / "team" / "retro.md").read_text()
    # run inside this checkout, a project: the note is of it (docs/projects.md)
    assert text.startswith("---\ntitle: Retrospectivas\ntags: [team, proceso]\nproject: ")
    assert "\n---\n# Retrospectivas\n" in text


def test_errors_go_to_stderr_with_exit_1_and_a_next_step(run_cli_process: RunCli) -> None:
    run_cli = run_cli_process
    missing = run_cli("read", "howto/deploy-prod", "state")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.startswith("Error: no note 'howto/deploy-prod'; closest: ")
    section = run_cli("read", "howto/deploy-production", "nope")
    assert section.returncode == 1
    assert "sections are: header (" in section.stderr and "tokens)" in section.stderr
    escape = run_cli("read", "../etc/passwd", "state")
    assert escape.returncode == 1 and "not allowed" in escape.stderr
    exists = run_cli("new", "howto/deploy-production", "--title", "x")
    assert exists.returncode == 1 and "already exists" in exists.stderr


def test_usage_errors_exit_2(run_cli_process: RunCli) -> None:
    run_cli = run_cli_process
    assert run_cli("suggest").returncode == 2
    assert run_cli("suggest", "x", "--limit", "0").returncode == 2
    assert run_cli("nonsense").returncode == 2
    assert run_cli("log", "howto/deploy-production").returncode == 2  # no --title


def test_bad_notes_folder_is_an_error_not_a_traceback(run_cli_process: RunCli,
                                                      tmp_path: Path) -> None:
    run_cli = run_cli_process
    result = run_cli("suggest", "x", notes_dir=tmp_path / "missing")
    assert result.returncode == 1
    assert result.stderr.startswith("Error: notes folder") and "Traceback" not in result.stderr


def test_check_reports_broken_copy_with_file_and_line(run_cli_process: RunCli,
                                                      store_dir: Path) -> None:
    run_cli = run_cli_process
    assert run_cli("check").returncode == 0
    broken = store_dir / "broken.md"
    broken.write_text("---\ntitle: [oops\n---\n# Broken\n\nno state here\n")
    result = run_cli("check")
    assert result.returncode == 1
    assert "broken.md:" in result.stdout and "[bad-yaml]" in result.stdout
    assert "[missing-state]" in result.stdout
    data = json.loads(run_cli("check", "--json").stdout)
    assert {p["code"] for p in data} >= {"bad-yaml", "missing-state"}


@pytest.mark.slow(8)
def test_index_and_rebuild(run_cli_process: RunCli, unindexed_small_store: Path) -> None:
    store_dir = unindexed_small_store

    def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli_process(*args, notes_dir=store_dir)

    first = run_cli("index")
    assert first.returncode == 0 and "notes indexed" in first.stdout
    again = run_cli("index", "--json")
    assert json.loads(again.stdout)["indexed"] == []
    rebuilt = run_cli("index", "--rebuild", "--json")
    assert sorted(json.loads(rebuilt.stdout)["indexed"]) == sorted(SMALL_NOTES)  # every note
    shutil.rmtree(store_dir / ".notes" / "index")
    healed = run_cli("suggest", "deploy")
    assert healed.returncode == 0 and "building the index" in healed.stderr


def test_list_shows_every_note(run_cli: RunCli) -> None:
    data = json.loads(run_cli("list", "--json").stdout)
    assert len(data) >= 30 and sum(n["tokens"] for n in data) >= 60_000
