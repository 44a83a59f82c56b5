"""Small disks for the full-disk tests: a tmpfs mounted for one test, and a filler that
leaves it without a byte free. Mounting needs root (the tests that take these skip without
it, or where the container forbids mounting)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted_tmpfs(folder: Path, megabytes: int) -> Iterator[Path]:
    """``folder`` (created) as a fresh tmpfs of ``megabytes``, unmounted afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs",
                              str(folder)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill_disk(disk: Path) -> Path:
    """Write a filler file until the disk refuses even one more byte (ENOSPC, nothing else);
    returns the filler, to delete to free the disk."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as handle:
        for chunk in (1 << 20, 1 << 12, 1):
            try:
                while True:
                    handle.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC, exc
    assert shutil.disk_usage(disk).free == 0
    return filler
