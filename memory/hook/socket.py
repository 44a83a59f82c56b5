"""The prompt hook answered by a running MCP server, over a Unix socket.

A cold ``notes hook user-prompt`` process has to import the index and open it before it can
search; the store's MCP server, when one runs, has all of it open. So the server listens on a
Unix socket in the store's state folder (``<state>/run/hook.sock``) and answers the hook with
the same :func:`memory.hook.answer.run_hook` on its own open store, and the hook process asks
it first (:mod:`memory.hook.client`, the standard library only), falling back to
answering in-process when there is no server or it does not answer within
:data:`CLIENT_TIMEOUT_S`.

The socket is as sensitive as the notes (it answers with their ids and titles, and what it says
goes into the model's context), so both ends check each other:

- the folder holding it is the user's own and only theirs (mode 0700, not a symlink); the
  server creates it so, or tightens a folder of its own that is wider, and refuses one that
  belongs to someone else;
- the socket file is mode 0600; the client only connects to a socket the user owns, and on
  Linux each end checks the other process's user id (``SO_PEERCRED``).

A path too long for a socket address (about 100 bytes) is replaced by a short one in
``/tmp/notes-memory-<uid>/`` (same checks), named by a digest of the state folder.

One request per connection: a JSON line ``{"v": 2, "input": …, "parent": …, "client": {…}}``
(what the hook's configuration is built from: :mod:`memory.hook.client`), at most
:data:`MAX_REQUEST_BYTES`; the answer is one JSON line, ``{"output": …}`` or ``{"error": …}``.
The server handles at most :data:`MAX_WORKERS` connections at once (more are closed at once,
and their hooks answer in-process), each within :data:`SERVER_TIMEOUT_S`. A socket file left by
a killed server is replaced by the next server; a server removes its own socket when it stops,
and takes the path back if it disappears while it runs (another server for the same store that
stopped).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.hook.client import (
    MAX_REQUEST_BYTES,
    PROTOCOL,
    folder_problem,
    peer_uid,
    read_line,
    socket_path,
    uid,
)

if TYPE_CHECKING:
    from memory.api import Notes

SERVER_TIMEOUT_S = 5.0  # a connection that sends nothing is closed after this
MAX_WORKERS = 4
CHECK_EVERY_S = 2.0  # how often a server looks that its socket file is still there

Answer = Callable[[dict[str, Any]], dict[str, Any]]
Log = Callable[[str], None]


def private_folder(folder: Path) -> str:
    """Create ``folder`` (mode 0700) or tighten it if it is ours; "" when it is fit."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        return f"{folder} cannot be created ({exc.strerror})"
    problem = folder_problem(folder)
    if problem and "open to others" in problem:
        try:
            os.chmod(folder, 0o700)
        except OSError as exc:
            return f"{problem}, and cannot be closed ({exc.strerror})"
        problem = folder_problem(folder)
    return problem


# -- the server (a thread of the MCP server) --------------------------------------------------
class HookSocket:
    """Listens on the store's hook socket and answers each request with ``answer``."""

    def __init__(self, state_dir: Path, answer: Answer, log: Log) -> None:
        self.path = socket_path(state_dir)
        self.answer, self.log = answer, log
        self._sock: socket.socket | None = None
        self._bound: tuple[int, int] | None = None  # (device, inode) of our socket file
        self._stop = threading.Event()
        self._binding = threading.Lock()  # taking the path back never races stop()
        self._thread: threading.Thread | None = None
        self._slots = threading.BoundedSemaphore(MAX_WORKERS)

    def start(self) -> bool:
        """Bind the socket and serve it from a daemon thread; False (logged) if it cannot."""
        problem = private_folder(self.path.parent)
        if problem:
            self.log(f"hook socket off: {problem}; hooks answer in their own process")
            return False
        if not self._bind(take_over=True):
            return False
        self._thread = threading.Thread(target=self._serve, name="hook-socket", daemon=True)
        self._thread.start()
        return True

    def _bind(self, take_over: bool) -> bool:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if take_over:
                self._remove_leftover()
            sock.bind(str(self.path))
            os.chmod(self.path, 0o600)
            sock.listen(16)
            sock.settimeout(CHECK_EVERY_S)
            info = os.stat(self.path)
        except OSError as exc:
            sock.close()
            if take_over:
                self.log(f"hook socket off: cannot listen on {self.path} ({exc}); hooks "
                         "answer in their own process")
            return False
        self._sock, self._bound = sock, (info.st_dev, info.st_ino)
        return True

    def _remove_leftover(self) -> None:
        """Whatever is at the path goes: the folder is ours alone, so it is a socket of a
        server that was killed, or of one still running for this store, which we replace
        (it takes the path back when we stop)."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def _ours(self) -> bool:
        try:
            info = os.stat(self.path)
        except OSError:
            return False
        return (info.st_dev, info.st_ino) == self._bound

    def _serve(self) -> None:
        while not self._stop.is_set():
            sock = self._sock
            if sock is None:
                return
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                self._keep_path()
                continue
            except OSError:
                if self._stop.is_set():
                    return
                time.sleep(0.1)
                continue
            if not self._slots.acquire(blocking=False):
                conn.close()  # busy: that hook answers in its own process
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True,
                             name="hook-request").start()

    def _keep_path(self) -> None:
        """Take the path back if our socket file is gone (a second server for the same
        store replaced it, then stopped and removed it)."""
        with self._binding:
            if self._stop.is_set() or self._ours() or os.path.lexists(self.path):
                return
            old = self._sock
            if self._bind(take_over=False):
                if old is not None:
                    old.close()
                self.log(f"hook socket: listening again on {self.path}")

    def _handle(self, conn: socket.socket) -> None:
        try:
            with conn:
                if peer_uid(conn) not in (None, uid()):
                    return
                line = read_line(conn, MAX_REQUEST_BYTES,
                                  time.monotonic() + SERVER_TIMEOUT_S)
                reply = self._reply(line)
                conn.settimeout(SERVER_TIMEOUT_S)
                conn.sendall(json.dumps(reply, ensure_ascii=False).encode() + b"\n")
        except OSError:
            pass  # the hook gave up (timed out) or went away: it answers in-process
        finally:
            self._slots.release()

    def _reply(self, line: bytes | None) -> dict[str, Any]:
        if line is None:
            return {"error": f"no request within {SERVER_TIMEOUT_S:g} s, or over "
                             f"{MAX_REQUEST_BYTES} bytes"}
        try:
            request = json.loads(line)
        except ValueError:
            return {"error": "the request is not JSON"}
        if not isinstance(request, dict) or request.get("v") != PROTOCOL:
            return {"error": f"not a hook request of protocol {PROTOCOL}"}
        try:
            return self.answer(request)
        except Exception as exc:  # the hook falls back; the server goes on
            self.log(f"hook socket: answering failed: {type(exc).__name__}: {exc}")
            return {"error": f"{type(exc).__name__}: {exc}"}

    def stop(self) -> None:
        """Stop listening and remove our socket file (not one another server put there)."""
        with self._binding:
            self._stop.set()
            sock, self._sock = self._sock, None
        if sock is not None:
            if self._ours():
                try:
                    os.unlink(self.path)
                except OSError:
                    pass
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() under way (Linux)
            except OSError:
                pass
            sock.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)


def answer_hooks(notes: Notes, log: Log) -> HookSocket | None:
    """Answer the prompt hook of ``notes``' store from this process (the MCP server's) on
    its socket, with :func:`memory.hook.answer.serve_request`; None if it cannot listen
    (logged: the hooks then answer in their own process). Stop the listener when done."""
    from memory.hook.answer import serve_request

    listener = HookSocket(notes.config.state_dir, lambda request: serve_request(notes, request),
                          log)
    return listener if listener.start() else None
