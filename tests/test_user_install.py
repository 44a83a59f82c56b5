"""A user's install, apart from the developers': the wheel alone in a fresh virtual
environment, no extras (no matplotlib, no dev tools), run end to end as docs/install.md says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from test_bench_policies import write_tiny_bench
from test_import import MEMORY_INDEX, RELEASE, write

from memory.services.importer import claude_project_slug

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow(45)  # the wheel, the venv, the install: see tests/conftest.py


@pytest.fixture(scope="module")
def user_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built as the docs say, installed with its dependencies only."""
    base = tmp_path_factory.mktemp("user-install")
    dist = base / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                            str(dist), "."], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stderr
    venv = base / "venv"
    # As pipx does it: an environment without a pip of its own, the wheel installed into it by
    # another pip (this one, `--python`); without bytecode compiled ahead (Python compiles what
    # a command imports as it runs). Bootstrapping a pip and compiling all ~60 dependencies
    # took 10 of this fixture's 30 s of CPU and change nothing the test looks at.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    wheels = [str(w) for w in dist.glob("notes_memory-*.whl")]
    assert len(wheels) == 1
    installed = subprocess.run([sys.executable, "-m", "pip", "--python",
                                str(venv / "bin" / "python"), "install", "-q", "--no-compile",
                                *wheels], capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr
    return venv


def test_the_wheel_alone_runs_init_import_suggest_bench_and_serve(
        user_venv: Path, tmp_path: Path) -> None:
    notes_bin = user_venv / "bin" / "notes"
    bare = subprocess.run([str(user_venv / "bin" / "python"), "-c", "import matplotlib"],
                          capture_output=True, text=True)
    assert bare.returncode == 1  # a plain install: no plot extra, no dev tools
    env = {k: v for k, v in os.environ.items() if k != "NOTES_DIR"}

    def notes(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(notes_bin), *args], cwd=cwd, env=env, capture_output=True,
                              text=True, timeout=300)

    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    memory = Path(env["HOME"]) / ".claude" / "projects" / claude_project_slug(project) / \
        "memory"
    write(memory / "MEMORY.md", MEMORY_INDEX)
    write(memory / "project_release.md", RELEASE)

    made = notes("init", cwd=project)
    assert made.returncode == 0, made.stderr
    imported = notes("import", "--claude", cwd=project)
    assert imported.returncode == 0, imported.stderr
    assert "2 notes created" in imported.stdout
    found = notes("suggest", "release freeze friday", cwd=project)
    assert found.returncode == 0, found.stderr
    assert "claude/shop/memory/project_release" in found.stdout
    wired = notes("install", "claude-code", cwd=project)
    assert wired.returncode == 0 and (project / ".mcp.json").is_file(), wired.stderr
    # the example store ships with the package (README and --help offer it); its index goes
    # to the cache folder, never into the installed files
    example = notes("--example", "suggest", "cómo hago rollback de un despliegue")
    assert example.returncode == 0, example.stderr
    assert "howto/deploy-production" in example.stdout
    installed = next((user_venv / "lib").glob("python3*/site-packages/notes_example"))
    assert (installed / "howto" / "deploy-production.md").is_file()
    assert not (installed / ".notes").exists()
    assert any((Path(env["XDG_CACHE_HOME"]) / "notes-memory").glob("notes_example-*"))

    bench = write_tiny_bench(tmp_path / "bench")
    ran = notes("bench", "run", str(bench), "--limit", "20")
    assert ran.returncode == 0, ran.stderr
    report = (bench / "report" / "report.md").read_text()
    assert "| ladder@1 |" in report and "No plot: matplotlib is not installed" in report
    assert "notes-memory[plot]" in ran.stderr
    assert not (bench / "report" / "hit-rate-vs-tokens.png").exists()

    assert list_tools(notes_bin, project, env) >= {"suggest", "section_map", "read_section",
                                                    "write_state", "append_history"}


def list_tools(notes_bin: Path, cwd: Path, env: dict[str, str]) -> set[str]:
    import asyncio

    async def names() -> set[str]:
        server = StdioServerParameters(command=str(notes_bin), args=["serve"], env=env,
                                       cwd=str(cwd))
        with open(os.devnull, "w") as errlog:
            async with stdio_client(server, errlog=errlog) as (read, write_):
                async with ClientSession(read, write_) as session:
                    await session.initialize()
                    return {t.name for t in (await session.list_tools()).tools}

    return asyncio.run(names())
