"""The new user's path of docs/install.md with two projects, in a scratch HOME, through the
real CLI and the hook command Claude Code's settings name: import both projects' Claude Code
memory into the default store, wire both, ask in each (no note of the other project in any
answer), then Claude Code edits a memory file and the next hook due sees the change; the
nightly report installed then uninstalled leaves the user's crontab as it was."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from test_nightly import FAKE_CRONTAB, FAKE_SYSTEMCTL, USER_CRONTAB

from conftest import NOTES_BIN
from memory.services.importer import claude_project_slug

PROJECTS = {
    "shop": ("git@github.com:ana/shop.git", {
        "MEMORY.md": "- [Deploys](deploys.md): how the shop deploys\n",
        "deploys.md": "---\nname: Deploys\ntype: project\n---\nThe shop deploys to Kubernetes "
                      "with Argo CD; a deploy needs the release tag.\n\n"
                      "- 2026-03-02: deploy freeze during the payments migration.\n"}),
    "blog": ("https://github.com/ana/blog", {
        "MEMORY.md": "- [Deploys](deploys.md): how the blog deploys\n",
        "deploys.md": "---\nname: Deploys\ntype: project\n---\nThe blog deploys to Netlify on "
                      "every push to main; a deploy takes two minutes.\n"}),
}


def run(*args: str, cwd: Path, input: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("NOTES_")}
    full["PATH"] = f"{NOTES_BIN.parent}{os.pathsep}{full.get('PATH', '')}"  # as pipx puts it
    result = subprocess.run(list(args), cwd=cwd, env={**full, **(env or {})}, input=input,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{args}: {result.stdout}{result.stderr}"
    return result


def hook(project: Path, prompt: str) -> str:
    """The prompt hook as Claude Code runs it: the command its settings name, in a shell,
    in the project, with CLAUDE_PROJECT_DIR set and the prompt's JSON on stdin."""
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    payload = json.dumps({"prompt": prompt, "session_id": "s", "cwd": str(project),
                          "hook_event_name": "UserPromptSubmit"})
    out = run("sh", "-c", command, cwd=project, input=payload,
              env={"CLAUDE_PROJECT_DIR": str(project)}).stdout
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""


@pytest.mark.slow(11)
def test_two_projects_from_nothing(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    folders = {}
    for name, (remote, files) in PROJECTS.items():
        project = home / "src" / name
        project.mkdir(parents=True)
        run("git", "init", "-q", cwd=project)
        run("git", "remote", "add", "origin", remote, cwd=project)
        memory = home / ".claude" / "projects" / claude_project_slug(project) / "memory"
        memory.mkdir(parents=True)
        for file, text in files.items():
            (memory / file).write_text(text)
        folders[name] = (project, memory)
        imported = run("notes", "import", "--claude", cwd=project)
        assert "2 notes created" in imported.stdout
        run("notes", "install", "claude-code", cwd=project)
    shop, blog = folders["shop"][0], folders["blog"][0]
    status = run("notes", "status", cwd=shop).stdout
    assert "project: github.com/ana/shop (from the git remote of" in status

    question = "how do deploys work here?"
    for here, own, other in ((shop, "claude/shop/", "claude/blog/"),
                             (blog, "claude/blog/", "claude/shop/")):
        answers = [hook(here, question),
                   run("notes", "suggest", question, cwd=here).stdout,
                   run("notes", "recall", question, cwd=here).stdout]
        assert own in answers[0] and own in answers[1], answers
        for answer in answers:
            assert other not in answer, answer
    wide = run("notes", "suggest", question, "--all-projects", cwd=shop).stdout
    assert "claude/blog/" in wide and "claude/shop/" in wide

    # Claude Code edits the shop's memory; the next hook (a minute on) brings it in
    shop_memory = folders["shop"][1]
    with open(shop_memory / "deploys.md", "a") as handle:
        handle.write("- 2026-05-04: deploys moved to the canary cluster in Frankfurt.\n")
    store = Path(json.loads(run("notes", "status", "--json", cwd=shop).stdout)["store"]["path"])
    stamp = store / ".notes" / "imports.checked"  # the hooks above looked a moment ago
    minute_ago = time.time() - 61
    os.utime(stamp, (minute_ago, minute_ago))
    seen = hook(shop, "which cluster do canary deploys go to, Frankfurt?")
    assert "claude/shop/memory/deploys" in seen and "claude/blog/" not in seen
    assert "Frankfurt" in run("notes", "read", "claude/shop/memory/deploys", cwd=shop).stdout
    assert "Frankfurt" not in hook(blog, "which cluster do canary deploys go to, Frankfurt?")
    run("notes", "check", cwd=shop)

    # the nightly report, on a machine without systemd: a line in the user's crontab
    schedulers = stand_in_schedulers(tmp_path)
    table = tmp_path / "crontab.txt"
    run("notes", "install", "nightly", cwd=shop, env=schedulers)
    installed = table.read_text()
    assert installed.startswith(USER_CRONTAB) and installed.count("promote --nightly") == 1
    assert str(store) in installed  # the default store the path made, by its path
    run("notes", "uninstall", "nightly", cwd=shop, env=schedulers)
    assert table.read_text() == USER_CRONTAB  # as it was


def stand_in_schedulers(root: Path) -> dict[str, str]:
    """A `crontab` keeping the table in ``root/crontab.txt`` (the user's lines in it), and a
    `systemctl` saying systemd does not run the user session (tests/test_nightly.py)."""
    tools = root / "tools"
    tools.mkdir()
    (root / "crontab.txt").write_text(USER_CRONTAB)
    crontab, systemctl = tools / "crontab", tools / "systemctl"
    crontab.write_text(FAKE_CRONTAB.format(table=root / "crontab.txt"))
    systemctl.write_text(FAKE_SYSTEMCTL.format(calls=root / "systemctl.calls", state="offline"))
    crontab.chmod(0o755)
    systemctl.chmod(0o755)
    return {"NOTES_CRONTAB": str(crontab), "NOTES_SYSTEMCTL": str(systemctl)}
