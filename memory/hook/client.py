"""The prompt hook's side of the hook socket: ask the store's running MCP server to answer.

:mod:`memory.hook.socket` is the server's side and says what both ends check. This
side runs in every hook process before anything else is imported, so it imports only the
standard library's ``json``, ``os``, ``socket``, ``stat``, ``struct`` and ``time``
(``hashlib`` only for a state folder whose socket path is too long) and :mod:`memory.locate`
to find the store's state folder: no ``dataclasses``, no configuration, no index.

The hook does not build its configuration to ask: it sends what the configuration is built
from (its ``--notes``/``--state-dir``/``--example`` flags, the ``NOTES_*`` and location
variables of its environment, its current folder and its parent's process id), and the server
builds the hook's :class:`memory.config.Config` from them with the same
:func:`memory.config.load_config` and answers only when that is its own store with its own
settings (:func:`memory.hook.answer.serve_request`).
"""

from __future__ import annotations

import json
import os
import socket
import stat
import struct
import sys
import time
from pathlib import Path

from memory.locate import LOCATION_ENV, state_dir_for

TYPE_CHECKING = False  # not `typing`'s: see memory/__init__.py
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

PROTOCOL = 2  # 2: the hook sends where it runs from, and the server resolves its store
FOLDER_NAME = "run"
SOCKET_NAME = "hook.sock"
MAX_SOCKET_PATH = 100  # bytes; sun_path holds 108 on Linux, 104 on macOS
SHORT_ROOT = Path("/tmp")
MAX_REQUEST_BYTES = 1 << 20  # a longer prompt is answered in-process
MAX_RESPONSE_BYTES = 1 << 20
CLIENT_TIMEOUT_S = 1.0  # connect, send and receive, in all


def socket_path(state_dir: Path) -> Path:
    """Where the hook socket of the store whose state folder is ``state_dir`` lives."""
    path = state_dir / FOLDER_NAME / SOCKET_NAME
    if len(os.fsencode(str(path))) <= MAX_SOCKET_PATH:
        return path
    import hashlib  # here: only a long state folder path needs it

    digest = hashlib.sha256(os.fsencode(str(state_dir))).hexdigest()[:24]
    return SHORT_ROOT / f"notes-memory-{uid()}" / f"{digest}.sock"


def uid() -> int:
    return os.getuid() if hasattr(os, "getuid") else -1


def folder_problem(folder: Path) -> str:
    """Why ``folder`` is not fit to hold the socket ("" when it is): it must be a real
    folder (not a symlink) of this user that no one else may enter."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        return f"{folder} cannot be read ({exc.strerror})"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder"
    if info.st_uid != uid():
        return f"{folder} belongs to another user (uid {info.st_uid})"
    if info.st_mode & 0o077:
        return f"{folder} is open to others (mode {stat.S_IMODE(info.st_mode):o})"
    return ""


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end (Linux; None elsewhere)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    return int(struct.unpack("3i", raw)[1])


def read_line(sock: socket.socket, limit: int, deadline: float) -> bytes | None:
    """Bytes up to the first newline (or the end), None past ``limit`` or the deadline."""
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if b"\n" in chunk:
            break
        if size > limit:
            return None
    data = b"".join(chunks).partition(b"\n")[0]
    return data if len(data) <= limit else None


def ask(state_dir: Path, request: dict[str, Any],
        timeout: float = CLIENT_TIMEOUT_S) -> dict[str, Any] | None:
    """The server's answer to ``request``, or None: no server, not ours, too slow, or an
    answer that is not one (the caller then answers in-process)."""
    path = socket_path(state_dir)
    payload = json.dumps({"v": PROTOCOL, **request}, ensure_ascii=False).encode() + b"\n"
    if len(payload) > MAX_REQUEST_BYTES or folder_problem(path.parent):
        return None
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != uid():
        return None
    deadline = time.monotonic() + timeout
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(path))
            if peer_uid(sock) not in (None, uid()):
                return None
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
            line = read_line(sock, MAX_RESPONSE_BYTES, deadline)
    except OSError:  # refused (a stale socket), reset, timed out
        return None
    try:
        answer = json.loads(line) if line else None
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def read_input(stdin: IO[str] | None) -> str:
    """The hook's standard input ("" for none or a terminal); bytes that are not UTF-8 are
    replaced, never an error."""
    if stdin is None or stdin.isatty():
        return ""
    binary = getattr(stdin, "buffer", None)
    if binary is None:
        return stdin.read()
    data: bytes = binary.read()
    return data.decode("utf-8", errors="replace")


def input_problem(raw: str) -> str:
    """What is wrong with the hook's input ("" when it is the hook's JSON with a prompt):
    the hook then answers nothing and logs this."""
    if not raw.strip():
        return "no input on stdin (Claude Code sends the prompt as JSON)"
    try:
        data = json.loads(raw)
    except ValueError as exc:
        return f"the input is not JSON ({exc})"
    if not isinstance(data, dict) or not isinstance(data.get("prompt"), str):
        return 'the input has no "prompt" text'
    return ""


def write_output(output: str) -> None:
    """Print the hook's answer (nothing for ""); a reader that went away is not an error."""
    if not output:
        return
    try:
        sys.stdout.write(output + "\n")
        sys.stdout.flush()
    except OSError:  # Claude Code stopped reading (timed out): nothing more to do
        pass


def client_request(raw: str, notes_dir: str | None, state_dir: str | None, example: bool,
                   env: Mapping[str, str], cwd: str) -> dict[str, Any]:
    """What the server needs to answer ``raw`` as this hook process would."""
    kept = {k: v for k, v in env.items()  # not the HTTP token: the hook's answer never needs it
            if (k.startswith("NOTES_") and not k.startswith("NOTES_HTTP_")) or k in LOCATION_ENV}
    return {"input": raw, "parent": os.getppid(),
            "client": {"notes_dir": notes_dir, "state_dir": state_dir, "example": example,
                       "env": kept, "cwd": cwd}}


def served(raw: str, notes_dir: str | None, state_dir: str | None, example: bool,
           env: Mapping[str, str] | None = None) -> str | None:
    """The running server's answer to the hook input ``raw``, or None when no server of this
    store answers (then the hook answers in its own process, which also reports a store
    that cannot be found)."""
    env = os.environ if env is None else env
    try:
        cwd = os.getcwd()
        state = state_dir_for(notes_dir, state_dir, example, env, Path(cwd))
    except Exception:  # noqa: BLE001 - the in-process answer reports it, with its next step
        return None
    reply = ask(state, client_request(raw, notes_dir, state_dir, example, env, cwd))
    output = reply.get("output") if reply is not None else None
    return output if isinstance(output, str) else None
