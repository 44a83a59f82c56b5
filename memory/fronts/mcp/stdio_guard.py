"""The stdio transport with every line answered.

The MCP SDK's stdio transport (``mcp.server.stdio``) drops a line it cannot read as a
JSON-RPC message: ``{``, ``null``, ``[]``, bytes that are not UTF-8, an escape that is no
Unicode character (``\\ud800``). It hands the server an exception that nobody answers or logs,
and a client waits forever. JSON-RPC 2.0 asks for an answer: a parse error (-32700) or an
invalid request (-32600), with the request's id when it can be read, else ``id: null``.

Here the server reads its stdin through :class:`GuardedLines`: a line that is a JSON-RPC
message goes on to the SDK unchanged; any other line is answered on the SDK's own write
stream (so frames never interleave on stdout), logged as one line on stderr, and the next
line is served. Blank lines are skipped. Over HTTP the SDK already answers such a body with
400. :func:`run_stdio` is fastmcp 4.2's ``run_stdio_async`` with this transport in place of
the SDK's; it uses two of fastmcp's private names (``_lifespan_manager``, ``_mcp_server``),
so fastmcp is pinned, and tests/test_mcp_stdio_garbage.py drives the real server.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import IO, Any, cast

import anyio
import mcp_types as types
from fastmcp import FastMCP
from fastmcp.server.context import reset_transport, set_transport
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

log = logging.getLogger("notes.mcp")


@dataclass(frozen=True)
class Refusal:
    """The answer to a line that is not a JSON-RPC message."""

    code: int
    message: str
    id: str | int | None = None

    def response(self) -> SessionMessage:
        error = types.JSONRPCError(jsonrpc="2.0", id=self.id,
                                   error=types.ErrorData(code=self.code, message=self.message))
        return SessionMessage(error)


def judge(raw: bytes) -> str | Refusal | None:
    """The line as text for the SDK if it is a JSON-RPC message, else the answer it gets;
    None for a blank line."""
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        return Refusal(PARSE_ERROR, f"Parse error: the line is not UTF-8 (byte "
                       f"0x{raw[exc.start]:02x} at offset {exc.start}); send UTF-8 text",
                       _request_id(_loads(raw.decode("utf-8", "replace"))))
    try:
        types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        return _refusal(text, exc)
    return text


_NOT_PARSED = object()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return _NOT_PARSED


def _refusal(text: str, exc: ValidationError) -> Refusal:
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    parsed = _loads(text)
    if parsed is _NOT_PARSED:
        return Refusal(PARSE_ERROR, f"Parse error: {errors[0]['msg']}; send one JSON-RPC "
                       "object per line")
    request_id = _request_id(parsed)
    if errors[0]["type"] == "json_invalid":  # Python's json reads it, the SDK's parser not
        why = ("an escape that is no Unicode character (a lone surrogate such as \\ud800)"
               if _has_surrogate(text, parsed) else errors[0]["msg"])
        return Refusal(PARSE_ERROR, f"Parse error: the message holds {why}; send valid "
                       "Unicode", request_id)
    if isinstance(parsed, list):
        what = "a batch (a JSON array), which MCP does not take"
    elif not isinstance(parsed, dict):
        what = f"JSON {type(parsed).__name__ if parsed is not None else 'null'}, not an object"
    else:
        where = ".".join(str(part) for part in errors[0]["loc"][1:]) or "the message"
        what = f"not a JSON-RPC 2.0 message ({where}: {errors[0]['msg']})"
    return Refusal(INVALID_REQUEST, f"Invalid Request: {what}; send one JSON-RPC 2.0 "
                   "object per line", request_id)


_SURROGATE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _has_surrogate(text: str, parsed: Any) -> bool:
    return bool(_SURROGATE.search(text)) and re.search(
        "[\ud800-\udfff]", json.dumps(parsed, ensure_ascii=False)) is not None


def _request_id(parsed: Any) -> str | int | None:
    """The id of what may be a request (an object that is no response: neither a result nor
    an error), if it is a valid id."""
    if not isinstance(parsed, dict) or "result" in parsed or "error" in parsed:
        return None
    value = parsed.get("id")
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return value


Answer = Callable[[SessionMessage], Any]


class GuardedLines:
    """Stdin as the SDK's stdio transport reads it (``async for line``), yielding only the
    lines that are JSON-RPC messages and answering the others through ``answer``."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self._answer: Answer | None = None
        self._ready = anyio.Event()
        self.lines = 0

    def answer_with(self, answer: Answer) -> None:
        self._answer = answer
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        while True:
            raw = await anyio.to_thread.run_sync(self.stream.readline)
            if not raw:
                return
            self.lines += 1
            verdict = judge(raw)
            if isinstance(verdict, str):
                yield verdict
            elif verdict is not None:
                await self._refuse(verdict, len(raw))

    async def _refuse(self, refusal: Refusal, size: int) -> None:
        log.warning("stdin line %d (%d bytes) is not a JSON-RPC message: answered %d, %s",
                    self.lines, size, refusal.code, refusal.message)
        await self._ready.wait()
        assert self._answer is not None
        try:
            await self._answer(refusal.response())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the server is closing: nobody is left to answer


@asynccontextmanager
async def guarded_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's stdio transport reading stdin through :class:`GuardedLines`. Like the SDK,
    the wire is read from a private copy of fd 0 while fd 0 itself reads the null device,
    so that a child process cannot take the client's bytes; fd 0 is put back at the end."""
    wire = _divert_stdin()
    stream = sys.stdin.buffer if wire is None else os.fdopen(wire, "rb", closefd=False)
    lines = GuardedLines(stream)
    try:
        async with stdio_server(stdin=cast(Any, lines)) as (read_stream, write_stream):
            lines.answer_with(write_stream.send)
            yield read_stream, write_stream
    finally:
        if wire is not None:  # its descriptor stays open: a reading thread may still hold it
            os.dup2(wire, 0)


def _divert_stdin() -> int | None:
    """A private copy of fd 0, with fd 0 itself on the null device; None if that cannot be
    done (then stdin is read in place, as the SDK does)."""
    try:
        wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        return None
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
    except OSError:
        os.close(wire)
        return None
    return wire


async def run_stdio(mcp: FastMCP) -> None:
    """Serve ``mcp`` over stdio with every line answered (fastmcp's ``run_stdio_async``
    with :func:`guarded_stdio`)."""
    token = set_transport("stdio")
    try:
        async with mcp._lifespan_manager(), guarded_stdio() as (read_stream, write_stream):
            server = mcp._mcp_server
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        reset_transport(token)
