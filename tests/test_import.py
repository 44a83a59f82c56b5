"""`notes import` through the real CLI: a Claude Code auto-memory folder and CLAUDE.md files
(in the shapes docs/claude-code.md documents), a plain Markdown folder; byte-exact text,
idempotence, and files it must skip."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import NOTES_BIN, copy_initialised
from memory.model.compose import keeps_every_line
from memory.model.note import parse_note
from memory.services.importer import claude_project_slug

MEMORY_INDEX = """# Memory index

- [User role](user_role.md) — backend developer, prefers Go for services
- [Testing](feedback_testing.md) — integration tests hit a real Postgres
- [Release train](project_release.md) — dates of the release freeze
- The staging database is `shop-staging` on port 6543.
"""
USER_ROLE = """---
name: User role
description: The user is a backend developer who prefers Go for new services
type: user
---
Backend developer on the checkout team; writes Go, reads Python.
Prefers short answers with the command to run first.
"""
FEEDBACK = """---
name: Testing preferences
description: integration tests must hit a real database, not mocks
type: feedback
---
Integration tests hit a real Postgres (docker compose up db), never mocks.

**Why:** a mocked test passed while the migration broke production in March.

**How to apply:** when adding a repository test, start from tests/integration/conftest.py.
"""
RELEASE = """---
name: Release train
description: release freeze dates and what happened at each release
type: project
---
# Release train

Releases go out every second Tuesday from the `release` branch.

- 2026-03-10: release 4.2 shipped; the payment retry flag is on for everyone.
- 2026-02-24 — release 4.1 delayed a day: the checkout e2e suite was flaky.
- Freeze starts on the Friday before each release.

## 2026-03-20 · Hotfix 4.2.1
Rolled back the retry flag for PayPal only; see INC-88.
"""
CLAUDE_MD = """# Shop

## Commands
- `make test` runs unit tests; `make itest` needs docker.
- Deploy with `make deploy ENV=staging`.

## Style
- Go: errors wrapped with %w; no panics in handlers.
"""
DOT_CLAUDE_MD = "Always answer in English, even when asked in Spanish.\r\nKeep diffs small.\r\n"
LOCAL_MD = "My sandbox URL: http://localhost:8443\n"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


@pytest.fixture
def claude_project(tmp_path: Path) -> tuple[Path, list[Path]]:
    """A project with CLAUDE.md files and Claude Code's auto memory of it under ~/.claude."""
    project = tmp_path / "work" / "shop.app"
    (project / ".git").mkdir(parents=True)
    memory = (tmp_path / "home" / ".claude" / "projects" / claude_project_slug(project)
              / "memory")
    sources = [write(memory / "MEMORY.md", MEMORY_INDEX),
               write(memory / "user_role.md", USER_ROLE),
               write(memory / "feedback_testing.md", FEEDBACK),
               write(memory / "project_release.md", RELEASE),
               write(project / "CLAUDE.md", CLAUDE_MD),
               write(project / ".claude" / "CLAUDE.md", DOT_CLAUDE_MD),
               write(project / "CLAUDE.local.md", LOCAL_MD),
               write(project / "services" / "api" / "CLAUDE.md", "API: chi router.\n")]
    return project, sources


def notes(*args: str, cwd: Path, env: dict[str, str] | None = None
          ) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "NOTES_DIR"} | (env or {})
    return subprocess.run([str(NOTES_BIN), *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=120)


def snapshot(paths: list[Path]) -> dict[Path, tuple[bytes, int]]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in paths}


def imported_notes(store: Path) -> dict[str, tuple[str, str]]:
    """source path -> (note id, note text) for every imported note in the store, as the
    record in the state folder names them (docs/import.md, provenance)."""
    try:
        sources = json.loads((store / ".notes" / "imports.json").read_text())["sources"]
    except FileNotFoundError:
        return {}
    return {path: (s["note"], (store / f"{s['note']}.md").read_bytes().decode("utf-8"))
            for path, s in sources.items()}


def test_claude_code_memory_comes_in_byte_exact_and_once(
        claude_project: tuple[Path, list[Path]], tmp_path: Path,
        initialised_store: Path) -> None:
    project, sources = claude_project
    store = copy_initialised(initialised_store, tmp_path / "store")  # as `notes init` makes it
    before = snapshot(sources)
    dry = notes("--notes", str(store), "import", "--claude", "--dry-run", cwd=project)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.count("\ncreate | ") == len(sources)
    assert "8 notes to create" in dry.stdout and "dry run: nothing written" in dry.stdout
    assert imported_notes(store) == {}

    made = notes("--notes", str(store), "import", "--claude", cwd=project)
    assert made.returncode == 0, made.stderr
    assert made.stderr.splitlines()[0] == f"store {store} (from --notes)"
    assert "8 notes created, 0 unchanged" in made.stdout
    assert snapshot(sources) == before  # the sources are only read
    found = imported_notes(store)
    assert set(found) == {str(p) for p in sources}
    for source in sources:
        note_id, text = found[str(source)]
        raw = source.read_bytes()
        assert keeps_every_line(raw.decode(), text), note_id
        kept = json.loads((store / ".notes" / "imports.json").read_text())["sources"]
        assert kept[str(source)]["sha256"] == __import__("hashlib").sha256(raw).hexdigest()
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(kept[str(source)]["on"]))
        assert "imported_from" not in parse_note(text).meta  # kept in the state folder
        assert not [p for p in parse_note(text).problems if p.severity == "error"], note_id
    slug = "claude/shop-app"
    assert found[str(sources[0])][0] == f"{slug}/memory/MEMORY"
    assert found[str(sources[5])][0] == f"{slug}/dot-claude/CLAUDE"
    assert found[str(sources[7])][0] == f"{slug}/services/api/CLAUDE"
    role = parse_note(found[str(sources[1])][1])
    assert role.title == "User role" and role.meta["type"] == "user"
    assert role.state is not None and "Backend developer" in role.state.text
    release = parse_note(found[str(sources[3])][1])
    assert [e.date for e in release.entries] == ["2026-02-24", "2026-03-10", "2026-03-20"]
    assert release.state is not None and "Freeze starts" in release.state.text
    assert "\r\n" in found[str(sources[5])][1]  # CRLF kept, for our lines too
    assert "\n" not in found[str(sources[5])][1].replace("\r\n", "")

    checked = notes("--notes", str(store), "check", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout
    asked = notes("--notes", str(store), "suggest", "integration tests postgres mocks",
                  cwd=project)  # the project's notes are searched inside it
    assert f"{slug}/memory/feedback_testing" in asked.stdout.splitlines()[1]
    read = notes("--notes", str(store), "read", f"{slug}/memory/project_release", "2026-03",
                 cwd=tmp_path)
    assert "release 4.2 shipped" in read.stdout and "Hotfix 4.2.1" in read.stdout

    again = notes("--notes", str(store), "import", "--claude", "--json", cwd=project)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert {i["action"] for i in report["items"]} == {"unchanged"}
    assert imported_notes(store) == found

    write(sources[4], CLAUDE_MD + "- Never push on Fridays.\n")
    changed = notes("--notes", str(store), "import", "--claude", cwd=project)
    assert "updated | claude/shop-app/CLAUDE" in changed.stdout, changed.stdout
    assert "1 updated (changed at the source)" in changed.stdout
    merged = parse_note((store / "claude/shop-app/CLAUDE.md").read_text())
    assert merged.section("style") is not None and "Never push on Fridays" in merged.text
    kept = [e for e in merged.entries if e.title.endswith("State before import")]
    assert len(kept) == 1 and "errors wrapped with %w" in kept[0].text
    assert notes("--notes", str(store), "check", cwd=tmp_path).returncode == 0


def test_a_markdown_folder_with_files_to_skip(tmp_path: Path, initialised_store: Path) -> None:
    vault = tmp_path / "vault"
    write(vault / "Projects" / "Payments v2.md", "---\ntags: [payments]\naliases: [pagos]\n"
          "---\n# Payments v2\n\nStripe first, Adyen later.\n\n## History\n"
          "### 2026-01-12 · Kick-off\nScope agreed.\n")
    write(vault / "daily" / "2026-02-01.md", "Talked to Ana about the ledger export.\n")
    write(vault / "notes.markdown", "Plain text with no heading at all")
    write(vault / ".obsidian" / "workspace.md", "not a note")
    write(vault / "latin1.md", "caf\xe9 cr\xe8me\n".encode("latin-1"))
    write(vault / "huge.md", "x" * 6000 + "\n")
    write(vault / "empty.md", "\n\n")
    store = copy_initialised(initialised_store, tmp_path / "store")  # as `notes init` makes it
    env = {"NOTES_MAX_NOTE_BYTES": "5000"}
    made = notes("--notes", str(store), "import", str(vault), cwd=tmp_path, env=env)
    assert made.returncode == 0, made.stderr
    assert "3 notes created" in made.stdout and "3 skipped" in made.stdout
    assert "not UTF-8 (line 1)" in made.stdout and "too large (6,001 bytes" in made.stdout
    assert "| empty" in made.stdout
    found = imported_notes(store)
    assert sorted(n for n, _ in found.values()) == ["vault/Projects/Payments v2",
                                                    "vault/daily/2026-02-01", "vault/notes"]
    payments = parse_note(found[str(vault / "Projects" / "Payments v2.md")][1])
    assert payments.aliases == ["pagos"] and [e.id for e in payments.entries] == [
        "2026-01-12-kick-off"]
    for source, (_, text) in found.items():
        assert keeps_every_line(Path(source).read_bytes().decode(), text)
    listed = notes("--notes", str(store), "list", cwd=tmp_path)
    assert "vault/daily/2026-02-01" in listed.stdout
    refused = notes("--notes", str(store), "import", cwd=tmp_path)
    assert refused.returncode == 2 and "--claude" in refused.stderr


def test_import_with_no_store_creates_your_default_one(
        claude_project: tuple[Path, list[Path]], tmp_path: Path) -> None:
    project, _ = claude_project
    made = notes("import", "--claude", cwd=project)
    assert made.returncode == 0, made.stderr
    default = tmp_path / "data" / "notes-memory" / "notes"
    assert f"created your default store {default}" in made.stderr
    assert (default / ".notes.toml").is_file()
    assert "8 notes created" in made.stdout
    status = json.loads(notes("status", "--json", cwd=project).stdout)
    assert status["store"]["source"] == "default" and status["notes"] == 9  # + start-here


RUNBOOK = """# Worker runbook

Restart the worker with `systemctl restart shop-worker`.
The queue is RabbitMQ on port 5672.

## Escalation
Page the on-call engineer in #ops after two failed restarts.
"""


def test_plain_markdown_in_a_store_is_searchable_mappable_and_only_a_warning(
        tmp_path: Path) -> None:
    store = tmp_path / "plain"
    write(store / "runbook.md", RUNBOOK)
    write(store / "scratch.md", "redis maxmemory is 2gb on the cache boxes\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return notes("--notes", str(store), *args, cwd=tmp_path)

    found = run("suggest", "restart the worker rabbitmq")
    assert found.returncode == 0, found.stderr
    top = found.stdout.splitlines()[1].split(" | ")
    assert top[0] == "runbook" and not top[3].startswith("0/")  # the top stands in as state
    mapped = run("map", "runbook", "--query", "restart worker")
    assert "best match: header" in mapped.stdout, mapped.stdout
    state = run("read", "runbook", "state")
    assert state.returncode == 0 and "systemctl restart shop-worker" in state.stdout
    assert "Page the on-call" not in state.stdout
    assert "best match: header" in run("map", "scratch", "--query", "redis").stdout
    checked = run("check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    lines = [line for line in checked.stdout.splitlines() if "[missing-state]" in line]
    assert len(lines) == 2 and all(": warning: " in line for line in lines)
    assert f"`notes import {store / 'runbook.md'} --prefix converted`" in checked.stdout
    assert run("check", "--strict").returncode == 1
    converted = run("import", str(store / "runbook.md"), "--prefix", "converted")
    assert converted.returncode == 0, converted.stderr
    assert "1 notes created" in converted.stdout
    assert [p for p in json.loads(run("check", "--json").stdout)
            if p["path"] == "converted/runbook.md"] == []
    assert (store / "runbook.md").read_text() == RUNBOOK
