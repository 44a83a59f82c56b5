"""The `notes` command's entry point: the prompt hook first, then the command line.

Claude Code runs ``notes [--notes DIR] [--state-dir DIR] [--example] hook user-prompt`` on
every prompt, and importing click and the whole command line costs more than the hook's own
answer when the MCP server gives it. So this module (standard library only) recognises that
command line, and only that one whole, and asks the store's running MCP server at once
(:mod:`memory.services.hook_client`: no configuration, no ``dataclasses``, no index); when
none answers, :func:`memory.services.hook.main` answers in this process. Any other command
line (``--help``, ``--version``, an option it does not know, a value missing) goes to the
click command line in :mod:`memory.fronts.cli`, whose ``hook user-prompt`` runs the same code.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

HOOK_COMMAND = ("hook", "user-prompt")
VALUE_OPTIONS = {"--notes": "notes_dir", "--state-dir": "state_dir"}


class HookArgs:
    """The global options of a hook command line (a plain class: ``dataclasses`` costs a
    hook answered by the server a sixth of its time to import)."""

    __slots__ = ("notes_dir", "state_dir", "example")

    def __init__(self, notes_dir: str | None = None, state_dir: str | None = None,
                 example: bool = False) -> None:
        self.notes_dir, self.state_dir, self.example = notes_dir, state_dir, example

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookArgs) and (self.notes_dir, self.state_dir, self.example) \
            == (other.notes_dir, other.state_dir, other.example)

    def __repr__(self) -> str:
        return f"HookArgs({self.notes_dir!r}, {self.state_dir!r}, {self.example!r})"


def hook_args(argv: Sequence[str]) -> HookArgs | None:
    """The global options of a ``… hook user-prompt`` command line, None for any other.
    As click reads them: ``--opt VALUE`` or ``--opt=VALUE``, the last one given wins."""
    found: dict[str, str] = {}
    example = False
    rest = list(argv)
    while rest and rest[0].startswith("-"):
        option, has_value, value = rest.pop(0).partition("=")
        if option == "--example" and not has_value:
            example = True
            continue
        if option not in VALUE_OPTIONS:
            return None
        if not has_value:
            if not rest:
                return None
            value = rest.pop(0)
        found[VALUE_OPTIONS[option]] = value
    if tuple(rest) != HOOK_COMMAND:
        return None
    return HookArgs(found.get("notes_dir"), found.get("state_dir"), example)


def main() -> None:
    args = hook_args(sys.argv[1:])
    if args is None:
        from memory.fronts.cli import main as cli_main

        cli_main()
        return
    raw, output = _served(args)
    if output is not None:
        from memory.services.hook_client import write_output

        write_output(output)
        sys.exit(0)
    from memory.config import load_config
    from memory.services import hook

    sys.exit(hook.main(lambda: load_config(args.notes_dir, args.state_dir,
                                           example=args.example), raw=raw, asked=True))


def _served(args: HookArgs) -> tuple[str | None, str | None]:
    """The hook's input and the running server's answer to it (None: none answered); on any
    problem, what was read, and the in-process answer reports the problem."""
    raw: str | None = None
    try:
        from memory.services.hook_client import input_problem, read_input, served

        raw = read_input(sys.stdin)
        if input_problem(raw):  # answered (nothing) and logged in-process
            return raw, None
        return raw, served(raw, args.notes_dir, args.state_dir, args.example)
    except Exception:  # noqa: BLE001 - hook.main answers in-process and logs what fails
        return raw, None
