"""The Claude Code prompt hook, ``notes [--notes DIR] [--state-dir DIR] [--example] hook
user-prompt``, in one package, and :func:`run`, its one entry point.

- :mod:`memory.hook.client`: the hook process's side of the store's socket: read the input,
  ask the store's running MCP server, print its answer (the standard library only);
- :mod:`memory.hook.socket`: the server's side, a listener thread of the MCP server;
- :mod:`memory.hook.answer`: the answer itself (transcript tail, filler words, score floor,
  the ≤ 120-token text), given by the server on its open store or by the hook process on the
  store it opens, through :class:`memory.api.Notes`' public methods.

Claude Code runs the hook on every prompt, and importing click and the whole command line
costs more than the hook's own answer when the MCP server gives it. So the ``notes`` script
(:mod:`memory.fronts.entry`) asks :func:`command_line` whether its command line is the hook's,
and only that one whole, with this module alone (the standard library's ``sys``); any other
spelling of it (``--help``, an option it does not know) goes to the click command line, whose
``hook user-prompt`` calls the same :func:`run`.

Nothing here imports more than the standard library at the top: a hook that the server
answers imports this package, :mod:`memory.hook.client` and :mod:`memory.locate`, no
configuration, no ``dataclasses``, no index.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not `typing`'s: see memory/__init__.py
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import IO

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


def command_line(argv: Sequence[str]) -> HookArgs | None:
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


def run(args: HookArgs, stdin: IO[str] | None = None) -> int:
    """``notes hook user-prompt``: read the hook's JSON, ask the store's running MCP server
    (before the configuration is even imported), else answer in this process; print what
    to add, if anything. Exit status 0 whatever happens: a problem is one line on stderr and
    in the hook's log (:func:`memory.hook.answer.answer_here`)."""
    raw: str | None = None
    try:
        from memory.hook.client import input_problem, read_input, served, write_output

        raw = read_input(sys.stdin if stdin is None else stdin)
        output = None if input_problem(raw) else served(raw, args.notes_dir, args.state_dir,
                                                        args.example)
        if output is not None:
            write_output(output)
            return 0
    except Exception:  # noqa: BLE001 - answered in-process, which logs what fails
        pass
    from memory.hook.answer import answer_here

    return answer_here(args.notes_dir, args.state_dir, args.example, raw)
