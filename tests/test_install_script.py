"""scripts/install.sh, the developers' install, run for real on a copy of the script with
stand-ins for the programs it calls (python3, pip, apt-get, npm), so that nothing is
installed: it asks before it installs system packages."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RECORDER = '#!/bin/sh\necho "$(basename "$0") $*" >> "{log}"\n'
VENV = ('#!/bin/sh\necho "python3 $*" >> "{log}"\nmkdir -p .venv/bin\n'
        'for tool in pip python; do printf \'#!/bin/sh\\necho "%s $*" >> "{log}"\\n\' '
        '"$tool" > .venv/bin/$tool; chmod +x .venv/bin/$tool; done\n')


def run_script(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str],
                                                             list[str]]:
    """scripts/install.sh copied into a scratch checkout and run as root would run it, on a
    PATH that holds no ripgrep and stand-ins that record their calls."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "install.sh", checkout / "scripts" / "install.sh")
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    for tool in ("dirname", "id", "basename", "mkdir", "chmod"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    for name, text in (("apt-get", RECORDER), ("npm", RECORDER), ("python3", VENV)):
        (bin_dir / name).write_text(text.format(log=log))
        (bin_dir / name).chmod(0o755)
    bash = shutil.which("bash")
    assert bash is not None
    result = subprocess.run([bash, str(checkout / "scripts" / "install.sh")],
                            capture_output=True, text=True, timeout=60,
                            env={"PATH": str(bin_dir), "HOME": str(tmp_path), **env})
    calls = log.read_text().splitlines() if log.exists() else []
    return result, calls


def test_ripgrep_is_not_installed_unless_asked(tmp_path: Path) -> None:
    result, calls = run_script(tmp_path, {})
    assert result.returncode == 0, result.stderr
    assert not [c for c in calls if c.startswith("apt-get")]
    assert "NOTES_INSTALL_RG=1" in result.stderr  # one line saying how
    assert any(c.startswith("pip install") for c in calls)  # the install itself ran


def test_ripgrep_is_installed_when_asked(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("apt-get is run only as root; as another user the script only says so")
    result, calls = run_script(tmp_path, {"NOTES_INSTALL_RG": "1"})
    assert result.returncode == 0, result.stderr
    assert "apt-get install -y -q ripgrep" in calls
