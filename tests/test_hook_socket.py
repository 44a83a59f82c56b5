"""The prompt hook answered by a running MCP server over the store's socket: the same
answers as in-process, a socket only its user can reach, and a fallback for every failure."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import NOTES_BIN, copy_example
from memory.config import load_config
from memory.hook import HookArgs, answer, client, command_line
from memory.hook import socket as hook_socket
from memory.hook.client import ask, client_request, socket_path
from memory.hook.socket import HookSocket

PROMPTS = ["cómo hago rollback de un despliegue", "redis eviction policy", "hola, buenos días",
           "sigue con lo que recomiendes"]
ROOT_ONLY = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                               reason="needs root to act as another user")


def payload(prompt: str, transcript: str = "", session: str = "s1") -> str:
    return json.dumps({"session_id": session, "transcript_path": transcript, "cwd": "/tmp",
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt})


def hook_request(store: Path, raw: str, **env: str) -> dict[str, Any]:
    """What a hook process started here (by this test process) with NOTES_DIR=store sends."""
    request = client_request(raw, None, None, False,
                             {**os.environ, "NOTES_DIR": str(store), **env}, os.getcwd())
    return {**request, "parent": os.getpid()}


def run_hook(store: Path, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NOTES_DIR": str(store)}
    return subprocess.run([str(NOTES_BIN), *args, "hook", "user-prompt"], input=stdin,
                          capture_output=True, text=True, env=env, timeout=60)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    lines = [json.dumps({"type": role, "isSidechain": False, "message": {"role": role,
                         "content": text}})
             for role, text in [("user", "Redis se quedó sin memoria y expulsó claves"),
                                ("assistant", "Looking at maxmemory on the broker.")]]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


class Server:
    """`notes serve` over stdio, as Claude Code runs it (stdin kept open)."""

    def __init__(self, store: Path, log: Path, *args: str) -> None:
        env = {**os.environ, "NOTES_DIR": str(store)}
        self.log = log
        with open(log, "w") as errors:
            self.proc = subprocess.Popen([str(NOTES_BIN), "serve", *args], env=env,
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=errors)
        self.state = load_config(store).state_dir

    def wait_listening(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while "answering the prompt hook" not in self.log.read_text():
            assert self.proc.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()  # end of the stdio session: the server exits
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def served_store(tmp_path_factory: pytest.TempPathFactory, indexed_example: Path) -> Path:
    """A copy of the indexed example for the server the tests below share."""
    return copy_example(indexed_example, tmp_path_factory.mktemp("served") / "notes")


@pytest.fixture(scope="module")
def server(served_store: Path) -> Iterator[Server]:
    """One real `notes serve` for the tests that look at its socket or ask it (a server start
    is ~1.3 s of CPU)."""
    running = Server(served_store, served_store.parent / "server.log")
    running.wait_listening()
    yield running
    running.stop()


def test_the_server_answers_as_the_hook_process_does(store_dir: Path, tmp_path: Path,
                                                     transcript: Path) -> None:
    inputs = [payload(p) for p in PROMPTS] + [payload(PROMPTS[3], str(transcript)),
                                              payload("redis", session="")]
    alone = [run_hook(store_dir, i) for i in inputs]
    running = Server(store_dir, tmp_path / "server.log")
    try:
        running.wait_listening()
        direct = [ask(running.state, hook_request(store_dir, i)) for i in inputs]
        through = [run_hook(store_dir, i) for i in inputs]
    finally:
        running.stop()
    assert [a.stdout for a in alone] == [t.stdout for t in through]
    assert [d and d.get("output") for d in direct] == [a.stdout.rstrip("\n") for a in alone]
    assert sum(bool(a.stdout) for a in alone) >= 4  # most of them add notes
    assert not socket_path(running.state).exists()  # removed when the server stopped
    with sqlite3.connect(running.state / "usage.sqlite") as db:
        rows = db.execute("SELECT session, front, rung, query, ranked FROM calls WHERE "
                          "rung = 'suggest' ORDER BY id").fetchall()
    third = len(rows) // 3  # the usage log holds each call alike, as the hook's, 3 times
    assert third >= 4 and rows[:third] == rows[third:2 * third] == rows[2 * third:]
    assert {row[1] for row in rows} == {"hook"}
    assert {row[0] for row in rows} == {"s1", f"hook-{os.getpid()}"}


def test_the_socket_is_the_users_alone(server: Server) -> None:
    path = socket_path(server.state)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_the_hook_process_does_not_load_the_cli_the_config_or_the_index(
        server: Server, served_store: Path) -> None:
    store_dir = served_store
    env = {**os.environ, "NOTES_DIR": str(store_dir)}
    # the server's first answer opens its index: not within the hook's 1 s on a loaded machine
    warm = hook_request(store_dir, payload(PROMPTS[0]))
    assert ask(server.state, warm, timeout=60)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "memory", "hook",
                           "user-prompt"], input=payload(PROMPTS[0]), capture_output=True,
                          text=True, env=env, timeout=60)
    assert "howto/deploy-production" in done.stdout
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines()
              if line.startswith("import time:")}
    assert {"memory.hook", "memory.hook.client"} <= loaded
    # Answered through the server, the hook process builds no configuration and no index:
    # not even `dataclasses` (with `inspect`, a sixth of such a hook's time).
    assert not loaded & {"click", "whoosh", "memory.api", "tiktoken", "markdown_it", "yaml",
                         "memory.config", "memory.hook.answer", "memory.hook.socket",
                         "dataclasses", "inspect", "hashlib", "threading"}


def quiet(_: str) -> None:
    return None


def listening(state: Path, answer: hook_socket.Answer) -> HookSocket:
    listener = HookSocket(state, answer, quiet)
    assert listener.start()
    return listener


def test_a_socket_in_a_folder_open_to_others_is_not_asked(tmp_path: Path) -> None:
    state = tmp_path / "state"
    listener = listening(state, lambda _: {"output": "planted"})
    try:
        assert ask(state, {"input": "x"}) == {"output": "planted"}
        os.chmod(socket_path(state).parent, 0o755)
        assert ask(state, {"input": "x"}) is None
    finally:
        listener.stop()


def test_a_server_closes_its_folder_to_others(tmp_path: Path) -> None:
    folder = socket_path(tmp_path / "state").parent
    folder.mkdir(parents=True, mode=0o755)
    os.chmod(folder, 0o755)
    listener = listening(tmp_path / "state", lambda _: {"output": "ok"})
    try:
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    finally:
        listener.stop()


@ROOT_ONLY
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    state = tmp_path / "state"
    folder = socket_path(state).parent
    folder.mkdir(parents=True, mode=0o700)
    os.chown(folder, 65534, 65534)
    messages: list[str] = []
    assert not HookSocket(state, lambda _: {"output": "x"}, messages.append).start()
    assert "belongs to another user" in messages[0]
    assert ask(state, {"input": "x"}) is None


@ROOT_ONLY
def test_another_user_cannot_connect(tmp_path: Path) -> None:
    """As root, a child running as ``nobody`` tries the socket: refused while the folder is
    the user's alone, and let in once it is opened (so the refusal is the permissions')."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 for the other user")
    base = Path(tempfile.mkdtemp(prefix="hook-sock-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        listener = listening(base / "state", lambda _: {"output": "secret"})
        os.chmod(base / "state", 0o755)
        path = socket_path(base / "state")
        probe = ("import socket,sys\ns=socket.socket(socket.AF_UNIX)\ntry:\n s.connect(sys.argv[1])"
                 "\nexcept PermissionError:\n print('refused')\nelse:\n print('connected')")

        def as_nobody() -> str:
            done = subprocess.run([python, "-c", probe, str(path)], user=65534, group=65534,
                                  capture_output=True, text=True, timeout=30, cwd="/")
            return done.stdout.strip() or done.stderr

        try:
            assert as_nobody() == "refused"
            os.chmod(path.parent, 0o755)
            os.chmod(path, 0o666)
            assert as_nobody() == "connected"
        finally:
            listener.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_stale_socket_is_replaced_and_asks_fail_fast(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = socket_path(state)
    hook_socket.private_folder(path.parent)
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(path))  # a killed server's file: nobody listens
    dead.close()
    start = time.monotonic()
    assert ask(state, {"input": "x"}) is None
    assert time.monotonic() - start < 0.5
    listener = listening(state, lambda _: {"output": "fresh"})
    try:
        assert ask(state, {"input": "x"}) == {"output": "fresh"}
    finally:
        listener.stop()
    assert not path.exists()


def test_a_second_server_takes_over_and_the_first_takes_back(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = listening(state, lambda _: {"output": "first"})
    second = listening(state, lambda _: {"output": "second"})
    try:
        assert ask(state, {"input": "x"}) == {"output": "second"}
        second.stop()
        deadline = time.monotonic() + hook_socket.CHECK_EVERY_S * 3
        while ask(state, {"input": "x"}) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ask(state, {"input": "x"}) == {"output": "first"}
    finally:
        second.stop()
        first.stop()
    assert not socket_path(state).exists()


def test_a_slow_server_is_given_up(tmp_path: Path) -> None:
    release = threading.Event()

    def slow(_: dict[str, Any]) -> dict[str, Any]:
        release.wait(10)
        return {"output": "late"}

    listener = listening(tmp_path / "state", slow)
    try:
        start = time.monotonic()
        assert ask(tmp_path / "state", {"input": "x"}, timeout=0.3) is None
        assert time.monotonic() - start < 2
    finally:
        release.set()
        listener.stop()


def test_requests_are_bounded(tmp_path: Path) -> None:
    state = tmp_path / "state"
    listener = listening(state, lambda request: {"output": str(len(request["input"]))})
    try:
        assert ask(state, {"input": "x" * 1000}) == {"output": "1000"}
        assert ask(state, {"input": "x" * client.MAX_REQUEST_BYTES}) is None  # not sent
        with socket.socket(socket.AF_UNIX) as raw:
            raw.connect(str(socket_path(state)))
            raw.settimeout(10)
            try:
                raw.sendall(b"y" * (client.MAX_REQUEST_BYTES + 65536))
                reply = raw.recv(65536)
            except OSError:  # the server stopped reading and closed: also a refusal
                reply = b""
        assert reply == b"" or "error" in json.loads(reply)
        assert ask(state, {"input": "x"}) == {"output": "1"}  # still serving
    finally:
        listener.stop()


def test_a_server_of_other_settings_is_not_used(store_dir: Path, tmp_path: Path) -> None:
    from memory.api import Notes

    config = load_config(store_dir)
    notes = Notes(config, notify=quiet, front="mcp")
    try:
        reply = answer.serve_request(notes, hook_request(tmp_path, payload("redis")))
        assert "another store" in reply["error"]
        other = hook_request(store_dir, payload("redis"), NOTES_BACKEND="tantivy")
        assert "other settings" in answer.serve_request(notes, other)["error"]
        gone = hook_request(tmp_path / "missing", payload("redis"))
        assert "cannot be found" in answer.serve_request(notes, gone)["error"]
        same = answer.serve_request(notes, hook_request(store_dir, payload("redis")))
        assert "redis" in same["output"]
    finally:
        notes.close()


def test_a_long_state_folder_gets_a_short_socket(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    path = socket_path(deep)
    assert len(os.fsencode(str(path))) <= client.MAX_SOCKET_PATH
    assert path != socket_path(tmp_path / "other")
    listener = listening(deep, lambda _: {"output": "short"})
    try:
        assert ask(deep, {"input": "x"}) == {"output": "short"}
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    finally:
        listener.stop()


@pytest.mark.parametrize(("argv", "expected"), [
    (["hook", "user-prompt"], HookArgs()),
    (["--notes", "n", "hook", "user-prompt"], HookArgs("n")),
    (["--notes=n", "--state-dir", "s", "--example", "hook", "user-prompt"],
     HookArgs("n", "s", True)),
    (["--notes", "a", "--notes", "b", "hook", "user-prompt"], HookArgs("b")),
    (["hook", "user-prompt", "--help"], None), (["--help"], None), (["--version"], None),
    (["--notes"], None), (["--verbose", "hook", "user-prompt"], None), (["hook"], None),
    (["suggest", "x"], None), (["--example=1", "hook", "user-prompt"], None),
])
def test_the_entry_point_recognises_only_the_hook(argv: list[str],
                                                  expected: HookArgs | None) -> None:
    assert command_line(argv) == expected


def test_anything_else_still_reaches_the_cli(store_dir: Path) -> None:
    env = {**os.environ, "NOTES_DIR": str(store_dir)}
    helped = subprocess.run([str(NOTES_BIN), "hook", "user-prompt", "--help"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert helped.returncode == 0 and "UserPromptSubmit hook" in helped.stdout
    result = run_hook(store_dir, payload(PROMPTS[0]), "--notes", str(store_dir))
    assert "howto/deploy-production" in result.stdout


def test_a_notes_path_that_is_a_file_does_not_fail_the_prompt(tmp_path: Path) -> None:
    file = tmp_path / "a-file"
    file.write_text("x")
    result = run_hook(tmp_path, payload("redis"), "--notes", str(file))
    assert result.returncode == 0 and result.stdout == ""
    assert "notes hook:" in result.stderr


def test_the_request_carries_what_the_config_is_built_from_and_no_secret() -> None:
    env = {"NOTES_DIR": "/n", "NOTES_BACKEND": "whoosh", "NOTES_HTTP_TOKEN": "s3cret",
           "HOME": "/home/u", "XDG_CACHE_HOME": "/c", "PATH": "/bin", "AWS_SECRET": "x"}
    request = client_request("{}", "/n", None, False, env, "/work")
    assert request["client"] == {"notes_dir": "/n", "state_dir": None, "example": False,
                                 "cwd": "/work", "env": {"NOTES_DIR": "/n",
                                                         "NOTES_BACKEND": "whoosh",
                                                         "HOME": "/home/u",
                                                         "XDG_CACHE_HOME": "/c"}}
    assert request["parent"] == os.getppid() and request["input"] == "{}"

