"""The errors an index raises when it cannot be built or written, worded once for both
backends: one sentence, what failed in the OS's words, and the next step."""

from __future__ import annotations

from pathlib import Path

from memory.errors import IndexUnavailable


def failure_reason(exc: BaseException) -> str:
    """The OS's words for a failure ("No space left on device"), without errno and path."""
    cause = exc if isinstance(exc, OSError) else exc.__cause__
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror
    return str(cause or exc)


def write_failed(folder: Path, exc: BaseException) -> IndexUnavailable:
    return IndexUnavailable(f"cannot write the index in {folder} ({failure_reason(exc)}); free "
                            "space there or make it writable (or set NOTES_STATE_DIR to a "
                            "folder that is), and the next command indexes what was missed")


def build_failed(folder: Path, exc: BaseException) -> IndexUnavailable:
    return IndexUnavailable(f"cannot build the index in {folder} ({failure_reason(exc)}); free "
                            "space there or make it writable (or set NOTES_STATE_DIR to a "
                            "folder that is), then run the command again")


def busy(folder: Path, seconds: float) -> IndexUnavailable:
    return IndexUnavailable(f"the index in {folder} has been locked by another writer for over "
                            f"{seconds:.0f} s; try again in a moment, or run `notes "
                            "index --rebuild` if it stays locked")
