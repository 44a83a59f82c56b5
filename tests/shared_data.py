"""Where the tests find the shared bench material (../shared: LoCoMo is CC BY-NC, RealMem
Apache-2.0, vsla MIT; never copied into the repo): beside the main checkout, or two levels up
from a worktree under /work/wt/NAME."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = next((p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared")
               if p.is_dir()), ROOT.parent / "shared")
LOCOMO = SHARED / "bench" / "locomo" / "locomo10.json"
TRANSCRIPTS = SHARED / "bench" / "transcripts"
REALMEM = SHARED / "bench" / "realmem"  # Apache-2.0
VSLA = SHARED / "bench" / "vsla"  # MIT


def shared_file(path: Path) -> Path:
    """The shared file or folder, or a skip (a failure in CI, where it must be present)."""
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing and CI is set")
        pytest.skip(f"{path} is not here")
    return path
