"""The `notes` command's entry point: the prompt hook first, then the command line.

A command line that is the prompt hook's (:func:`memory.hook.command_line`, the standard
library alone) goes to :func:`memory.hook.run`, before click or the configuration is imported;
any other goes to the click command line in :mod:`memory.fronts.cli`.
"""

from __future__ import annotations

import sys


def main() -> None:
    from memory import hook

    args = hook.command_line(sys.argv[1:])
    if args is None:
        from memory.fronts.cli import main as cli_main

        cli_main()
        return
    sys.exit(hook.run(args))
