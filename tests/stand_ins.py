"""Stand-in programs for tests that play another program at work on a note (an editor saving
it again and again, one holding it open for writing, one stopped between two parts of a
save).

A stand-in runs until the test is done with it, never for a fixed time. With a fixed time, a
loaded machine that was slow to reach the store's check let the stand-in finish first, and
the store rightly saw a settled file (a CI run failed so: "DID NOT RAISE NoteBusy"). A
stand-in is always stopped and reaped, even when its test fails, so that no process or pipe
of one test is left to be reported in another one's ResourceWarning.

The script given to :func:`stand_in` finds ``stop`` ready: a ``threading.Event`` set once
the test closes the stand-in's standard input (``stop.wait(s)`` paces a loop; ``stop.wait()``
holds until the test is done).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator

STOP_ON_CLOSED_STDIN = """\
import sys, threading
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
"""


@contextlib.contextmanager
def stand_in(script: str, *args: str, ready: str) -> Iterator[subprocess.Popen[str]]:
    """Run ``script`` (with ``stop`` defined) in a new Python with ``args``; yield once it
    printed the line ``ready``; at the end tell it to stop (its stdin closed) and reap it,
    killed if it does not end within 30 s."""
    process = subprocess.Popen([sys.executable, "-c", STOP_ON_CLOSED_STDIN + script, *args],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    try:
        said = process.stdout.readline().strip()
        assert said == ready, f"the stand-in said {said!r}, not {ready!r}"
        yield process
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()
