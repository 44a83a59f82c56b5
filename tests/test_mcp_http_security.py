"""The HTTP server refuses what a web page could send it (DNS rebinding: a foreign Host or
Origin), takes a bearer token when one is set, and will not listen beyond loopback without
one. A real `notes serve --http` process, real HTTP requests, a real MCP client."""

from __future__ import annotations

import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from fastmcp import Client
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from conftest import NOTES_BIN, ROOT, RunCli, copy_example
from memory.fronts.mcp.http_guard import host_allowed, origin_allowed
from stress.http_server import McpHttp, Server, free_port, http_server, initialize, sse_json

NOTE = "infra/redis"
TOKEN = "test-token-0123456789abcdef"


def note_bytes(store: Path) -> bytes:
    return (store / f"{NOTE}.md").read_bytes()


def append(mcp: McpHttp, title: str) -> httpx.Response:
    return mcp.call("append_history", note=NOTE, title=title, text="Written over HTTP.",
                    date="2026-11-30")


def assert_refused(response: httpx.Response, status: int, *words: str) -> None:
    """Refused with one line: a JSON-RPC error's message for an MCP client (as here)."""
    assert response.status_code == status, (response.status_code, response.text)
    assert "\n" not in response.text.strip(), response.text
    body = str(response.json()["error"]["message"])
    for word in words:
        assert word in body, body


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory, indexed_example: Path) -> Path:
    """A copy of the indexed example for the servers this module's tests share."""
    return copy_example(indexed_example, tmp_path_factory.mktemp("http-security") / "notes")


@pytest.fixture(scope="module")
def plain_server(shared_store: Path) -> Iterator[Server]:
    """One `notes serve --http` with the default settings, for the two tests of Host and
    Origin (one is refused everything, the other appends its own entries): a server start
    is ~1.3 s of CPU."""
    with http_server(shared_store, shared_store.parent / "plain.log") as server:
        yield server


@pytest.fixture(scope="module")
def token_server(shared_store: Path) -> Iterator[Server]:
    """One server with NOTES_HTTP_TOKEN set, for the two tests of the token."""
    with http_server(shared_store, shared_store.parent / "token.log",
                     env={"NOTES_HTTP_TOKEN": TOKEN}) as server:
        yield server


def test_a_foreign_host_or_origin_is_refused_and_nothing_is_written(
        shared_store: Path, plain_server: Server) -> None:
    store_dir = shared_store
    before = note_bytes(store_dir)
    server = plain_server
    foreign = [{"host": f"evil.example:{server.port}"},
               {"host": f"evil.example:{server.port}", "origin": "http://evil.example"},
               {"origin": "http://evil.example"},
               {"origin": f"http://evil.example:{server.port}"},
               {"origin": "null"}]
    for headers in foreign:
        mcp = McpHttp(server, headers)
        assert_refused(mcp.initialize(), 403, "forbidden")
        mcp.close()
    # a page that somehow holds a live session id is refused all the same
    good = McpHttp(server)
    assert good.initialize().status_code == 200
    for headers in foreign:
        hijack = McpHttp(server, headers)
        hijack.session = good.session
        assert_refused(append(hijack, "Rebinding"), 403, "forbidden")
        hijack.close()
    good.close()
    log = server.log_text()
    assert note_bytes(store_dir) == before
    assert "refused" in log and "evil.example" in log


def test_loopback_names_are_accepted(shared_store: Path, plain_server: Server) -> None:
    store_dir, server = shared_store, plain_server
    port = server.port
    accepted = [{}, {"host": f"localhost:{port}"}, {"host": f"127.0.0.1:{port}"},
                {"host": f"[::1]:{port}"}, {"host": "localhost"},
                {"origin": f"http://127.0.0.1:{port}"}, {"origin": "http://localhost:6274"},
                {"origin": "http://[::1]:3000", "host": f"localhost:{port}"}]
    for i, headers in enumerate(accepted):
        mcp = McpHttp(server, headers)
        assert mcp.initialize().status_code == 200, headers
        answer = sse_json(append(mcp, f"Loopback {i}"))
        assert not answer["result"].get("isError"), answer
        mcp.close()
    text = note_bytes(store_dir).decode()
    assert all(f"Loopback {i}" in text for i in range(len(accepted)))


def test_the_allow_list_adds_names_by_flag_and_by_environment(
        store_dir: Path, tmp_path: Path) -> None:
    env = {"NOTES_HTTP_ALLOWED_HOSTS": "box.local:8443, other.lan"}
    with http_server(store_dir, tmp_path / "server.log", "--allow-host", "notes.lan",
                     env=env) as server:
        port = server.port
        for headers in [{"host": f"notes.lan:{port}"}, {"origin": "https://notes.lan"},
                        {"host": "box.local:8443", "origin": "https://box.local:8443"},
                        {"host": "other.lan:1234"}]:
            mcp = McpHttp(server, headers)
            assert mcp.initialize().status_code == 200, headers
            mcp.close()
        for headers in [{"host": "box.local:9999"}, {"host": f"evil.example:{port}"},
                        {"origin": "http://box.local:9999"}]:
            mcp = McpHttp(server, headers)
            assert_refused(mcp.initialize(), 403)
            mcp.close()


def test_the_token_is_required_when_set(shared_store: Path, token_server: Server) -> None:
    store_dir, server = shared_store, token_server
    before = note_bytes(store_dir)
    for headers in [{}, {"authorization": "Bearer wrong"}, {"authorization": TOKEN},
                    {"authorization": f"Basic {TOKEN}"}]:
        mcp = McpHttp(server, headers)
        response = mcp.initialize()
        assert_refused(response, 401, "token")
        assert response.headers["www-authenticate"].startswith("Bearer")
        mcp.close()
    good = McpHttp(server, {"authorization": f"Bearer {TOKEN}"})
    assert good.initialize().status_code == 200
    stolen = McpHttp(server)  # the session id alone is not enough
    stolen.session = good.session
    assert_refused(append(stolen, "No token"), 401)
    foreign = McpHttp(server, {"authorization": f"Bearer {TOKEN}",
                               "origin": "http://evil.example"})
    assert_refused(foreign.initialize(), 403)
    assert note_bytes(store_dir) == before
    assert not sse_json(append(good, "With token"))["result"].get("isError")
    for mcp in (good, stolen, foreign):
        mcp.close()
    assert TOKEN not in server.log_text()
    _curl_refusals(server)
    assert "With token" in note_bytes(store_dir).decode()


def _curl_refusals(server: Server) -> None:
    """To anything but an MCP client (curl, a browser) a refusal is one line of text."""
    foreign = httpx.post(server.url, headers={"origin": "http://evil.example"}, timeout=30)
    missing = httpx.post(server.url, timeout=30)
    for response, status in ((foreign, 403), (missing, 401)):
        assert response.status_code == status
        assert response.headers["content-type"].startswith("text/plain")
        assert response.text.endswith("\n") and response.text.count("\n") == 1
    assert foreign.text.startswith("forbidden: Origin 'http://evil.example' is not allowed")
    assert missing.text.startswith("unauthorized: send the header 'Authorization: Bearer")


async def test_the_real_client_works_with_the_token(token_server: Server) -> None:
    server = token_server
    async with Client(server.url, auth=TOKEN) as client:
        names = {t.name for t in await client.list_tools()}
        found = await client.call_tool("suggest", {"query": "redis eviction"})
    assert "append_history" in names
    assert NOTE in found.content[0].text  # type: ignore[union-attr]
    with pytest.raises(Exception, match="unauthorized: send the header"):
        async with Client(server.url) as client:
            await client.list_tools()
    # the MCP SDK's client, with a session (the 2025 handshake, as Claude Code's)
    async with httpx.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"},
                                 timeout=30) as http:
        async with streamable_http_client(server.url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                answer = await session.call_tool("suggest", {"query": "redis eviction"})
    assert NOTE in answer.content[0].text  # type: ignore[union-attr]
    assert "Traceback" not in server.log_text()


def test_a_token_file_is_made_for_the_user_only_and_kept(
        store_dir: Path, tmp_path: Path) -> None:
    token_path = store_dir / ".notes" / "http-token"
    with http_server(store_dir, tmp_path / "server.log", "--token-file") as server:
        token = token_path.read_text().strip()
        assert stat.S_IMODE(token_path.stat().st_mode) == 0o600
        assert len(token) >= 32
        log = server.log_text()
        assert str(token_path) in log and token not in log
        assert_refused(initialize(server), 401)
        mcp = McpHttp(server, {"authorization": f"Bearer {token}"})
        assert mcp.initialize().status_code == 200
        mcp.close()
    with http_server(store_dir, tmp_path / "again.log", "--token-file") as server:
        assert token_path.read_text().strip() == token  # the same token after a restart
        mcp = McpHttp(server, {"authorization": f"Bearer {token}"})
        assert mcp.initialize().status_code == 200
        mcp.close()


def test_a_token_file_others_can_read_is_refused(run_cli: RunCli, store_dir: Path) -> None:
    token_path = store_dir / ".notes" / "http-token"
    token_path.parent.mkdir(exist_ok=True)
    token_path.write_text("a-token-others-can-read-0123456789\n")
    token_path.chmod(0o644)
    done = run_cli("serve", "--http", str(free_port()), "--token-file")
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and len(done.stderr.strip().splitlines()) == 1
    assert f"chmod 600 {token_path}" in done.stderr


@pytest.mark.parametrize(("header", "allowed"), [
    ("localhost:8765", True), ("127.0.0.1", True), ("127.3.4.5:1", True), ("[::1]:8765", True),
    ("LOCALHOST:8765", True), ("notes.lan:9", True), ("box.local:8443", True),
    ("box.local:8444", False), ("localhost.evil.example", False), ("127.0.0.1.nip.io", False),
    ("evil.example:8765", False), ("", False), ("[::1", False), ("localhost:port", False),
    ("0x7f000001", False), ("a@localhost", False)])
def test_host_names(header: str, allowed: bool) -> None:
    assert host_allowed(header, ["notes.lan", "box.local:8443"]) is allowed


@pytest.mark.parametrize(("origin", "allowed"), [
    ("http://localhost:6274", True), ("https://127.0.0.1", True), ("http://[::1]:3000", True),
    ("https://notes.lan", True), ("http://box.local:8443", True), ("https://box.local", False),
    ("null", False), ("file://", False), ("http://127.0.0.1@evil.example", False),
    ("http://localhost.evil.example", False), ("http://evil.example#@127.0.0.1", False),
    ("chrome-extension://abcdef", False), ("http://localhost:99999", False),
    ("http://localhost/path", False)])
def test_origins(origin: str, allowed: bool) -> None:
    assert origin_allowed(origin, ["notes.lan", "box.local:8443"]) is allowed


def test_a_short_token_is_refused(run_cli: RunCli) -> None:
    done = run_cli("serve", "--http", str(free_port()), env={"NOTES_HTTP_TOKEN": "short"})
    assert done.returncode == 1
    assert "NOTES_HTTP_TOKEN holds no usable token" in done.stderr
    assert "secrets.token_urlsafe" in done.stderr


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "example.com"])
def test_listening_beyond_loopback_without_a_token_is_refused(
        run_cli: RunCli, host: str) -> None:
    done = run_cli("serve", "--http", str(free_port()), "--host", host)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("Error: ") and len(done.stderr.strip().splitlines()) == 1
    assert "NOTES_HTTP_TOKEN" in done.stderr and "--token-file" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_server_script_refuses_it_too(store_dir: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "mcp_server.py"), "--notes",
                           str(store_dir), "--http", str(free_port()), "--host", "0.0.0.0"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.startswith("Error: ") and "NOTES_HTTP_TOKEN" in done.stderr


def test_http_options_need_http(run_cli: RunCli) -> None:
    done = run_cli("serve", "--host", "127.0.0.1")
    assert done.returncode == 2
    assert "go with --http PORT" in done.stderr


def test_beyond_loopback_with_a_token_it_serves(store_dir: Path, tmp_path: Path) -> None:
    """Bound to every address (here reached on 127.0.0.1), the token is what lets a client in."""
    with http_server(store_dir, tmp_path / "server.log", "--host", "0.0.0.0",
                     env={"NOTES_HTTP_TOKEN": TOKEN}) as server:
        assert_refused(initialize(server), 401)
        mcp = McpHttp(server, {"authorization": f"Bearer {TOKEN}"})
        assert mcp.initialize().status_code == 200
        mcp.close()


def test_the_server_script_takes_the_options_of_notes_serve() -> None:
    """`python mcp_server.py` is `notes serve` with the store's options: one set of options,
    read by one command line."""
    script = subprocess.run([sys.executable, str(ROOT / "mcp_server.py"), "--help"],
                            capture_output=True, text=True, timeout=60)
    serve = subprocess.run([str(NOTES_BIN), "serve", "--help"], capture_output=True,
                           text=True, timeout=60)
    options = {o for o in serve.stdout.split() if o.startswith("--")} | {"--notes",
                                                                          "--example"}
    assert options <= set(script.stdout.split()), script.stdout
    wrong = subprocess.run([sys.executable, str(ROOT / "mcp_server.py"), "--max-sessions",
                            "0", "--http", "1"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "--max-sessions" in wrong.stderr
