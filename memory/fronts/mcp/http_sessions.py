"""A bound on the MCP server's HTTP sessions, in front of its ASGI app.

Each streamable-HTTP session holds a server task and its streams (about 40 KB) until the
client deletes it or it idles out, and clients that crash or are killed never delete theirs.
:class:`SessionKeeper` follows sessions by their ``mcp-session-id`` header and keeps at most
``max_sessions`` open: when a new session takes the count past it, the least recently used
*idle* session (no request in flight, no open stream) is closed with an ordinary ``DELETE``
to the app, so its id answers 404 and its client starts a new one (as the spec says). A
session with a request in flight is never closed; when every session is busy, a new one is
refused with 503. Idle expiry itself is the app's (the MCP SDK's ``session_idle_timeout``,
given the same number of seconds); here expired sessions are only forgotten.

Pure ASGI, no framework: only the server (:mod:`memory.fronts.mcp.server`) imports this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from memory.fronts.mcp.http_guard import (
    ASGIApp,
    Message,
    Receive,
    Scope,
    Send,
    headers_of,
    respond,
    wants_json,
)

SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"
FORGET_MARGIN_S = 1.0  # forget an expired session a little after the app has closed it
LOG_EVERY_S = 60.0  # at most one line a minute about closed sessions, one about refused ones


@dataclass
class _Session:
    last_used: float
    busy: int = 0  # requests in flight, an open GET stream included


class SessionKeeper:
    """ASGI middleware bounding the live sessions of the MCP endpoint at ``path``."""

    def __init__(self, app: ASGIApp, path: str, max_sessions: int, idle_s: float,
                 session_versions: Collection[str], notify: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.app, self.path, self.max_sessions, self.idle_s = app, path, max_sessions, idle_s
        self.session_versions = session_versions  # protocol versions that have sessions
        self.notify, self.clock = notify, clock
        self.sessions: dict[str, _Session] = {}
        self.closed_since_log, self.last_log = 0, -LOG_EVERY_S
        self.refused_since_log, self.last_refusal_log = 0, -LOG_EVERY_S

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path", "").rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers", [])
        session_id = _header(headers, SESSION_HEADER)
        version = _header(headers, VERSION_HEADER)
        if session_id is not None:
            await self._in_session(session_id, scope, receive, send)
        elif scope.get("method") == "POST" and version in (None, *self.session_versions):
            await self._opening(scope, receive, send)
        else:  # e.g. a request of a sessionless protocol version (2026-07-28)
            await self.app(scope, receive, send)

    async def _in_session(self, session_id: str, scope: Scope, receive: Receive,
                          send: Send) -> None:
        session = self.sessions.get(session_id)
        if session is None:  # not ours to count (or gone): the app answers, 404 if gone
            await self.app(scope, receive, send)
            return
        status: list[int] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        session.busy += 1
        try:
            await self.app(scope, receive, watch)
        finally:
            session.busy -= 1
            session.last_used = self.clock()
            ended = status and (status[0] == 404 or (scope.get("method") == "DELETE"
                                                     and status[0] < 300))
            if ended and self.sessions.get(session_id) is session:
                del self.sessions[session_id]

    async def _opening(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session id: an ``initialize`` that may open one."""
        self._forget_expired()
        if len(self.sessions) >= self.max_sessions and not self._idle():
            await respond(send, 503, (
                f"too many sessions: all {len(self.sessions)} open sessions are busy; retry "
                "later, close one (DELETE with its mcp-session-id), or restart the server "
                "with a higher --max-sessions"), wants_json(headers_of(scope)))
            self._report_refusal()
            return
        opened: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                new_id = _header(message.get("headers", []), SESSION_HEADER)
                if new_id is not None:
                    self.sessions[new_id] = _Session(self.clock(), busy=1)
                    opened.append(new_id)
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            for new_id in opened:
                if (session := self.sessions.get(new_id)) is not None:
                    session.busy -= 1
                    session.last_used = self.clock()
        if opened:
            await self._trim(scope, keep=opened[0])

    def _idle(self, keep: str = "") -> list[tuple[float, str]]:
        return [(s.last_used, sid) for sid, s in self.sessions.items()
                if s.busy == 0 and sid != keep]

    def _forget_expired(self) -> None:
        cutoff = self.clock() - self.idle_s - FORGET_MARGIN_S
        for _, session_id in self._idle():
            if self.sessions[session_id].last_used < cutoff:
                del self.sessions[session_id]

    async def _trim(self, scope: Scope, keep: str) -> None:
        """Close the least recently used idle sessions until the count is within the cap."""
        while len(self.sessions) > self.max_sessions:
            idle = self._idle(keep)
            if not idle:
                return
            last_used, session_id = min(idle)
            del self.sessions[session_id]
            try:
                await self._delete(session_id, scope)
            except Exception as exc:  # the request that got here was answered already
                self.notify(f"closing an idle session failed ({type(exc).__name__}: {exc})")
                return
            self._report(self.clock() - last_used)

    async def _delete(self, session_id: str, scope: Scope) -> None:
        """End a session as its client would: ``DELETE`` with its id, straight to the app."""
        request = {key: scope[key] for key in ("type", "asgi", "http_version", "scheme",
                                               "server", "client", "root_path", "path",
                                               "raw_path", "state") if key in scope}
        host = _header(scope.get("headers", []), b"host") or "127.0.0.1"
        request.update(method="DELETE", query_string=b"", headers=[
            (b"host", host.encode("latin-1")), (SESSION_HEADER, session_id.encode("latin-1"))])
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Message) -> None:
            return None

        await self.app(request, receive, discard)

    def _report_refusal(self) -> None:
        """One line a minute at most: a client retrying in a loop must not flood the log."""
        self.refused_since_log += 1
        now = self.clock()
        if now - self.last_refusal_log >= LOG_EVERY_S:
            self.notify(f"refused a new session: all {len(self.sessions)} are busy "
                        f"(--max-sessions); {self.refused_since_log} refused since the last "
                        "such line")
            self.refused_since_log, self.last_refusal_log = 0, now

    def _report(self, idle_for: float) -> None:
        self.closed_since_log += 1
        now = self.clock()
        if now - self.last_log >= LOG_EVERY_S:
            self.notify(f"{self.max_sessions} sessions open, the most allowed "
                        f"(--max-sessions): closed the least recently used idle session "
                        f"(idle {idle_for:.0f} s; {self.closed_since_log} closed since the "
                        "last such line)")
            self.closed_since_log, self.last_log = 0, now


def _header(headers: list[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None
