"""Project scopes (docs/projects.md): a note belongs to one project or to none, a project is
recognised from the folder (the git repository's remote, else its root, else the folder), and
suggest, recall, list, the prompt hook and the MCP tools run inside project A never return a
note of project B, while the notes of no project stay visible everywhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import NOTES_BIN, copy_initialised
from memory.model.note import parse_note
from memory.project import find_project, normalise_url

ROOT = Path(__file__).resolve().parent.parent
SHOP = "github.com/ana/shop"


def git_repo(folder: Path, remote: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


def notes(*args: str, cwd: Path, store: Path, input: str | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    return subprocess.run([str(NOTES_BIN), "--notes", str(store), *args], cwd=cwd,
                          env={**full, **(env or {})}, input=input, capture_output=True,
                          text=True, timeout=120)


# -- what a project is ------------------------------------------------------------------
@pytest.mark.parametrize("url", ["git@github.com:ana/shop.git", "https://github.com/ana/shop",
                                 "https://ana:tok@GitHub.com/ana/shop.git/",
                                 "ssh://git@github.com:22/ana/shop.git",
                                 "git+ssh://git@github.com/ana/shop"])
def test_every_form_of_a_remote_is_one_key(url: str) -> None:
    assert normalise_url(url) == SHOP


def test_a_project_is_the_repository_then_the_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shop = git_repo(home / "src" / "shop", "git@github.com:ana/shop.git")
    (shop / "api" / "handlers").mkdir(parents=True)
    found = find_project(shop / "api" / "handlers", home=home)
    assert found is not None and found.key == SHOP and found.root == shop
    assert "git remote" in found.why and "git@github.com:ana/shop.git" in found.why
    clone = git_repo(tmp_path / "elsewhere" / "shop-clone", "https://github.com/ana/shop.git")
    assert find_project(clone, home=home).key == SHOP  # type: ignore[union-attr]
    local = git_repo(home / "src" / "scratch")
    assert find_project(local, home=home).key == str(local)  # type: ignore[union-attr]
    worktree = home / "src" / "shop-wt"
    subprocess.run(["git", "-C", str(shop), "-c", "user.name=a", "-c", "user.email=a@b",
                    "commit", "-q", "--allow-empty", "-m", "x"], check=True)
    subprocess.run(["git", "-C", str(shop), "worktree", "add", "-q", str(worktree)], check=True)
    assert find_project(worktree, home=home).key == SHOP  # type: ignore[union-attr]
    plain = home / "Documents" / "letters"
    plain.mkdir(parents=True)
    assert find_project(plain, home=home).key == str(plain)  # type: ignore[union-attr]
    assert find_project(home, home=home) is None
    store = shop / "notes"
    store.mkdir()
    assert find_project(store, store=store, home=home) is None


# -- a store of two projects and shared notes ---------------------------------------------
SHOP_STATE = ("- Payment webhooks from Stripe are retried 3 times with backoff.\n"
              "- Idempotency keys live in Redis for 24 hours.\n")
BLOG_STATE = ("- The blog deploys on Netlify; a failed webhook is retried by the build hook.\n"
              "- Redis caches the rendered pages for an hour.\n")
ANA_STATE = "- Ana reviews webhook and Redis changes; she prefers short answers.\n"


@pytest.fixture(scope="module")
def two_projects(tmp_path_factory: pytest.TempPathFactory,
                 initialised_store: Path) -> tuple[Path, Path, Path]:
    """A store with a note of project shop (a repository with a remote), a note of project
    blog (a repository without one) and a note of no project, made with `notes new` in each
    folder (and the starter note of `notes init`, of no project). Made once for the module:
    the tests that take it only read it. Its home and XDG folders are its own (the
    per-test ones of conftest's ``isolated_env`` do not exist yet at module scope)."""
    base = tmp_path_factory.mktemp("two-projects")
    home = base / "home"
    env = {"HOME": str(home), **{f"XDG_{kind}_HOME": str(base / kind.lower())
                                 for kind in ("CACHE", "DATA", "CONFIG", "STATE")}}
    shop = git_repo(home / "src" / "shop", "git@github.com:ana/shop.git")
    blog = git_repo(home / "src" / "blog")
    store = base / "store"
    copy_initialised(initialised_store, store)  # as `notes init` makes it (conftest)
    for folder, note, title, state, extra in (
            (shop, "shop/payments", "Payment webhooks", SHOP_STATE, ()),
            (blog, "blog/deploy", "Blog deploys", BLOG_STATE, ()),
            (shop, "people/ana", "Ana", ANA_STATE, ("--shared",))):
        made = notes("new", note, "--title", title, *extra, cwd=folder, store=store, env=env)
        assert made.returncode == 0, made.stderr
        wrote = notes("state", note, cwd=folder, store=store, input=state, env=env)
        assert wrote.returncode == 0, wrote.stderr
    return store, shop, blog


def suggested(result: subprocess.CompletedProcess[str]) -> list[str]:
    assert result.returncode == 0, result.stderr
    return [h["note"] for h in json.loads(result.stdout)["hits"]]


def test_notes_new_records_the_project_it_is_made_in(two_projects: tuple[Path, Path, Path]
                                                     ) -> None:
    store, shop, blog = two_projects
    meta = {n: parse_note((store / f"{n}.md").read_text()).meta
            for n in ("shop/payments", "blog/deploy", "people/ana")}
    assert meta["shop/payments"]["project"] == SHOP
    assert meta["blog/deploy"]["project"] == str(blog)
    assert "project" not in meta["people/ana"]


def test_suggest_recall_and_list_stay_inside_the_project(two_projects: tuple[Path, Path, Path]
                                                         ) -> None:
    store, shop, blog = two_projects
    query = "webhook retried redis"
    everywhere = suggested(notes("suggest", query, "--json", "--all-projects", cwd=shop,
                                 store=store))
    assert set(everywhere) == {"shop/payments", "blog/deploy", "people/ana"}
    assert set(suggested(notes("suggest", query, "--json", cwd=shop, store=store))) == {
        "shop/payments", "people/ana"}
    assert set(suggested(notes("suggest", query, "--json", cwd=blog, store=store))) == {
        "blog/deploy", "people/ana"}
    recalled = notes("recall", query, "--json", cwd=blog, store=store)
    groups = {g["note"] for g in json.loads(recalled.stdout)["groups"]}
    assert "blog/deploy" in groups and "shop/payments" not in groups
    assert "shop/payments" not in notes("recall", query, cwd=blog, store=store).stdout

    listed = notes("list", "--json", cwd=shop, store=store)
    assert {n["note"] for n in json.loads(listed.stdout)} == {"shop/payments", "people/ana",
                                                              "start-here"}
    for value, wanted in ((".", {"shop/payments"}), ("none", {"people/ana", "start-here"}),
                          (str(blog), {"blog/deploy"})):
        only = notes("list", "--project", value, "--json", cwd=shop, store=store)
        assert {n["note"] for n in json.loads(only.stdout)} == wanted, value
    table = notes("list", "--all-projects", cwd=store.parent, store=store).stdout
    assert "| project" in table and SHOP in table


def test_status_says_which_project_and_why(two_projects: tuple[Path, Path, Path]) -> None:
    store, shop, blog = two_projects
    said = notes("status", "--json", cwd=shop, store=store)
    project = json.loads(said.stdout)["project"]
    assert project["key"] == SHOP and project["root"] == str(shop)
    assert "git remote" in project["why"]
    assert (project["notes"], project["shared"], project["other_projects"]) == (1, 2, 1)
    text = notes("status", cwd=blog, store=store).stdout
    assert f"project: {blog} (from the git repository {blog} (it has no remote))" in text
    assert "1 notes of it and 2 of no project are searched here, 1 of other projects" in text


def hook(store: Path, prompt: str, cwd: Path, ran_in: Path) -> str:
    payload = json.dumps({"prompt": prompt, "session_id": "s", "transcript_path": "",
                          "cwd": str(cwd), "hook_event_name": "UserPromptSubmit"})
    done = notes("hook", "user-prompt", cwd=ran_in, store=store, input=payload)
    assert done.returncode == 0, done.stderr
    if not done.stdout.strip():
        return ""
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def test_the_hook_takes_its_project_from_the_cwd_it_is_given(
        two_projects: tuple[Path, Path, Path], tmp_path: Path) -> None:
    store, shop, blog = two_projects
    prompt = "how are webhooks retried and what does redis cache?"
    in_shop = hook(store, prompt, shop, ran_in=tmp_path)
    in_blog = hook(store, prompt, blog, ran_in=tmp_path)
    assert "shop/payments" in in_shop and "blog/deploy" not in in_shop
    assert "blog/deploy" in in_blog and "shop/payments" not in in_blog


async def test_the_mcp_server_serves_the_project_it_is_started_in(
        two_projects: tuple[Path, Path, Path], tmp_path: Path) -> None:
    store, shop, blog = two_projects
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    server = StdioServerParameters(command=sys.executable,
                                   args=[str(ROOT / "mcp_server.py"), "--notes", str(store)],
                                   env=env, cwd=str(blog))
    with open(tmp_path / "server.log", "w") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            query = {"query": "webhook retried redis"}
            scoped = await session.call_tool("suggest", query)
            text = scoped.content[0].text  # type: ignore[union-attr]
            assert "blog/deploy" in text and "shop/payments" not in text
            wide = await session.call_tool("suggest", {**query, "all_projects": True})
            assert "shop/payments" in wide.content[0].text  # type: ignore[union-attr]
            recalled = await session.call_tool("recall", query)
            assert "shop/payments" not in recalled.content[0].text  # type: ignore[union-attr]
            widened = await session.call_tool("recall", {**query, "all_projects": True})
            assert not widened.is_error, widened.content
            assert "shop/payments" in widened.content[0].text  # type: ignore[union-attr]
            made = await session.call_tool("create_note", {"note": "blog/theme",
                                                           "title": "Theme"})
            assert not made.is_error
    assert parse_note((store / "blog" / "theme.md").read_text()).meta["project"] == str(blog)
    assert f"project: {blog}" in (tmp_path / "server.log").read_text()
