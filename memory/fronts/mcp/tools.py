"""The MCP tools: the notes ladder's seven tools as a client sees them.

Thin tools over :class:`memory.api.Notes`, registered on a server by
:func:`memory.fronts.mcp.server.create_server`: the read tools (:func:`add_read_tools`) and
the write tools (:func:`add_write_tools`), each a :class:`LeanTool` (a catalog without what no
client needs, a rejected call's arguments in one sentence) whose library errors become tool
errors naming the next step (:func:`tool_errors`). Results are the same compact text the CLI
prints.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError, ValidationError
from fastmcp.tools import FunctionTool
from fastmcp.tools.base import ToolResult
from mcp.types import Tool as MCPTool
from mcp.types import ToolAnnotations
from pydantic import ValidationError as ArgumentsRejected

from memory.api import Notes
from memory.errors import NotesError
from memory.fronts import render
from memory.fronts.mcp.tool_args import argument_problem

INSTRUCTIONS = ("Project memory in topic notes. Read: suggest -> section_map -> read_section, "
                "only what you need (recall: within a budget). Write as you learn: a durable "
                "fact that changed -> write_state; an event or decision -> append_history.")
READ = ToolAnnotations(read_only_hint=True)  # the other hints only apply to writing tools
CREATE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
REPLACE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True)
APPEND = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
READ_TOOLS = ("suggest", "section_map", "read_section", "recall")
WRITE_TOOLS = ("create_note", "write_state", "append_history")

log = logging.getLogger("notes.mcp")
F = TypeVar("F", bound=Callable[..., str])


def tool_errors(fn: F) -> F:
    """Library errors become tool errors; anything else is a bug, reported as one with its
    traceback on stderr. The server never crashes."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> str:
        try:
            return fn(*args, **kwargs)
        except NotesError as exc:
            raise ToolError(str(exc)) from exc
        except Exception as exc:
            log.exception("internal error in tool %s", fn.__name__)
            raise ToolError(f"internal error in {fn.__name__} ({type(exc).__name__}), a bug "
                            "in the notes server and not in the call: the traceback is in "
                            "the server's log (its stderr); please report it") from exc

    return wrapper  # type: ignore[return-value]

class LeanTool(FunctionTool):
    """A tool listed without what no client needs, since the catalog is paid for in every
    session: fastmcp's own ``_meta`` (``{"fastmcp": {"tags": []}}``), the title made from
    the name, and ``additionalProperties: false`` (arguments are still validated here)."""

    def to_mcp_tool(self, **overrides: Any) -> MCPTool:
        overrides.setdefault("_meta", None)
        overrides.setdefault("title", None)
        schema = {k: v for k, v in self.parameters.items() if k != "additionalProperties"}
        overrides.setdefault("inputSchema", schema)
        return super().to_mcp_tool(**overrides)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            return await super().run(arguments)
        except ValidationError as exc:  # pydantic rejected the arguments before the call
            if not isinstance(exc.__cause__, ArgumentsRejected):
                raise
            message = argument_problem(self.name, self.parameters, exc.__cause__.errors())
            raise ValidationError(message, log_level=logging.WARNING) from exc.__cause__


def _tool(mcp: FastMCP, annotations: ToolAnnotations) -> Callable[[F], F]:
    def register(fn: F) -> F:
        mcp.add_tool(LeanTool.from_function(tool_errors(fn), annotations=annotations,
                                            output_schema=None))
        return fn

    return register


def add_read_tools(mcp: FastMCP, notes: Notes) -> None:
    """The ladder's read tools: suggest, section_map, read_section, recall."""
    @_tool(mcp, READ)
    def suggest(query: str, limit: int = 5, context: str = "",
                all_projects: bool = False) -> str:
        """Rank notes for a question (Spanish/English). Start here.

        Args:
            limit: 1-50.
            context: Recent messages.
        """
        seen = notes.in_project(None) if all_projects else notes
        return render.suggestions(seen.suggest(query, limit, context or None))

    @_tool(mcp, READ)
    def section_map(note: str, query: str = "", context: str = "") -> str:
        """A note's sections (id, date, tokens); query scores and zooms.

        Args:
            note: Note id.
            context: Recent messages.
        """
        return render.section_map(notes.section_map(note, query or None,
                                                    context=context or None))

    @_tool(mcp, READ)
    def read_section(note: str, section: str) -> str:
        """Read one section.

        Args:
            note: Note id.
            section: Id, prefix, #N, id:b2-4 (blocks), or dates 2026-11, A..B.
        """
        return render.section_text(notes.read_section(note, section))

    @_tool(mcp, READ)
    def recall(query: str, budget: int = 1500, context: str = "",
               all_projects: bool = False) -> str:
        """Best evidence across notes within a token budget.

        Args:
            budget: Tokens, 100-20000.
            context: Recent messages.
        """
        seen = notes.in_project(None) if all_projects else notes
        return render.recalled(seen.recall(query, budget, context or None))


def add_write_tools(mcp: FastMCP, notes: Notes) -> None:
    """The write tools: create_note, write_state, append_history."""
    @_tool(mcp, CREATE)
    def create_note(note: str, title: str, tags: str = "") -> str:
        """Create an empty note.

        Args:
            note: New id, e.g. infra/redis.
            title: Title.
            tags: Comma-separated.
        """
        tag_list = [t.strip() for t in tags.split(",") if t.strip()]
        return render.write_result(notes.create_note(note, title, tag_list,
                                                     project=notes.project))

    @_tool(mcp, REPLACE)
    def write_state(note: str, text: str) -> str:
        """Replace a note's current state whole; keep it short.

        Args:
            note: Note id.
            text: Markdown, no ## headings.
        """
        return render.write_result(notes.write_state(note, text))

    @_tool(mcp, APPEND)
    def append_history(note: str, title: str, text: str, date: str = "") -> str:
        """Append a dated entry to a note's history.

        Args:
            note: Note id.
            title: Entry title.
            text: Markdown, no headings.
            date: YYYY-MM-DD; default today.
        """
        return render.write_result(notes.append_history(note, title, text, date or None))
