"""Where the store is (flag, env, found walking up, user default; never the example
implicitly) and `notes init`, run as a user would: the real `notes` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import EXAMPLE, NOTES_BIN, copy_initialised, copy_state

MARKER = ".notes.toml"


def notes(*args: str, cwd: Path, env: dict[str, str] | None = None,
          input: str | None = None) -> subprocess.CompletedProcess[str]:
    """`notes` with no NOTES_DIR unless given: home and data folders are the test's own."""
    full = {k: v for k, v in os.environ.items() if k != "NOTES_DIR"} | (env or {})
    return subprocess.run([str(NOTES_BIN), *args], cwd=cwd, env=full, input=input,
                          capture_output=True, text=True, timeout=120)


def user_default(tmp_path: Path) -> Path:
    return tmp_path / "data" / "notes-memory" / "notes"


def status(cwd: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    result = notes(*args, "status", "--json", cwd=cwd, env=env)
    assert result.stdout, result.stderr
    data: dict[str, object] = json.loads(result.stdout)
    return data


def store_of(data: dict[str, object]) -> tuple[str, str]:
    store = data["store"]
    assert isinstance(store, dict)
    return str(store["path"]), str(store["source"])


def test_resolution_order_flag_env_found_default(tmp_path: Path,
                                                 initialised_store: Path) -> None:
    work = tmp_path / "work"
    (work / "deep" / "er").mkdir(parents=True)
    flagged, env_store = tmp_path / "flagged", tmp_path / "from-env"
    for folder in (flagged, env_store):  # stores as `notes init` makes them (conftest)
        copy_initialised(initialised_store, folder)
    # nothing around: the per-user default (created by init with no folder)
    made = notes("init", cwd=work)
    assert made.returncode == 0, made.stderr
    assert (user_default(tmp_path) / MARKER).is_file()
    assert store_of(status(work / "deep")) == (str(user_default(tmp_path)), "default")
    # a store above the current folder beats the default
    assert notes("init", str(work), cwd=tmp_path).returncode == 0
    assert store_of(status(work / "deep" / "er")) == (str(work), "found")
    # NOTES_DIR beats the found store, and --notes beats NOTES_DIR
    env = {"NOTES_DIR": str(env_store)}
    assert store_of(status(work / "deep", env=env)) == (str(env_store), "env")
    assert store_of(status(work / "deep", "--notes", str(flagged), env=env)) == (
        str(flagged), "flag")


def test_the_example_is_never_chosen_implicitly(tmp_path: Path, store_dir: Path) -> None:
    repo = EXAMPLE.parent  # the checkout, where notes_example/ sits beside the code
    lost = notes("suggest", "despliegue", cwd=repo)
    assert lost.returncode == 1
    assert "no store here" in lost.stderr and "notes init" in lost.stderr
    assert "--example" in lost.stderr and "Traceback" not in lost.stderr
    # The example's state in a folder of the test's own, a copy of the one every store_dir
    # has: not built again (4-5 s in a fresh checkout), nor written into the checkout.
    state = {"NOTES_STATE_DIR": str(copy_state(store_dir, tmp_path / "example-state"))}
    for args in (("--example",), ("--notes", "notes_example")):
        named = notes(*args, "suggest", "cómo despliego a producción", cwd=repo, env=state)
        assert named.returncode == 0, named.stderr
        assert "howto/deploy-production" in named.stdout
    assert store_of(status(repo, "--example", env=state))[1] == "example"
    both = notes("--example", "--notes", str(tmp_path), "list", cwd=repo)
    assert both.returncode == 1 and "give one of them" in both.stderr


def test_a_store_inside_a_project_is_found_from_anywhere_in_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "src" / "pkg").mkdir(parents=True)
    assert notes("init", "notes", cwd=project).returncode == 0
    assert store_of(status(project / "src" / "pkg")) == (str(project / "notes"), "found")
    assert notes("init", "memory", cwd=project, env={}).returncode == 0
    two = notes("list", cwd=project / "src")
    assert two.returncode == 1 and "several stores (memory, notes)" in two.stderr


def test_init_writes_a_marked_store_with_a_starter_note(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    made = notes("init", str(target), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert f"created the store {target}" in made.stdout
    assert sorted(p.name for p in target.iterdir()) == [".gitignore", ".notes", MARKER,
                                                        "start-here.md"]
    assert ".notes/" in (target / ".gitignore").read_text().splitlines()
    checked = notes("--notes", str(target), "check", "--strict", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    mapped = notes("--notes", str(target), "map", "start-here", cwd=tmp_path)
    assert mapped.returncode == 0, mapped.stderr
    kinds = [line.split(" | ")[2] for line in mapped.stdout.splitlines()[2:]]
    assert kinds[:2] == ["header", "state"] and "entry" in kinds
    found = notes("--notes", str(target), "suggest", "how do I write history entries",
                  cwd=tmp_path)
    assert "start-here" in found.stdout
    before = {p: p.read_bytes() for p in target.rglob("*") if p.is_file()
              and ".notes" not in p.relative_to(target).parts}
    again = notes("init", str(target), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "already a store" in again.stdout
    assert {p: p.read_bytes() for p in target.rglob("*") if p.is_file()
            and ".notes" not in p.relative_to(target).parts} == before


def test_init_keeps_an_existing_gitignore_and_adds_the_state_folder(tmp_path: Path) -> None:
    target = tmp_path / "vault"
    target.mkdir()
    (target / ".gitignore").write_text("*.swp")
    (target / "idea.md").write_text("# An idea\n\nPlain Markdown.\n")
    made = notes("init", str(target), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (target / ".gitignore").read_text().splitlines()[0] == "*.swp"
    assert ".notes/" in (target / ".gitignore").read_text().splitlines()
    assert not (target / "start-here.md").exists()  # a folder with notes gets none
    assert (target / "idea.md").read_text() == "# An idea\n\nPlain Markdown.\n"


def test_init_refuses_inside_a_store_and_on_other_files(tmp_path: Path,
                                                        initialised_store: Path) -> None:
    outer = copy_initialised(initialised_store, tmp_path / "outer")  # as `notes init` makes it
    inner = notes("init", str(outer / "inner"), cwd=tmp_path)
    assert inner.returncode == 1 and f"inside the store {outer}" in inner.stderr
    assert "--force" in inner.stderr and not (outer / "inner").exists()
    code = tmp_path / "code"
    code.mkdir()
    (code / "main.py").write_text("print('hi')\n")
    refused = notes("init", str(code), cwd=tmp_path)
    assert refused.returncode == 1 and "main.py" in refused.stderr
    assert "--force" in refused.stderr and not (code / MARKER).exists()
    forced = notes("init", str(code), "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert (code / MARKER).is_file() and (code / "main.py").read_text() == "print('hi')\n"
    assert notes("init", str(outer / "inner"), "--force", cwd=tmp_path).returncode == 0
    demo = notes("init", str(EXAMPLE), cwd=tmp_path)
    assert demo.returncode == 1 and "bundled example" in demo.stderr
    assert not (EXAMPLE / MARKER).exists()
    itself = notes("--notes", str(outer), "import", str(outer), cwd=tmp_path)
    assert itself.returncode == 1 and "is the store itself" in itself.stderr
