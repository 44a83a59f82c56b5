"""Who may talk to the MCP server over HTTP: the settings, the token, and the checks.

The MCP spec says a server MUST validate ``Origin`` (a web page's fetch carries it) and that a
local server should answer only on loopback: otherwise any web page can reach it by DNS
rebinding (a name of the attacker's that resolves to 127.0.0.1). :class:`HttpGuard` sits in
front of the server's ASGI app and refuses, before anything reaches a tool:

- a ``Host`` that is not a loopback name (``localhost``, ``127.0.0.1``, ``[::1]``, any port)
  nor in the allow-list: 403;
- an ``Origin``, when present, whose host is neither: 403 (``null`` included);
- when a token is set, a request without ``Authorization: Bearer <token>``: 401.

The body is one line: a JSON-RPC error with that message for MCP clients (they show it),
plain text for anything else (curl).

Pure ASGI, no framework: only the server (:mod:`memory.fronts.mcp.server`) imports this module.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from ipaddress import ip_address
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from memory.config import Config
from memory.errors import ConfigError
from memory.fronts.mcp import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_S
from memory.state.safe_files import create_new

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_FILE = "http-token"  # in the store's state folder, mode 0600
MIN_TOKEN_CHARS = 16
DEFAULT_HOST = "127.0.0.1"
ENV_TOKEN = "NOTES_HTTP_TOKEN"
MAKE_TOKEN = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


@dataclass(frozen=True)
class HttpSettings:
    """How the server listens over HTTP and whom it answers."""

    port: int
    host: str = DEFAULT_HOST
    allowed_hosts: tuple[str, ...] = ()  # names (name or name:port) beyond loopback
    token: str = field(default="", repr=False)
    token_source: str = ""  # where the token came from, for the log: the variable or the file
    max_sessions: int = DEFAULT_MAX_SESSIONS
    session_idle_s: float = DEFAULT_SESSION_IDLE_S


def http_settings(config: Config, port: int, host: str | None = None,
                  allow_hosts: Iterable[str] = (), token_file: bool = False,
                  max_sessions: int | None = None,
                  session_idle_s: float | None = None) -> HttpSettings:
    """Resolve the HTTP settings at the entry point: the flags (None: not given), then
    ``config`` (the environment), then the defaults."""
    host = host or DEFAULT_HOST
    names = tuple(allow_hosts) + config.http_allowed_hosts
    for name in names:
        if split_host_port(name) is None:
            raise ConfigError(f"{name!r} is not a host name for the allow-list; give a name or "
                              "address with an optional port, e.g. notes.lan or notes.lan:8080")
    if token_file:
        path = config.state_dir / TOKEN_FILE
        token, source = token_from_file(path), str(path)
    else:
        token, source = config.http_token, ENV_TOKEN
        if token:
            _check_token(token, f"{ENV_TOKEN} holds", f"set {ENV_TOKEN} to a longer one, "
                         f"e.g. the output of `{MAKE_TOKEN}`, or use --token-file")
    bare = host.strip("[]")
    if not is_loopback(bare):
        if not token:
            raise ConfigError(
                f"refusing to serve HTTP on {host} without a token, since anyone who can reach "
                f"that address could read and write the notes; set {ENV_TOKEN} or add "
                "--token-file (clients then send 'Authorization: Bearer <token>'), or leave "
                "out --host to serve on 127.0.0.1 only")
        if not _is_unspecified(bare):
            names += (bare,)
    return HttpSettings(port=port, host=bare, allowed_hosts=names, token=token,
                        token_source=source if token else "",
                        max_sessions=max_sessions or DEFAULT_MAX_SESSIONS,
                        session_idle_s=session_idle_s or DEFAULT_SESSION_IDLE_S)


def token_from_file(path: Path) -> str:
    """The token in ``path``, made (random, mode 0600) when the file does not exist yet."""
    if not path.exists():
        _make_token_file(path)
    if path.stat().st_mode & 0o077:
        raise ConfigError(f"the token file {path} can be read by other users; run "
                          f"chmod 600 {path} (or delete it to get a new token)")
    token = path.read_text(encoding="utf-8", errors="replace").strip()
    _check_token(token, f"the token file {path} holds",
                 "delete it and start the server again to get a new one")
    return token


def _make_token_file(path: Path) -> None:
    """Write a fresh token under a temporary name, then link it into place (atomic; a
    server starting at the same moment keeps the one that won)."""
    create_new(path, secrets.token_urlsafe(32) + "\n", mode=0o600)


def _check_token(token: str, where: str, fix: str) -> None:
    usable = token.isascii() and token.isprintable() and " " not in token
    if len(token) < MIN_TOKEN_CHARS or not usable:
        raise ConfigError(f"{where} no usable token (at least {MIN_TOKEN_CHARS} characters, "
                          f"printable ASCII, no spaces); {fix}")


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def _is_unspecified(host: str) -> bool:
    try:
        return ip_address(host).is_unspecified
    except ValueError:
        return host == ""


def split_host_port(text: str) -> tuple[str, int | None] | None:
    """``name``, ``name:port``, ``[v6]``, ``[v6]:port`` or a bare IPv6 address, lowercased;
    None when malformed."""
    text = text.strip().lower()
    host, port = text, ""
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    elif text.count(":") == 1:
        host, port = text.split(":")
    if not host or any(c in host for c in "/@?# ") or (port and not port.isdigit()):
        return None
    return host, (int(port) if port else None)


def _named(host: str, port: int | None, allowed: Iterable[str]) -> bool:
    if is_loopback(host):
        return True
    for entry in allowed:
        name = split_host_port(entry)
        if name is not None and name[0] == host and name[1] in (None, port):
            return True
    return False


def host_allowed(header: str, allowed: Iterable[str]) -> bool:
    parsed = split_host_port(header)
    return parsed is not None and _named(parsed[0], parsed[1], allowed)


def origin_allowed(origin: str, allowed: Iterable[str]) -> bool:
    try:
        parts = urlsplit(origin.strip())
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        return False
    return _named(parts.hostname.lower(), port, allowed)


class HttpGuard:
    """ASGI middleware: refuses a request with 403 (Host, Origin) or 401 (token) and a
    one-line plain-text body, and reports each refusal to ``notify``."""

    def __init__(self, app: ASGIApp, settings: HttpSettings,
                 notify: Callable[[str], None]) -> None:
        self.app, self.settings, self.notify = app, settings, notify

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await send({"type": "websocket.close", "code": 1008})
            return
        headers = headers_of(scope)
        refusal = self.refusal(headers)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, line = refusal
        client = (scope.get("client") or ("?",))[0]
        self.notify(f"refused {scope.get('method')} {scope.get('path')} from {client}: {line}")
        extra = [(b"www-authenticate", b'Bearer realm="notes"')] if status == 401 else []
        await respond(send, status, line, wants_json(headers), extra)

    def refusal(self, headers: dict[str, list[str]]) -> tuple[int, str] | None:
        allowed, port = self.settings.allowed_hosts, self.settings.port
        hosts, origins = headers.get("host", []), headers.get("origin", [])
        if len(hosts) != 1 or not host_allowed(hosts[0], allowed):
            shown = repr(hosts[0]) if len(hosts) == 1 else "missing or repeated"
            return 403, (f"forbidden: Host {shown} is not a name of this server; use "
                         f"http://127.0.0.1:{port}/mcp, or start the server with "
                         "--allow-host NAME to answer to that name")
        if len(origins) > 1 or (origins and not origin_allowed(origins[0], allowed)):
            return 403, (f"forbidden: Origin {origins[0]!r} is not allowed, since web pages "
                         "of other sites may not use this server; start the server with "
                         "--allow-host NAME to trust that site")
        if self.settings.token and not self._authorized(headers.get("authorization", [])):
            return 401, ("unauthorized: send the header 'Authorization: Bearer <token>' with "
                         f"the token the server was started with ({ENV_TOKEN}, or the "
                         f"{TOKEN_FILE} file in the store's state folder)")
        return None

    def _authorized(self, values: list[str]) -> bool:
        if len(values) != 1:
            return False
        scheme, _, given = values[0].strip().partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(), self.settings.token.encode())


def headers_of(scope: Scope) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, value in scope.get("headers", []):
        found.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return found


def wants_json(headers: dict[str, list[str]]) -> bool:
    """MCP clients accept JSON (and show a JSON-RPC error's message); curl and browsers get
    plain text."""
    return any("application/json" in value for value in headers.get("accept", []))


async def respond(send: Send, status: int, line: str, as_json: bool,
                  extra: list[tuple[bytes, bytes]] | None = None) -> None:
    """A response of one line: plain text, or a JSON-RPC error with that message."""
    if as_json:
        code = -32600 if status < 500 else -32603  # invalid request, internal error
        body = json.dumps({"jsonrpc": "2.0", "id": None,
                           "error": {"code": code, "message": line}}).encode()
        kind = b"application/json"
    else:
        body, kind = (line + "\n").encode(), b"text/plain; charset=utf-8"
    headers = [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
               *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
