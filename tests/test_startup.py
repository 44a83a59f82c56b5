"""A command loads what it uses, no more: every `notes` command is a new process, and what it
imports is most of its start-up (docs/performance.md, "Start-up time of a command"). These
tests pin what ordinary commands do not import, so that an import added at the top of a
module fails here instead of slowing every command; nothing is timed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from memory.fronts.cli import COMMAND_MODULES, load_commands

ROOT = Path(__file__).resolve().parent.parent

# Runs `notes ARGS` as the `notes` script does, then writes the names of the loaded modules.
PROBE = """
import json, sys
args, out = json.loads(sys.argv[1]), sys.argv[2]
sys.argv = ["notes", *args]
from memory.fronts.entry import main
try:
    main()
except SystemExit:
    pass
with open(out, "w") as file:
    json.dump(sorted(sys.modules), file)
"""

# No ordinary command needs the server, the bench, the set-up or the other backend.
NEVER = ("memory.fronts.mcp", "fastmcp", "mcp", "starlette", "uvicorn", "memory.bench",
         "memory.fronts.cli.bench", "memory.fronts.cli.bench_promote", "memory.fronts.cli.serve",
         "memory.fronts.cli.setup", "memory.fronts.cli.nightly", "memory.services",
         "memory.index.tantivy", "tantivy")
# What `--help` and `--version` never open: the store, the index, the usage log.
NO_STORE = ("memory.api", "memory.index.interface", "memory.index.whoosh", "whoosh",
            "memory.state.store", "memory.state.usage", "sqlite3", "hashlib", "markdown_it",
            "yaml")


def loaded(args: list[str], notes_dir: Path, tmp_path: Path) -> set[str]:
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(args), str(out)],
                          env={**os.environ, "NOTES_DIR": str(notes_dir)},
                          capture_output=True, text=True, timeout=120)
    assert out.exists(), done.stderr
    return set(json.loads(out.read_text()))


def among(modules: set[str], packages: Iterable[str]) -> list[str]:
    """The modules that are one of ``packages`` or inside one."""
    return sorted(m for m in modules for p in packages if m == p or m.startswith(p + "."))


def test_version_loads_no_command_and_no_store(store_dir: Path, tmp_path: Path) -> None:
    modules = loaded(["--version"], store_dir, tmp_path)
    assert "click" in modules  # the probe ran the command line
    commands = [f"memory.fronts.cli.{m}" for m in ("read", "write", "maintain")]
    assert among(modules, (*NEVER, *NO_STORE, *commands, "memory.fronts.render")) == []


def test_help_loads_every_command_but_no_store(store_dir: Path, tmp_path: Path) -> None:
    modules = loaded(["--help"], store_dir, tmp_path)
    assert "memory.fronts.cli.bench" in modules  # listing a command loads its module
    assert among(modules, ("memory.fronts.mcp.http_guard", *NO_STORE)) == []


@pytest.mark.parametrize("args", [["suggest", "deploy"], ["read", "howto/deploy-production"]])
def test_a_ladder_command_loads_its_own_module_only(store_dir: Path, tmp_path: Path,
                                                    args: list[str]) -> None:
    modules = loaded(args, store_dir, tmp_path)
    assert {"memory.fronts.cli.read", "memory.api", "whoosh"} <= modules  # it ran
    others = [f"memory.fronts.cli.{m}" for m in ("write", "maintain")]
    unused = ("memory.model.results", "socket")  # the writes' results, a lock's host name
    assert among(modules, (*NEVER, *others, *unused)) == []


def test_suggest_on_a_fresh_index_parses_no_note(store_dir: Path, tmp_path: Path) -> None:
    modules = loaded(["suggest", "deploy"], store_dir, tmp_path)
    assert "whoosh" in modules
    # nor Whoosh's HTML escape (memory/index/whoosh/lean.py): only the Markdown parser needs it
    assert among(modules, ("markdown_it", "yaml", "memory.model.note", "html")) == []


def test_every_command_is_named_in_the_lazy_map() -> None:
    """`notes X` imports the modules COMMAND_MODULES names for X: the map holds every
    command the modules register, and no other."""
    assert sorted(load_commands().commands) == sorted(COMMAND_MODULES)


@pytest.mark.parametrize("args", [["--help"], ["--max-sessions", "0"]])
def test_the_server_script_answers_help_and_usage_errors_without_the_server(
        args: list[str]) -> None:
    """`python mcp_server.py --help` (or a usage error) is answered by the command line
    alone, as `notes serve --help` is: fastmcp is imported only when the server starts."""
    done = subprocess.run([sys.executable, "-X", "importtime", str(ROOT / "mcp_server.py"),
                           *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == (0 if args == ["--help"] else 2), done.stderr
    assert "Usage: mcp_server.py [OPTIONS]" in done.stdout + done.stderr
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
              if line.startswith("import time:")}
    assert "click" in loaded  # the probe saw the imports
    assert not loaded & {"fastmcp", "mcp", "memory.fronts.mcp.server", "memory.api"}
