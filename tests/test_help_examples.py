"""Every command's --help ends with a real example (as sqlite-utils' and llm's do), and the
user's --help holds only what runs on an installed package.

An example is checked against the command line it shows: it names the command whose help
holds it (or, in a group's help, one of its commands), and every option it uses is one of
that command's (or its groups'). The project's own measures (``python -m benchmarks``) are
held to the same rule, and are not in `notes --help`.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from benchmarks.cli import PROG as LAB_PROG
from benchmarks.cli import lab
from memory.fronts.cli import load_commands

cli = load_commands()  # every command registered, not only those asked for

ROOTS = {"notes": cli, LAB_PROG: lab}


def _walk(command: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from _walk(sub, f"{path} {name}")


COMMANDS = [(path, command) for prog, root in ROOTS.items() for path, command in
            _walk(root, prog)]


def _help(path: str) -> str:
    prog = next(p for p in ROOTS if path.startswith(p))
    args = path[len(prog):].split()
    result = CliRunner().invoke(ROOTS[prog], [*args, "--help"], prog_name=prog,
                                terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


def examples(text: str) -> list[str]:
    """The command lines under ``Example:`` / ``Examples:`` in a --help text."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines)
              if line.strip() in ("Example:", "Examples:")]
    found: list[str] = []
    for start in starts:
        for line in lines[start + 1:]:
            if not line.startswith("    ") or not line.strip():
                break
            found.append(line.strip())
    return found


def _options(command: click.Command) -> dict[str, click.Option]:
    return {name: param for param in command.params if isinstance(param, click.Option)
            for name in (*param.opts, *param.secondary_opts)}


def resolve(line: str) -> tuple[list[click.Command], list[str]]:
    """The chain of commands an example line runs (its root first), and the problems found
    in its options; the part after the last ``|`` is the command."""
    words = shlex.split(line.rsplit(" | ", 1)[-1])
    prog = next((p for p in ROOTS if words[:len(p.split())] == p.split()), None)
    assert prog is not None, f"{line!r} runs neither notes nor {LAB_PROG}"
    chain: list[click.Command] = [ROOTS[prog]]
    known = _options(chain[0])
    problems: list[str] = []
    rest = iter(words[len(prog.split()):])
    for word in rest:
        current = chain[-1]
        if isinstance(current, click.Group) and word in current.commands:
            chain.append(current.commands[word])
            known.update(_options(chain[-1]))
        elif word.startswith("-"):
            option = known.get(word.split("=", 1)[0])
            if option is None:
                problems.append(f"{word} is not an option of {line!r}")
            elif not option.is_flag and "=" not in word:
                next(rest, None)  # its value
    return chain, problems


@pytest.mark.parametrize("path,command", COMMANDS, ids=[p for p, _ in COMMANDS])
def test_every_help_holds_a_real_example(path: str, command: click.Command) -> None:
    shown = examples(_help(path))
    assert shown, f"`{path} --help` has no Example: block"
    for line in shown:
        chain, problems = resolve(line)
        assert problems == []
        assert command in chain, f"{line!r} (in `{path} --help`) does not run {path}"
        assert not isinstance(chain[-1], click.Group) or chain[-1] is command, line


def test_a_wrong_example_is_caught() -> None:
    """The check above fails on an example with an option its command lacks, and on one that
    runs another command."""
    assert resolve("notes suggest redis --budget 5")[1] == [
        "--budget is not an option of 'notes suggest redis --budget 5'"]
    chain, problems = resolve('echo x | notes --example log infra/redis --title "T"')
    assert problems == [] and chain[-1] is cli.commands["log"]
    assert cli.commands["state"] not in chain
    assert examples("Usage: x\n\n  Text.\n\nOptions:\n  -h  Help.\n") == []


def test_the_users_help_holds_only_what_runs_there() -> None:
    """`notes bench perf` and `notes bench visible` measured the project from a checkout and
    refused on an installed package: they are `python -m benchmarks perf|visible` now."""
    listed = [line.split()[0] for line in _help("notes bench").split("Commands:")[1]
              .splitlines() if line.strip()]
    assert {"from-transcripts", "run"} <= set(listed)
    assert not {"perf", "visible"} & set(listed)
    ran = CliRunner().invoke(cli, ["bench", "perf"], prog_name="notes")
    assert ran.exit_code == 2 and "No such command 'perf'" in ran.output
    assert {"perf", "visible"} <= set(lab.commands)
