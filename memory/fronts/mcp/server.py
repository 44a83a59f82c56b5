"""The MCP server: the notes ladder as tools for Claude Code or any MCP client.

A server over :class:`memory.api.Notes` with the tools of :mod:`memory.fronts.mcp.tools`;
its package is the only one that imports fastmcp. Logs go to stderr only: on stdio, stdout
carries the protocol. While it serves, it keeps the index fresh, answers the prompt hook on
the store's socket and embeds new notes in the background. What its catalog and answers cost
a client is :mod:`memory.fronts.mcp.costs`.

Run: ``notes serve`` or ``python mcp_server.py`` (the same options, and ``--notes DIR``).
Over HTTP the app sits behind :mod:`memory.fronts.mcp.http_guard` (Host, Origin, token) and
:mod:`memory.fronts.mcp.http_sessions` (a bound on live sessions).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from fastmcp import FastMCP

from memory.api import Notes
from memory.config import Config
from memory.errors import NotesError
from memory.fronts.mcp.http_guard import HttpSettings
from memory.fronts.mcp.stdio_guard import run_stdio
from memory.fronts.mcp.tools import INSTRUCTIONS, add_read_tools, add_write_tools
from memory.hook.socket import HookSocket, answer_hooks
from memory.services.stores import describe_store

SERVER_NAME = "notes"
MCP_PATH = "/mcp"

log = logging.getLogger("notes.mcp")


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
    add_read_tools(mcp, notes)
    if not read_only:
        add_write_tools(mcp, notes)
    return mcp


def package_version() -> str:
    """This package's version (the server's ``serverInfo.version``), not fastmcp's."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("notes-memory")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


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
