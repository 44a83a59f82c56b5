"""The docs say what is built: every command documented, the generated reference current."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import memory
from memory.fronts.cli import load_commands

cli = load_commands()  # every command registered, not only those asked for

ROOT = Path(__file__).resolve().parent.parent


def test_every_command_has_help_and_a_doc_entry() -> None:
    doc = (ROOT / "docs" / "cli.md").read_text()
    for name, command in cli.commands.items():
        assert command.help, name
        assert f"`notes {name}" in doc, f"notes {name} is not described in docs/cli.md"


def test_generated_reference_is_current() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "cli_reference.py"),
                             "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_public_api_is_explicit() -> None:
    assert sorted(memory.__all__) == sorted(set(memory.__all__))
    for name in memory.__all__:
        assert hasattr(memory, name), name


def test_readme_opens_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    block = lines[lines.index("```bash") + 1: lines.index("```bash") + 3]
    assert "install" in block[0] and "notes --notes notes_example suggest" in block[0]
    assert block[1] == ".venv/bin/python -m pytest"
    ci = (ROOT / ".ci" / "run").read_text()
    assert block[0] in ci and block[1] in ci


def _steps(block: str) -> list[str]:
    """The commands of a bash block: each line without its comment, split at ``&&``."""
    return [step.strip() for line in block.splitlines()
            for step in line.split("#")[0].split("&&") if step.strip()]


def test_readme_gives_the_path_install_md_runs() -> None:
    """Issue #35: the README's own-store block is docs/install.md's path (which
    tests/test_new_user_projects.py runs), and says how many commands it takes after pipx."""
    own = (ROOT / "README.md").read_text().split("## Your own memory")[1]
    block = own.split("```bash\n")[1].split("```")[0]
    said = re.search(r"pipx and (\w+) commands", " ".join(own.split()))
    numbers = {"three": 3, "four": 4, "five": 5, "six": 6}
    assert said is not None and numbers[said[1]] == len(block.splitlines()) - 1
    path = (ROOT / "docs" / "install.md").read_text().split(
        "## A new user, from nothing")[1].split("```bash\n")[1].split("```")[0]
    for step in _steps(block):
        assert step.startswith("cd ") or step in _steps(path), step


def test_bench_run_lists_every_policy() -> None:
    """The policies of `notes bench run`, in its --help and in docs/cli.md, are the ones the
    bench runs (memory/bench/policies.py)."""
    from click.testing import CliRunner

    from memory.bench.policies import POLICIES

    shown = CliRunner().invoke(cli, ["bench", "run", "--help"], terminal_width=200).output
    listed = " ".join(shown.split("--policies TEXT")[1].split("--limit")[0].split())
    doc = (ROOT / "docs" / "cli.md").read_text()
    entry = " ".join(doc.split("- `notes bench run BENCH")[1].split("\n- `notes")[0].split())
    for policy in POLICIES:
        assert f" {policy}," in listed or f" {policy} " in listed, policy
        assert f"`{policy}`" in entry, policy

