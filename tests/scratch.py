"""One bounded scratch folder per test session, removed when the session passes (issue #36,
item 7: a suite that left 3.3 GB in ``/tmp/pytest-of-root/``).

The controller makes ``/tmp/notes-tests-XXXX/`` before any worker starts and points
``TMPDIR`` at it, so that every temporary file of a process the tests start (a bench run's
scratch index, a ``tempfile`` of the CLI) lands inside it. pytest's own folders (``tmp_path``)
stay in ``/tmp/pytest-of-<user>/`` (``PYTEST_DEBUG_TEMPROOT``: their paths as short as before,
for the sockets tests bind there) and pytest removes them when the session passes
(``tmp_path_retention_policy = "failed"``). (Not
``--basetemp``: pytest empties a given base folder whenever it first asks for it, and xdist's
workers share the run's folder for the indexed example.) When the session ends it is removed
whole; a failed session keeps it and says where, for the post-mortem. The prompt hook's short
socket folder (``/tmp/notes-memory-<uid>/``, :mod:`memory.hook.client`) is removed too
when the session made it and left it empty.
"""

from __future__ import annotations

import getpass
import os
import shutil
import tempfile
import time
from pathlib import Path

from memory.hook.client import SHORT_ROOT, uid

SOCKETS = SHORT_ROOT / f"notes-memory-{uid()}"


class Scratch:
    """The session's scratch folder and what ``/tmp`` held before the session."""

    def __init__(self) -> None:
        self.sockets_existed = SOCKETS.exists()
        self.pytest_root = Path(tempfile.gettempdir()) / f"pytest-of-{getpass.getuser()}"
        self.pytest_root_existed = self.pytest_root.exists()
        self.base = Path(tempfile.mkdtemp(prefix="notes-tests-"))
        self.previous_tmpdir = os.environ.get("TMPDIR")

    def enter(self) -> None:
        # pytest's own folders stay where they were (paths as short as before: a socket's
        # address holds about 100 bytes), and go when the session passes
        # (tmp_path_retention_policy = "failed" in pyproject.toml)
        os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
        os.environ["TMPDIR"] = str(self.base)  # inherited by the workers and every subprocess
        tempfile.tempdir = None  # this process reads TMPDIR again

    def leave(self, passed: bool) -> str | None:
        """Remove the folder (kept when the session failed); what to tell the user, if any."""
        if self.previous_tmpdir is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = self.previous_tmpdir
        tempfile.tempdir = None
        if not self.sockets_existed:
            try:
                SOCKETS.rmdir()  # only when empty: a live server's socket stays
            except OSError:
                pass
        if not self.pytest_root_existed and passed:  # pytest's, when it was made for this run
            for link in self.pytest_root.glob("pytest-current"):
                link.unlink(missing_ok=True)
            try:
                self.pytest_root.rmdir()
            except OSError:
                pass
        if not passed:
            return f"the tests' scratch folder is kept for a look: {self.base}"
        for _ in range(5):  # a process the tests started may still be ending, writing here
            shutil.rmtree(self.base, ignore_errors=True)
            if not self.base.exists():
                break
            time.sleep(0.2)
        return None
