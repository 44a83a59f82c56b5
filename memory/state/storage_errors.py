"""OS refusals said plainly: what failed, why, and what to do.

An OS error a user can cause (disk full, read-only, no permission) becomes a
:class:`StorageError` with the next step (:func:`storage_error`, used by every file write,
:mod:`memory.state.safe_files` first); a path a user gave that the OS refuses becomes one that
names the path and what it was for (:func:`path_error`), and the folders a command makes or
checks before its work go through :func:`make_folder` and :func:`check_folder`.
"""

from __future__ import annotations

import errno
from pathlib import Path

from memory.errors import StorageError

_WHY = {
    errno.ENOSPC: ("no space left on the device", "free some space and retry"),
    errno.EDQUOT: ("the disk quota is exhausted", "free some space and retry"),
    errno.EROFS: ("the file system is read-only", "remount it read-write or use another "
                  "folder"),
    errno.EACCES: ("permission denied", "check the folder's owner and permissions"),
    errno.EPERM: ("operation not permitted", "check the folder's owner and permissions"),
    errno.EFBIG: ("the file is too large for the file system", "split the note"),
    errno.ENAMETOOLONG: ("the file name is too long for the file system", "use a shorter "
                         "note id"),
    errno.EIO: ("an input/output error (a failing disk?)", "check the disk"),
}


def storage_error(exc: OSError, doing: str) -> StorageError:
    """A clear error for an OS refusal: what failed, why, and what to do."""
    why, step = _WHY.get(exc.errno or 0, (exc.strerror or str(exc), "check the disk and the "
                                          "folder's permissions"))
    return StorageError(f"cannot {doing}: {why}; {step} (nothing was changed)")


_PATH_WHY = {
    errno.ENOTDIR: ("a part of it is a file, not a folder", "give a path whose parts are "
                    "folders (or do not exist yet)"),
    errno.ENOENT: ("a folder on the way does not exist and cannot be made there", "give a "
                   "folder where you can create files"),
    errno.EEXIST: ("a file of that name is in the way", "remove it or give another path"),
    errno.ENAMETOOLONG: ("a name in it is too long for the file system", "give a shorter "
                         "path"),
    errno.ELOOP: ("its symbolic links loop", "fix the links or give another path"),
}


def path_error(exc: OSError, path: Path | str | None = None, what: str = "") -> StorageError:
    """A clear error for a path a user gave (a folder or file on the command line) that the
    OS refuses: the path, what it was for, why, and what to do. ``path`` defaults to the
    one the OS named."""
    named = path if path is not None else (exc.filename or "the path")
    why, step = _PATH_WHY.get(exc.errno or 0) or _WHY.get(exc.errno or 0) or (
        exc.strerror or str(exc), "check the path and its permissions")
    return StorageError(f"cannot use {named}{f' as {what}' if what else ''}: {why}; {step}")


def make_folder(path: Path, what: str) -> Path:
    """Make the folder ``path`` (and its parents) or raise :func:`path_error`."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise path_error(exc, path, what) from exc
    return path


def check_folder(path: Path, what: str) -> Path:
    """Raise :func:`path_error` unless ``path`` is a folder or can be made one, leaving
    nothing behind (the folders made to find out are removed): called before any long
    work, so that an unusable output folder is said at once, not after, and a command
    refused later for another reason has created nothing."""
    made: list[Path] = []
    try:
        missing = path
        while not missing.exists():
            made.append(missing)
            missing = missing.parent
        make_folder(path, what)
    except OSError as exc:  # a name too long, a loop of links, on the way up
        raise path_error(exc, path, what) from exc
    finally:
        for folder in made:  # the deepest first
            try:
                folder.rmdir()
            except OSError:
                break
    return path
