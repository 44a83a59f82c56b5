"""Keep the index fresh while a process runs: watchdog events, debounced per path.

Editors save in many ways (vim writes a probe file and renames; VS Code writes a temp file
and renames it over the note), so events are reduced to "this note path changed", both from
``src_path`` and from a move's ``dest_path``, and each path waits for a quiet period before
one re-index. Hidden files and folders, swap and temp files are ignored. Events can be lost
(inotify queue overflow, network mounts), so a full refresh by mtime also runs periodically.
Work that may wait (merging the small index segments quick commits leave) runs once the notes
have been quiet for IDLE_SECONDS after a re-index, so a save never waits for it. An error in
any of these callbacks goes to ``on_error`` and the watching goes on: a thread that died would
leave the index silently stale.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

QUIET_SECONDS = 0.3
RECONCILE_SECONDS = 60.0
IDLE_SECONDS = 2.0

OnChange = Callable[[list[Path]], None]
OnIdle = Callable[[], object]
OnError = Callable[[Exception], None]


def print_error(exc: Exception) -> None:
    print(f"Error: {exc}", file=sys.stderr, flush=True)


def guarded(work: Callable[[], object], on_error: OnError) -> None:
    """Run ``work``; an exception goes to ``on_error`` instead of ending the thread."""
    try:
        work()
    except Exception as exc:
        on_error(exc)


def is_note_path(path: str, root: Path, ignore: Path | None = None) -> bool:
    """A note file of the store: under ``root``, not hidden, not under ``ignore`` (the
    state folder, when it lies inside the notes folder)."""
    try:
        rel = Path(path).relative_to(root)
    except ValueError:
        return False
    if ignore is not None and (Path(path) == ignore or ignore in Path(path).parents):
        return False
    if any(part.startswith(".") for part in rel.parts):
        return False
    return rel.name.endswith(".md") and not rel.name.endswith("~")


class Debouncer(FileSystemEventHandler):
    """Collects changed note paths and hands them over once they have been quiet."""

    def __init__(self, root: Path, on_change: OnChange, quiet: float = QUIET_SECONDS,
                 on_idle: OnIdle | None = None, idle: float = IDLE_SECONDS,
                 on_error: OnError = print_error, ignore: Path | None = None) -> None:
        self.root, self.on_change, self.quiet, self.ignore = root, on_change, quiet, ignore
        self.on_idle, self.idle, self.on_error = on_idle, idle, on_error
        self.pending: dict[str, float] = {}
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.idle_at: float | None = None  # when on_idle is due (None: not since it last ran)

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type in ("opened", "closed_no_write"):
            return
        for raw in (event.src_path, getattr(event, "dest_path", "") or ""):
            path = os.fsdecode(raw)
            if path and is_note_path(path, self.root, self.ignore):
                with self.lock:
                    self.pending[path] = time.monotonic() + self.quiet

    def due(self) -> list[Path]:
        now = time.monotonic()
        with self.lock:
            ready = [p for p, t in self.pending.items() if t <= now]
            for p in ready:
                del self.pending[p]
        return [Path(p) for p in sorted(ready)]

    def run(self) -> None:
        while not self.stopped.wait(self.quiet / 3):
            ready = self.due()
            if ready:
                guarded(functools.partial(self.on_change, ready), self.on_error)
                self.idle_at = time.monotonic() + self.idle
            elif self.on_idle is not None and self._idle_due():
                self.idle_at = None
                guarded(self.on_idle, self.on_error)

    def _idle_due(self) -> bool:
        """Idle work is due: a re-index happened, then nothing changed for ``idle`` s."""
        if self.idle_at is None or time.monotonic() < self.idle_at:
            return False
        with self.lock:
            return not self.pending


class Watcher:
    """Observer + debouncer (+ idle work) + periodic reconcile; ``stop()`` ends all of it."""

    def __init__(self, root: Path, on_change: OnChange, reconcile: Callable[[], None],
                 quiet: float = QUIET_SECONDS, every: float = RECONCILE_SECONDS,
                 on_idle: OnIdle | None = None, on_error: OnError = print_error,
                 ignore: Path | None = None) -> None:
        self.debouncer = Debouncer(root, on_change, quiet, on_idle, on_error=on_error,
                                   ignore=ignore)
        self.observer = Observer()
        self.observer.schedule(self.debouncer, str(root), recursive=True)
        self.reconcile, self.every = reconcile, every
        self.threads = [threading.Thread(target=self.debouncer.run, daemon=True),
                        threading.Thread(target=self._reconcile_loop, daemon=True)]

    def start(self) -> None:
        self.observer.start()
        for thread in self.threads:
            thread.start()

    def _reconcile_loop(self) -> None:
        while not self.debouncer.stopped.wait(self.every):
            guarded(self.reconcile, self.debouncer.on_error)

    def stop(self) -> None:
        self.debouncer.stopped.set()
        self.observer.stop()
        self.observer.join(timeout=5)
