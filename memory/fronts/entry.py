"""The `notes` command's entry point: the prompt hook first, then the command line.

Claude Code runs ``notes [--notes DIR] [--state-dir DIR] [--example] hook user-prompt`` on
every prompt, and importing click and the whole command line costs more than the hook's own
answer when the MCP server gives it. So this module (standard library only) recognises that
command line, and only that one whole, and runs :func:`memory.services.hook.main` at once; any
other (``--help``, ``--version``, an option it does not know, a value missing) goes to the
click command line in :mod:`memory.fronts.cli`, whose ``hook user-prompt`` runs the same code.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

HOOK_COMMAND = ("hook", "user-prompt")
VALUE_OPTIONS = {"--notes": "notes_dir", "--state-dir": "state_dir"}


@dataclass(frozen=True)
class HookArgs:
    notes_dir: str | None = None
    state_dir: str | None = None
    example: bool = False


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
    from memory.config import load_config
    from memory.services import hook

    sys.exit(hook.main(lambda: load_config(args.notes_dir, args.state_dir,
                                           example=args.example)))
