"""The MCP server: the notes ladder as tools for Claude Code or any MCP client.

Thin tools over :class:`memory.api.Notes`; the only module that imports fastmcp. Results are
the same compact text the CLI prints. Library errors become MCP tool errors whose text names
the next step. Logs go to stderr only: on stdio, stdout carries the protocol.

Run: ``notes serve`` or ``python mcp_server.py`` (the same options, and ``--notes DIR``).
Over HTTP the app sits behind :mod:`memory.fronts.mcp.http_guard` (Host, Origin, token) and
:mod:`memory.fronts.mcp.http_sessions` (a bound on live sessions).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import anyio
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError, ValidationError
from fastmcp.tools import FunctionTool
from fastmcp.tools.base import ToolResult
from mcp.types import Tool as MCPTool
from mcp.types import ToolAnnotations
from pydantic import ValidationError as ArgumentsRejected

from memory.api import Notes
from memory.config import Config
from memory.errors import NotesError
from memory.fronts import render
from memory.fronts.mcp.http_guard import HttpSettings
from memory.fronts.mcp.stdio_guard import run_stdio
from memory.fronts.mcp.tool_args import argument_problem
from memory.hook.socket import HookSocket, answer_hooks
from memory.services.stores import describe_store

SERVER_NAME = "notes"
INSTRUCTIONS = ("Project memory in topic notes. Read: suggest -> section_map -> read_section, "
                "only what you need (recall: within a budget). Write as you learn: a durable "
                "fact that changed -> write_state; an event or decision -> append_history.")
READ = ToolAnnotations(read_only_hint=True)  # the other hints only apply to writing tools
CREATE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
REPLACE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True)
APPEND = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
READ_TOOLS = ("suggest", "section_map", "read_section", "recall")
WRITE_TOOLS = ("create_note", "write_state", "append_history")
MCP_PATH = "/mcp"

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


def server_notes(config: Config) -> Notes:
    """The server's store. One server process serves one client session over stdio (as
    Claude Code runs it), so the process is the usage log's session unless NOTES_SESSION
    names one."""
    if not config.session:
        config = dataclasses.replace(config, session=f"mcp-{os.getpid()}-{int(time.time())}")
    notes = Notes(config, notify=lambda message: log.warning("%s", message), front="mcp")
    return notes.in_project(server_project(config))


def server_project(config: Config) -> str | None:
    """The project the server serves (docs/projects.md): that of ``CLAUDE_PROJECT_DIR``,
    which Claude Code sets, else of the folder it was started in (Claude Code starts a
    stdio server in the project's folder)."""
    from memory.project import find_project

    folder = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    found = find_project(Path(folder), config.notes_dir)
    log.info("project: %s", f"{found.key} ({found.why})" if found else
             f"none ({folder} is in no project): every note is searched")
    return found.key if found else None


def create_server(config: Config, read_only: bool = False,
                  notes: Notes | None = None) -> FastMCP:
    """Build the server for one store; ``read_only`` serves only the three ladder tools."""
    notes = notes or server_notes(config)
    mcp = FastMCP(SERVER_NAME, instructions=INSTRUCTIONS, version=package_version())
    _add_read_tools(mcp, notes)
    if not read_only:
        _add_write_tools(mcp, notes)
    return mcp


def package_version() -> str:
    """This package's version (the server's ``serverInfo.version``), not fastmcp's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("notes-memory")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


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


def _add_read_tools(mcp: FastMCP, notes: Notes) -> None:
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


def _add_write_tools(mcp: FastMCP, notes: Notes) -> None:
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


def start_watcher(notes: Notes) -> Any:
    """Keep the index fresh while the server runs (watchdog, debounced)."""
    def refresh(_: object = None) -> None:
        report = notes.catch_up()
        if report.indexed or report.removed:
            log.info("re-indexed %s", ", ".join(report.indexed + report.removed))

    said: set[str] = set()

    def failed(exc: Exception) -> None:  # the watcher goes on after logging it
        if isinstance(exc, NotesError):  # a known condition (a full disk): one line, once
            if str(exc) not in said:
                said.add(str(exc))
                log.warning("keeping the index fresh: %s", exc)
            return
        log.error("keeping the index fresh failed", exc_info=exc)

    watcher = notes.watcher(refresh, refresh, on_idle=notes.when_idle, on_error=failed)
    watcher.start()
    return watcher


async def catalog(mcp: FastMCP) -> list[dict[str, Any]]:
    """The ``tools/list`` payload as a client receives it, one dict per tool."""
    from fastmcp import Client

    async with Client(mcp) as client:
        raw = await client.list_tools_mcp()
    payload = raw.model_dump(mode="json", by_alias=True, exclude_none=True)
    return list(payload["tools"])


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


TYPICAL_QUERY = "cómo hago rollback de un despliegue en producción"


def measure_costs(config: Config, questions: Path | None = None) -> dict[str, Any]:
    """cl100k tokens of each tool in ``tools/list`` (compact JSON, as a client receives it),
    the totals, and a typical answer of each rung on this store; with ``questions`` (a
    bench's questions.jsonl about this store), the framing of ``recall`` and
    ``read_section`` over them (:mod:`memory.services.framing`)."""
    import asyncio

    notes = Notes(dataclasses.replace(config, usage_log=False),
                  notify=lambda message: log.warning("%s", message))
    try:
        tools = asyncio.run(catalog(create_server(config, notes=notes)))
        count = notes.count_tokens
        per_tool = {t["name"]: count(compact_json(t)) for t in tools}
        per_tool["instructions"] = count(INSTRUCTIONS)  # sent once per session, like the catalog
        answers, read = _typical_answers(notes, count)
        framing: dict[str, Any] = {}
        if questions is not None:
            from memory.services.framing import measure_framing

            framing = {name: dataclasses.asdict(f) | {"share": round(f.share, 4)}
                       for name, f in measure_framing(notes, questions).items()}
    finally:
        notes.close()
    return {"tools": per_tool, "catalog_total": sum(per_tool.values()),
            "read_tools_total": sum(per_tool[n] for n in READ_TOOLS if n in per_tool),
            "answers": answers, "query": TYPICAL_QUERY, "read": read,
            "framing": framing, "questions": str(questions) if questions else None}


def _typical_answers(notes: Notes, count: Callable[[str], int]
                     ) -> tuple[dict[str, int], str | None]:
    """The cost of each rung's answer to :data:`TYPICAL_QUERY`, and the section read (on a
    store where no note matches it, the store's first note's best section or state)."""
    suggested = notes.suggest(TYPICAL_QUERY)
    answers = {"suggest": count(render.suggestions(suggested))}
    # the question's best note; on a store where it matches nothing, the store's first note
    top = suggested.hits[0].note if suggested.hits else next(iter(notes.note_ids()), None)
    if top is None:
        return answers, "nothing (the store has no notes)"
    mapped = notes.section_map(top, TYPICAL_QUERY)
    ids = [row.id for row in mapped.rows]
    section = mapped.best[0] if mapped.best else "state" if "state" in ids else ids[0]
    answers["section_map"] = count(render.section_map(mapped))
    try:
        answers["read_section"] = count(render.section_text(notes.read_section(top, section)))
    except NotesError:  # a note with no state and no best section: nothing typical to read
        return answers, None
    return answers, f"{top}#{section}"


def over_budget(costs: dict[str, Any], budget: dict[str, Any]) -> list[str]:
    """Every figure above its budget, as 'name: cost > budget'."""
    problems = []
    pairs = [("catalog_total", costs["catalog_total"], budget["catalog_total"]),
             ("read_tools_total", costs["read_tools_total"], budget["read_tools_total"])]
    pairs += [(f"tool {n}", c, budget["tools"].get(n, 0)) for n, c in costs["tools"].items()]
    pairs += [(f"answer {n}", c, budget["answers"].get(n, 0))
              for n, c in costs["answers"].items()]
    for name, cost, limit in pairs:
        if cost > limit:
            problems.append(f"{name}: {cost} > {limit}")
    for name, measured in costs.get("framing", {}).items():
        limit = budget.get("framing", {}).get(name, 0.0)
        if measured["share"] > limit:
            problems.append(f"framing {name}: {measured['share']:.1%} > {limit:.0%}")
    return problems


def start_hook_socket(notes: Notes) -> HookSocket | None:
    """Answer `notes hook user-prompt` for this store from this process (the socket
    `<state>/run/hook.sock`, :mod:`memory.hook.socket`); None if it cannot listen (logged:
    the hooks then answer in their own process)."""
    listener = answer_hooks(notes, lambda message: log.warning("%s", message))
    if listener is not None:
        log.info("answering the prompt hook on %s", listener.path)
    return listener


def start_embedding(notes: Notes) -> threading.Thread | None:
    """With NOTES_SEMANTIC on, embed the notes that have no vectors yet in the background
    (``notes embed``'s work); until a query's best notes are embedded it routes without
    them."""
    if not notes.config.semantic:
        return None

    def embed() -> None:
        try:
            built = notes.embed()
            log.info("semantic vectors: %d notes embedded (%d lines) in %s s, %d already",
                     built.embedded, built.lines, built.seconds, built.kept)
        except NotesError as exc:
            log.warning("semantic vectors not built: %s", exc)

    thread = threading.Thread(target=embed, name="notes-embed", daemon=True)
    thread.start()
    return thread


def serve(config: Config, read_only: bool = False, http: HttpSettings | None = None,
          hook_socket: bool = True) -> None:
    """Serve over stdio (or HTTP), keep the index fresh, and answer the prompt hook on the
    store's socket (over HTTP too: the socket is a file only this user can reach, whatever
    the HTTP server lets in; ``hook_socket=False``, ``--no-hook-socket``, turns it off)."""
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    log.info("serving the %s", describe_store(config))
    notes = server_notes(config)
    notes.freshen()  # an index that cannot be written yet still serves what it holds
    mcp = create_server(config, read_only, notes)
    watcher = start_watcher(notes)
    start_embedding(notes)
    listener = start_hook_socket(notes) if hook_socket else None
    try:
        if http is not None:
            serve_http(mcp, http)
        else:
            anyio.run(run_stdio, mcp)  # the SDK's stdio, every line answered
    finally:
        if listener is not None:
            listener.stop()
        watcher.stop()
        notes.close()


def serve_http(mcp: FastMCP, http: HttpSettings) -> None:
    """Streamable HTTP behind the guard (Host, Origin, token) and the session bound."""
    import uvicorn
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    from memory.fronts.mcp.http_guard import HttpGuard
    from memory.fronts.mcp.http_sessions import SessionKeeper

    app = mcp.http_app(path=MCP_PATH, session_idle_timeout=http.session_idle_s)
    keeper = SessionKeeper(app, MCP_PATH, http.max_sessions, http.session_idle_s,
                           HANDSHAKE_PROTOCOL_VERSIONS, log.info)
    logging.getLogger("mcp").setLevel(logging.WARNING)  # a line per session opened or closed
    host = f"[{http.host}]" if ":" in http.host else http.host
    names = ", ".join(("loopback",) + http.allowed_hosts)
    access = (f"clients must send 'Authorization: Bearer <token>' (token from "
              f"{http.token_source})" if http.token else
              "no token: any local process may call it (set NOTES_HTTP_TOKEN or --token-file)")
    log.info("serving MCP at http://%s:%d%s to Host/Origin %s; %s; at most %d sessions, "
             "each closed after %.0f s idle", host, http.port, MCP_PATH, names, access,
             http.max_sessions, http.session_idle_s)
    uvicorn.run(HttpGuard(keeper, http, log.warning), host=http.host, port=http.port,
                log_config=None, access_log=False, ws="none", lifespan="on",
                timeout_graceful_shutdown=2)


def main(argv: Sequence[str] | None = None) -> int:
    """``python mcp_server.py [OPTIONS]``: the options of ``notes [--notes DIR] [--state-dir
    DIR] [--example] serve`` (:func:`memory.fronts.cli.serve.serve_script`); click exits
    with the status (2 for a usage error, 1 for ``Error: …``)."""
    from memory.fronts.cli.serve import serve_script

    serve_script().main(args=None if argv is None else list(argv), prog_name="mcp_server.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
