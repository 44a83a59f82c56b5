"""`notes install claude-code` on a temporary home and project with existing settings."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from conftest import NOTES_BIN, copy_initialised

OTHER_HOOK = {"hooks": [{"type": "command", "command": "echo other", "timeout": 5}]}


def backup_folder(home: Path, folder: Path) -> Path:
    """Where install keeps the backups of the settings files of ``folder``: the per-user
    state folder (XDG_STATE_HOME, set for every test), the folder's path below it."""
    state = Path(os.environ["XDG_STATE_HOME"])
    return state / "notes-memory" / "backups" / folder.relative_to(folder.anchor)


def install(store_dir: Path, home: Path, project: Path, *args: str
            ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "NOTES_DIR": str(store_dir)}
    return subprocess.run([str(NOTES_BIN), "install", "claude-code", "--project", str(project),
                           *args], capture_output=True, text=True, env=env, timeout=60)


def seed(home: Path, project: Path) -> None:
    (project / ".claude").mkdir(parents=True)
    (project / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"github": {"command": "gh-mcp", "args": []}}}, indent=2))
    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(ls)"]},
         "hooks": {"UserPromptSubmit": [OTHER_HOOK], "Stop": [OTHER_HOOK]}}, indent=2))
    (home / ".claude").mkdir(parents=True)
    (home / ".claude.json").write_text(json.dumps({"numStartups": 3, "projects": {}}))


def test_project_install_merges_and_is_idempotent(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    first = install(store_dir, home, project)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("updated:") == 2 and first.stdout.count("backup:") == 2
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["github"] == {"command": "gh-mcp", "args": []}
    assert servers["notes"]["args"] == ["--notes", str(store_dir), "serve"]
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(ls)"]}
    assert settings["hooks"]["Stop"] == [OTHER_HOOK]
    groups = settings["hooks"]["UserPromptSubmit"]
    assert groups[0] == OTHER_HOOK
    ours = groups[1]["hooks"][0]
    assert ours["command"].endswith("hook user-prompt") and ours["timeout"] == 10
    assert not list(project.rglob("*.bak-*"))  # nothing to commit by accident
    backups = sorted(p.name for p in backup_folder(home, project).rglob("*.bak-*"))
    assert len(backups) == 2 and all(str(project) in line for line in first.stdout
                                     .splitlines() if "backup:" in line)
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    second = install(store_dir, home, project)
    assert second.returncode == 0 and second.stdout.count("unchanged:") == 2
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before


def test_dry_run_prints_the_diff_and_writes_nothing(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    def files() -> dict[Path, bytes]:
        return {p: p.read_bytes() for d in (home, project) for p in d.rglob("*") if p.is_file()}

    before = files()
    result = install(store_dir, home, project, "--dry-run")
    assert result.returncode == 0, result.stderr
    assert '+    "notes": {' in result.stdout and "hook user-prompt" in result.stdout
    assert files() == before


def test_user_scope_writes_the_home_files(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    result = install(store_dir, home, project, "--scope", "user")
    assert result.returncode == 0, result.stderr
    claude = json.loads((home / ".claude.json").read_text())
    assert claude["numStartups"] == 3 and claude["mcpServers"]["notes"]["command"]
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert "hook user-prompt" in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]


def test_invalid_settings_are_left_alone(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir(parents=True)
    home.mkdir()
    (project / ".mcp.json").write_text("{not json")
    result = install(store_dir, home, project)
    assert result.returncode == 1
    assert "is not valid JSON" in result.stderr
    assert (project / ".mcp.json").read_text() == "{not json"


def test_registered_command_really_starts(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    install(store_dir, home, project)
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["notes"]
    assert Path(entry["command"]).resolve() == NOTES_BIN.resolve()
    hook = json.loads((project / ".claude" / "settings.json").read_text())
    command = hook["hooks"]["UserPromptSubmit"][1]["hooks"][0]["command"]
    result = subprocess.run(command, shell=True, input=json.dumps({"prompt": "redis eviction"}),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "infra/redis" in result.stdout


def notes_cmd(*args: str, home: Path, cwd: Path, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "NOTES_DIR"}
    full |= {"HOME": str(home), **(env or {})}
    return subprocess.run([str(NOTES_BIN), *args], capture_output=True, text=True, env=full,
                          cwd=cwd, timeout=60)


def settings_files(home: Path, project: Path) -> dict[Path, bytes]:
    paths = [project / ".mcp.json", project / ".claude" / "settings.json",
             home / ".claude.json", home / ".claude" / "settings.json"]
    return {p: p.read_bytes() for p in paths if p.exists()}


def test_install_then_uninstall_leaves_the_files_as_they_were(store_dir: Path,
                                                              tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    (home / ".claude" / "settings.json").write_text(
        '{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",\n'
        '  "command": "echo mine"}]}]}, "model": "opus"}')
    before = settings_files(home, project)
    for scope in ("project", "user"):
        assert install(store_dir, home, project, "--scope", scope).returncode == 0
    assert settings_files(home, project) != before
    for scope in ("project", "user"):
        gone = notes_cmd("uninstall", "claude-code", "--scope", scope, "--project",
                         str(project), home=home, cwd=tmp_path)
        assert gone.returncode == 0, gone.stderr
        assert gone.stdout.count("updated:") == 2 and gone.stdout.count("backup:") == 2
    assert settings_files(home, project) == before
    again = notes_cmd("uninstall", "claude-code", "--project", str(project), home=home,
                      cwd=tmp_path)
    assert again.returncode == 0 and again.stdout.count("unchanged:") == 2


def test_uninstall_edits_by_hand_keeps_the_rest_and_deletes_files_it_created(
        store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    assert install(store_dir, home, project).returncode == 0  # creates both files
    mcp = project / ".mcp.json"
    data = json.loads(mcp.read_text())
    data["mcpServers"]["later"] = {"command": "later-mcp", "args": []}  # added after install
    mcp.write_text(json.dumps(data))
    dry = notes_cmd("uninstall", "claude-code", "--project", str(project), "--dry-run",
                    home=home, cwd=tmp_path)
    assert dry.returncode == 0 and dry.stdout.startswith(f"--- {mcp} (before)")
    assert '"later"' in dry.stdout and "hook user-prompt" in dry.stdout
    assert json.loads(mcp.read_text()) == data
    gone = notes_cmd("uninstall", "claude-code", "--project", str(project), home=home,
                     cwd=tmp_path)
    assert gone.returncode == 0, gone.stderr
    assert json.loads(mcp.read_text()) == {"mcpServers": {"later": {"command": "later-mcp",
                                                                    "args": []}}}
    assert not (project / ".claude" / "settings.json").exists()
    assert "removed:" in gone.stdout and "updated:" in gone.stdout


def test_backups_never_replace_one_another(store_dir: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    other = tmp_path / "other"
    other.mkdir()
    import datetime as dt

    now = dt.datetime.now()
    folder = backup_folder(home, project)
    folder.mkdir(parents=True)
    for seconds in range(0, 30):  # the names the next installs would pick are all taken
        stamp = (now + dt.timedelta(seconds=seconds)).strftime("%Y%m%d-%H%M%S")
        (folder / f".mcp.json.bak-{stamp}").write_text("older backup")
    first = install(store_dir, home, project)
    second = install(other, home, project)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    backups = sorted(folder.glob(".mcp.json.bak-*"))
    assert len(backups) == 32
    kept = [b.read_text() for b in backups if b.read_text() != "older backup"]
    assert len(kept) == 2 and str(store_dir) in "".join(kept)  # before and after the first
    assert all(re.fullmatch(r"\.mcp\.json\.bak-\d{8}-\d{6}-\d+", b.name) for b in backups
               if b.read_text() != "older backup")  # numbered: the plain names were taken


def test_a_store_inside_the_project_survives_a_clone(tmp_path: Path,
                                                     initialised_store: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    copy_initialised(initialised_store, project / "notes")  # as `notes init notes` makes it
    (project / "notes" / "redis.md").write_text(
        "---\ntitle: Redis\n---\n# Redis\n\n## Current state\n- eviction is allkeys-lru\n")
    made = notes_cmd("install", "claude-code", home=home, cwd=project)
    assert made.returncode == 0, made.stderr
    assert made.stderr.splitlines()[0] == f"store {project / 'notes'} (found walking up " \
        "from the current folder)"
    text = (project / ".mcp.json").read_text() + (project / ".claude" / "settings.json") \
        .read_text()
    assert str(tmp_path) not in text.replace(str(NOTES_BIN), "")  # no machine path but ours
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["notes"]
    assert server["args"] == ["--notes", "${CLAUDE_PROJECT_DIR:-.}/notes", "serve"]
    clone = tmp_path / "clone"
    project.rename(clone)
    hook = json.loads((clone / ".claude" / "settings.json").read_text())
    command = hook["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(clone), "HOME": str(home)}
    env.pop("NOTES_DIR", None)
    ran = subprocess.run(command, shell=True, input=json.dumps({"prompt": "redis eviction"}),
                         capture_output=True, text=True, timeout=60, env=env, cwd=clone)
    assert ran.returncode == 0 and "redis" in ran.stdout, ran.stderr
    args = [a.replace("${CLAUDE_PROJECT_DIR:-.}", ".") for a in server["args"]]  # unset
    listed = notes_cmd(*args[:-1], "list", home=home, cwd=clone)
    assert listed.returncode == 0 and "redis" in listed.stdout, listed.stderr


def test_install_without_a_store_uses_your_default_never_the_example(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    home.mkdir()
    repo = Path(__file__).resolve().parent.parent  # notes_example/ is right here
    made = notes_cmd("install", "claude-code", "--project", str(project), home=home, cwd=repo)
    assert made.returncode == 0, made.stderr
    default = tmp_path / "data" / "notes-memory" / "notes"
    assert f"created your default store {default}" in made.stderr
    assert f"store {default} (your default store" in made.stderr
    server = json.loads((project / ".mcp.json").read_text())["mcpServers"]["notes"]
    assert server["args"] == ["serve"]  # each user's own default: no path in the project
    hook = json.loads((project / ".claude" / "settings.json").read_text())
    assert "notes_example" not in json.dumps(hook) + json.dumps(server)
    assert (default / ".notes.toml").is_file()


def test_a_user_scope_install_never_pins_a_project_store(tmp_path: Path,
                                                         initialised_store: Path) -> None:
    """Run inside a project that has its own store, `--scope user` names no store: every
    project then finds its nearest store, else the per-user default (made if missing)."""
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    copy_initialised(initialised_store, project / "notes")  # as `notes init notes` makes it
    made = notes_cmd("install", "claude-code", "--scope", "user", home=home, cwd=project)
    assert made.returncode == 0, made.stderr
    server = json.loads((home / ".claude.json").read_text())["mcpServers"]["notes"]
    assert server["args"] == ["serve"]
    hook = json.loads((home / ".claude" / "settings.json").read_text())
    command = hook["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert "--notes" not in command and str(project) not in command
    default = tmp_path / "data" / "notes-memory" / "notes"
    assert (default / ".notes.toml").is_file()
    assert "--notes" in made.stderr and str(default) in made.stderr
    # the project still gets its own store, another folder the default
    other = tmp_path / "elsewhere"
    other.mkdir()
    for cwd, store in ((project, project / "notes"), (other, default)):
        status = notes_cmd("status", "--json", home=home, cwd=cwd)
        assert json.loads(status.stdout)["store"]["path"] == str(store)


def test_a_user_scope_install_pins_a_store_named_on_purpose(store_dir: Path,
                                                            tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    seed(home, project)
    result = install(store_dir, home, project, "--scope", "user")  # NOTES_DIR names it
    assert result.returncode == 0, result.stderr
    server = json.loads((home / ".claude.json").read_text())["mcpServers"]["notes"]
    assert server["args"] == ["--notes", str(store_dir), "serve"]


def test_uninstall_takes_away_the_folder_install_made_and_keeps_formatting(
        store_dir: Path, tmp_path: Path) -> None:
    """A project with only a four-space .mcp.json: install makes .claude/ and its settings,
    keeps the indentation and key order of the file it merges into; uninstall leaves the
    project as it was, .claude/ gone, and no backup in it."""
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    home.mkdir()
    mcp = project / ".mcp.json"
    mcp.write_text('{\n    "zeta": 1,\n    "mcpServers": {\n        "github": {\n'
                   '            "command": "gh-mcp"\n        }\n    },\n    "alpha": [1, 2]'
                   '\n}\n')
    original = mcp.read_bytes()
    assert install(store_dir, home, project).returncode == 0
    merged = mcp.read_text()
    assert merged.startswith('{\n    "zeta": 1,\n    "mcpServers": {\n        "github": {')
    assert list(json.loads(merged)) == ["zeta", "mcpServers", "alpha"]
    assert list(json.loads(merged)["mcpServers"]) == ["github", "notes"]
    assert (project / ".claude" / "settings.json").is_file()
    gone = notes_cmd("uninstall", "claude-code", "--project", str(project), home=home,
                     cwd=tmp_path)
    assert gone.returncode == 0, gone.stderr
    assert sorted(p.name for p in project.iterdir()) == [".mcp.json"]
    assert mcp.read_bytes() == original


def test_formatting_is_kept_without_a_backup_to_restore(store_dir: Path, tmp_path: Path) -> None:
    """Uninstall with the backups gone (another machine, a cleaned state folder): the rest of
    the file is written back in its own indentation (a tab) and key order."""
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    home.mkdir()
    settings = project / ".claude" / "settings.json"
    settings.write_text('{\n\t"model": "opus",\n\t"env": {\n\t\t"A": "1"\n\t}\n}')
    original = settings.read_bytes()
    assert install(store_dir, home, project).returncode == 0
    assert '\n\t"model": "opus",\n\t"env": {' in settings.read_text()
    import shutil

    shutil.rmtree(backup_folder(home, project))
    assert notes_cmd("uninstall", "claude-code", "--project", str(project), home=home,
                     cwd=tmp_path).returncode == 0
    assert settings.read_bytes() == original
