"""Writing files so that nothing is lost: the one atomic-write helper, and compare-and-swap.

Every file the package writes whole goes through :func:`write_atomic` (or, for a writer that
fills the file itself, :func:`atomic_file`): a temporary file in the same folder, fsynced,
renamed over the target, the folder fsynced. A crash at any moment leaves either the old file
or the new one, never a mix. Note files are written only by :mod:`memory.state.commit`.

Notes are also edited by people and their editors, which take no lock of ours. So a note is
replaced only through :func:`replace_if_unchanged`: the caller read a :class:`Snapshot` of the
file (identity, size, mtime and hash), computed the new text from it, and the rename happens
only if, just before it, the file is still exactly that snapshot and no other program holds it
open for writing. Otherwise :class:`FileChanged` is raised and nothing is written; the caller
reads the file again.

OS errors that a user can cause (disk full, read-only, no permission) become
:class:`StorageError` with the next step, through
:func:`memory.state.storage_errors.storage_error`.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import hashlib
import os
import shutil
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.state.storage_errors import storage_error


@dataclass(frozen=True)
class Snapshot:
    """What a file was when it was read: enough to tell whether anyone changed it since."""

    device: int
    inode: int
    size: int
    mtime_ns: int
    digest: str
    raw: bytes


class FileChanged(Exception):
    """The file is no longer the snapshot the new text was computed from (not an error the
    user sees: the writer reads the file again)."""


def read_snapshot(path: Path, limit: int | None = None) -> Snapshot:
    """Read a file and remember what it was. ``limit`` caps the bytes kept (a huge file is
    hashed whole but only its head is returned)."""
    with open(path, "rb") as handle:
        stat = os.fstat(handle.fileno())
        raw = handle.read() if limit is None or stat.st_size <= limit else handle.read(limit)
        digest = hashlib.sha256(raw)
        if limit is not None and stat.st_size > limit:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return Snapshot(stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns,
                    digest.hexdigest(), raw)


def still_the_same(path: Path, expected: Snapshot) -> bool:
    """The file at ``path`` is the very file, with the very bytes, of ``expected``."""
    try:
        now = read_snapshot(path, limit=len(expected.raw) if expected.raw else None)
    except FileNotFoundError:
        return False
    return (now.device, now.inode, now.size, now.mtime_ns, now.digest) == (
        expected.device, expected.inode, expected.size, expected.mtime_ns, expected.digest)


def open_for_writing_elsewhere(path: Path) -> bool | None:
    """Whether some process holds ``path`` open for writing (an editor mid-save), or None
    when the system cannot tell (not Linux, not the file's owner, a file system without
    leases). Linux grants a read lease only on a file nobody has open for writing; the
    lease is dropped at once (its break signal is set to SIGURG, which is ignored)."""
    setlease = getattr(fcntl, "F_SETLEASE", None)
    if setlease is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, setlease, fcntl.F_RDLCK)
        fcntl.fcntl(fd, setlease, fcntl.F_UNLCK)
        return False
    except OSError as exc:
        return True if exc.errno in (errno.EAGAIN, errno.EBUSY) else None
    finally:
        os.close(fd)


SETTLE_S = 1.0  # a file changed this recently may still be being saved


def settled(path: Path, size: int | None = None) -> bool:
    """The file is not being saved now, as far as can be told: nobody holds it open for
    writing, it was last changed at least ``SETTLE_S`` ago, and (``size`` given) it still
    has the size it was read with."""
    try:
        stat = path.stat()
    except OSError:
        return False
    if size is not None and stat.st_size != size:
        return False
    if time.time() - stat.st_mtime < SETTLE_S:
        return False
    return not open_for_writing_elsewhere(path)


def write_atomic(path: Path, text: str | bytes, mode: int | None = None,
                 durable: bool = True) -> None:
    """Write ``path`` whole or not at all (temporary file, fsync, rename, fsync folder).
    ``durable=False`` skips both fsyncs, for a cache whose loss costs only a re-read: after
    a power cut it may be missing, old or empty, never a mix of two writes."""
    _move_in(_write_temp(path, text, mode, durable), path, durable)


@contextlib.contextmanager
def atomic_file(path: Path, durable: bool = True) -> Iterator[Path]:
    """:func:`write_atomic` for a writer that fills the file itself (SQLite, a stream):
    the block gets the temporary name beside ``path`` to fill; when it ends without an
    error the file is fsynced and renamed over ``path`` (the folder fsynced), otherwise it
    is removed and ``path`` is left as it was."""
    tmp = temp_beside(path)
    try:
        yield tmp
        finish_atomic(tmp, path, durable)
    finally:
        tmp.unlink(missing_ok=True)


def temp_beside(path: Path) -> Path:
    """The temporary name a writer fills before :func:`finish_atomic` puts it in place (the
    folder made, the temp files of dead writers removed)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temp_files(path)
    except OSError as exc:
        raise storage_error(exc, f"write {path}") from exc
    return _temp_name(path)


def _temp_name(path: Path) -> Path:
    """This process's temporary name beside ``path`` (what :func:`remove_stale_temp_files`
    recognises once the process is gone)."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def finish_atomic(tmp: Path, path: Path, durable: bool = True) -> None:
    """The end of every atomic write: ``tmp`` fsynced, renamed over ``path``, the folder
    fsynced (``durable=False``: neither fsync); ``tmp`` is gone afterwards either way."""
    if durable:
        try:
            fsync_file(tmp)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise storage_error(exc, f"write {path}") from exc
    _move_in(tmp, path, durable)


def _move_in(tmp: Path, path: Path, durable: bool) -> None:
    try:
        os.replace(tmp, path)
    except OSError as exc:
        raise storage_error(exc, f"write {path}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    if durable:
        fsync_folder(path.parent)


def move_file(source: Path, target: Path) -> None:
    """Move the file ``source`` to ``target`` (its folder made) so that a crash leaves it
    under one of the two names, whole, never under neither: a rename, then both folders
    fsynced. Across file systems (a state folder elsewhere) a rename cannot: a copy is
    fsynced and renamed into place, its folder fsynced, before ``source`` is unlinked.
    OSError as the failing call raised it (the caller says what it was doing)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(source, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        _copy_in(source, target)
        os.unlink(source)
    fsync_folder(target.parent)
    if source.parent != target.parent:
        fsync_folder(source.parent)


def _copy_in(source: Path, target: Path) -> None:
    """``source`` copied to ``target`` whole (a symbolic link as a link): the copy fsynced
    under a temporary name, renamed into place, the folder fsynced."""
    tmp = _temp_name(target)
    try:
        shutil.copy2(source, tmp, follow_symlinks=False)
        if not tmp.is_symlink():
            fsync_file(tmp)
        os.rename(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    fsync_folder(target.parent)


def create_new(path: Path, text: str, mode: int = 0o644) -> bool:
    """Create ``path`` whole with ``text`` unless a file is already there (then False and
    nothing written): the new file is linked into place, which fails if the name is taken,
    so a file an editor created meanwhile is never replaced."""
    tmp = _write_temp(path, text, mode)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise storage_error(exc, f"create {path}") from exc
        return _create_exclusive(path, text, mode)  # a file system without hard links
    finally:
        tmp.unlink(missing_ok=True)
    fsync_folder(path.parent)
    return True


def _create_exclusive(path: Path, text: str, mode: int) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        return False
    except OSError as exc:
        raise storage_error(exc, f"create {path}") from exc
    with os.fdopen(fd, "wb") as handle:
        handle.write(text.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())
    return True


def replace_if_unchanged(path: Path, text: str, expected: Snapshot) -> None:
    """Put the new text at ``path`` only if the file is still ``expected`` and nobody has it
    open for writing, checked after the new file is on disk, just before it moves in.
    Raises :class:`FileChanged` (nothing written) otherwise.

    Where the system can exchange two names atomically (Linux ``renameat2``), the new file
    is exchanged with the old one and the old one, now under the temporary name, is checked
    once more: an editor's save that landed between the check and the exchange is put back
    and the write is retried, so no window is left in which such a save is overwritten."""
    tmp = _write_temp(path, text, expected_mode(path))
    try:
        if open_for_writing_elsewhere(path) or not still_the_same(path, expected):
            raise FileChanged(str(path))
        if exchange(tmp, path):
            if not still_the_same(tmp, expected):
                exchange(tmp, path)  # a save landed just before the exchange: put it back
                raise FileChanged(str(path))
        else:
            os.replace(tmp, path)
    except OSError as exc:
        raise storage_error(exc, f"write {path}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    fsync_folder(path.parent)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2: Any = None


def exchange(first: Path, second: Path) -> bool:
    """Swap two paths atomically; False where the system cannot (then nothing happened)."""
    global _renameat2
    if _renameat2 is None:
        _renameat2 = _load_renameat2()
    if _renameat2 is False:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second),
                  _RENAME_EXCHANGE) == 0:
        return True
    import ctypes  # loaded by _load_renameat2 already

    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False  # this file system cannot exchange: an ordinary rename will do
    raise OSError(code, os.strerror(code), str(second))


def _load_renameat2() -> Any:
    import ctypes  # here: most processes never exchange a file

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return False
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                         ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def expected_mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return 0o644


def _write_temp(path: Path, text: str | bytes, mode: int | None, durable: bool = True) -> Path:
    data = text.encode("utf-8") if isinstance(text, str) else text
    tmp = temp_beside(path)
    try:
        try:
            # made private, then given its mode: a secret is never readable in between
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if durable:
                    os.fsync(handle.fileno())
            os.chmod(tmp, mode if mode is not None else expected_mode(path))
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise storage_error(exc, f"write {path}") from exc
    return tmp


def remove_stale_temp_files(path: Path) -> None:
    """Temp files of writers that died before renaming (a crash, SIGKILL) are removed."""
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        pid = tmp.name[len(path.name) + 2:-4]
        if pid.isdigit() and not pid_alive(int(pid)):
            tmp.unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def fsync_file(path: Path) -> None:
    """Flush ``path``'s data to the disk (OSError as the call raised it)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a folder; the rename itself is done
    finally:
        os.close(fd)
