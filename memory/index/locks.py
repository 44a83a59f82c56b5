"""The build lock of an index, and the worker processes and folders a build leaves.

A rebuild holds ``<state>/index.lock`` (``index-tantivy.lock`` for tantivy) for as long as it
builds. The lock is an ``flock`` on that file, so the kernel releases it when its holder
dies, and the file names the holder (pid, process start time, host, since when), so that a
waiter can tell who it waits for. A waiter prints one line saying who holds it, and takes the
lock over when

- the process named in the file is not running (or its pid now belongs to another process):
  something else kept the lock (say, a process that inherited it), and nobody builds; or
- the holder made no progress for ``STALE_AFTER`` seconds: a build touches the lock file as
  it goes (:meth:`HolderLock.beat`, at most once a second, from this process and from its
  worker processes), so a file untouched that long belongs to a stopped or hung build.

Taking over removes the lock file (after checking, under a short second lock, that it is
still the same file) and locks a new one; whoever still holds the old one holds nothing that
anyone waits on. Every holder checks, once it has the lock, that its file is still the one
at the path.

Worker processes of a parallel Whoosh build are forked while the lock is held. They close
their copies of the lock's descriptor at once (so that only the parent holds it), and die
with their parent (:func:`die_with_parent`): on Linux the kernel kills them
(``PR_SET_PDEATHSIG``), elsewhere a thread of theirs notices the parent is gone.

A build works in ``index.new-<pid>`` and swaps the old index out through ``index.old-<pid>``;
a build killed on the way leaves them. :func:`remove_leftovers` deletes those whose pid is
no longer running, at the next open and the next rebuild.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

STALE_AFTER = 300.0  # seconds without progress after which a live holder is taken over
POLL = 0.1  # seconds between two tries of a held lock
BEAT_EVERY = 1.0  # seconds between two touches of the lock file by its holder

_held: set[int] = set()  # descriptors of the build locks this process holds


def held_descriptors() -> frozenset[int]:
    """The lock descriptors this process holds (a forked worker closes its copies)."""
    return frozenset(_held)


def _quiet(_: str) -> None:
    return None


# -- processes -----------------------------------------------------------------------------
def _hostname() -> str:
    """This machine's name, as ``socket.gethostname()`` gives it (without importing
    ``socket``, a few milliseconds of every command's start)."""
    return os.uname().nodename


def process_start(pid: int) -> str | None:
    """When the process started, in clock ticks since boot (Linux), else None: with the
    pid, it tells a process from a later one that was given the same pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[19] if len(fields) > 19 else None


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def pid_running(pid: int, started: str | None = None) -> bool:
    """Whether process ``pid`` runs (and, given its start time, is still that process)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    if _zombie(pid):
        return False
    return started is None or process_start(pid) in (None, started)


def die_with_parent(parent: int) -> None:
    """Make this (forked) process die when ``parent`` does; exit at once if it already has."""
    armed = False
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def close_inherited_locks() -> None:
    """In a forked worker: close this copy of the parent's lock descriptors (closing a copy
    never releases an flock; only the parent holds it then)."""
    for descriptor in held_descriptors():
        with contextlib.suppress(OSError):
            os.close(descriptor)
    _held.clear()


def touch(path: str | os.PathLike[str]) -> None:
    """Mark progress on a lock file (best effort: a full or read-only disk changes nothing)."""
    with contextlib.suppress(OSError):
        os.utime(path)


# -- the lock --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Holder:
    """Who holds a lock, as its lock file says."""

    pid: int
    started: str | None = None
    host: str = ""
    since: float = 0.0

    def running(self) -> bool:
        if self.host and self.host != _hostname():
            return True  # another machine's process (a shared folder): cannot tell
        return pid_running(self.pid, self.started)

    def describe(self) -> str:
        if not self.since:
            return f"process {self.pid}"
        return f"process {self.pid} (since {time.strftime('%H:%M:%S', time.localtime(self.since))})"


def _read_holder(descriptor: int) -> Holder | None:
    try:
        raw = os.pread(descriptor, 4096, 0)
        data = json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int):
        return None
    started = data.get("started")
    return Holder(data["pid"], started if isinstance(started, str) else None,
                  str(data.get("host") or ""), float(data.get("since") or 0.0))


class HolderLock:
    """An exclusive lock on ``path`` that names its holder and is never held forever by a
    process that is dead or stuck (see the module docstring). Use it as a context manager;
    call :meth:`beat` while working."""

    def __init__(self, path: str | os.PathLike[str], notify: Callable[[str], None] = _quiet,
                 stale_after: float = STALE_AFTER) -> None:
        self.path = Path(path)
        self.notify = notify
        self.stale_after = stale_after
        self._fd: int | None = None
        self._last_beat = 0.0
        self._announced = False

    def __enter__(self) -> HolderLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.release()

    def acquire(self) -> None:
        self._announced = False
        while True:
            descriptor = _open_lock_file(self.path)
            try:
                held = self._try(descriptor)
            except BaseException:
                os.close(descriptor)
                raise
            if held:
                self._hold(descriptor)
                return
            os.close(descriptor)

    def _try(self, descriptor: int) -> bool:
        """Lock ``descriptor``'s file: True once locked, False when the file was replaced or
        taken over (the path is to be opened again)."""
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not _same_file(descriptor, self.path):
                    return False
                holder = _read_holder(descriptor)
                who = holder.describe() if holder else "another process (not named in it)"
                verdict = self._stale(descriptor, holder)
                if verdict:
                    self.notify(f"notes: {self.path} is held by {who}, {verdict}; taking it "
                                "over")
                    self._take_over(descriptor)
                    return False
                if not self._announced:
                    self.notify(f"notes: waiting for {self.path}, held by {who}")
                    self._announced = True
                time.sleep(POLL)
                continue
            if _same_file(descriptor, self.path):
                return True
            fcntl.flock(descriptor, fcntl.LOCK_UN)  # taken over meanwhile: not the lock now
            return False

    def _stale(self, descriptor: int, holder: Holder | None) -> str:
        """Why the current holder should be taken over, or "" to go on waiting."""
        if holder is not None and not holder.running():
            return "which is not running"
        try:
            quiet = time.time() - os.fstat(descriptor).st_mtime
        except OSError:
            return ""
        if quiet > self.stale_after:
            return f"which made no progress for {quiet:.0f} s"
        return ""

    def _take_over(self, descriptor: int) -> None:
        """Remove the lock file, if it is still the one held, under a short second lock (two
        waiters never remove each other's new file)."""
        guard = _open_lock_file(self.path.with_name(self.path.name + ".break"))
        try:
            fcntl.flock(guard, fcntl.LOCK_EX)
            if _same_file(descriptor, self.path):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
        finally:
            os.close(guard)

    def _hold(self, descriptor: int) -> None:
        self._fd = descriptor
        _held.add(descriptor)
        record = {"pid": os.getpid(), "started": process_start(os.getpid()),
                  "host": _hostname(), "since": time.time()}
        with contextlib.suppress(OSError):  # a full disk: the lock works, only unnamed
            os.ftruncate(descriptor, 0)
            os.pwrite(descriptor, json.dumps(record).encode("utf-8"), 0)
        self.beat(force=True)

    def beat(self, force: bool = False) -> None:
        """Show progress (the lock file's modification time), at most once a second."""
        now = time.monotonic()
        if self._fd is None or (not force and now - self._last_beat < BEAT_EVERY):
            return
        self._last_beat = now
        with contextlib.suppress(OSError):
            os.utime(self._fd)

    def release(self) -> None:
        if self._fd is None:
            return
        descriptor, self._fd = self._fd, None
        _held.discard(descriptor)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
        finally:
            os.close(descriptor)


def remove_tree(folder: str | Path) -> None:
    """Delete ``folder`` and what it holds, as far as it can (``shutil`` is imported here:
    every cold process imports this module, few remove a folder)."""
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def swap_in(fresh: Path, target: Path) -> None:
    """Put ``fresh`` in the place of ``target``; if that fails, the old index is put back.
    Folders, not files: :func:`memory.state.safe_files.write_atomic` cannot swap them, so
    this is the one rename outside that helper (``tests/test_import_rules.py``)."""
    old = target.with_name(f"{target.name}.old-{os.getpid()}")
    remove_tree(old)
    moved = target.exists()
    if moved:
        os.replace(target, old)
    try:
        os.replace(fresh, target)
    except OSError:
        if moved:
            os.replace(old, target)
        raise
    remove_tree(old)


def _open_lock_file(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES) or not path.exists():
            raise
        return os.open(path, os.O_RDONLY | os.O_CLOEXEC)  # a read-only disk: lock only


def _same_file(descriptor: int, path: Path) -> bool:
    try:
        return os.fstat(descriptor).st_ino == os.stat(path).st_ino
    except OSError:
        return False


# -- leftovers -------------------------------------------------------------------------------
def remove_leftovers(folder: Path, name: str) -> list[str]:
    """Delete ``<name>.new-<pid>`` and ``<name>.old-<pid>`` in ``folder`` whose process is
    not running (builds killed on the way); returns what was removed."""
    pattern = re.compile(re.escape(name) + r"\.(?:new|old)-(\d+)")
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match and int(match[1]) != os.getpid() and not pid_running(int(match[1])):
            remove_tree(entry.path)
            removed.append(entry.name)
    return removed

