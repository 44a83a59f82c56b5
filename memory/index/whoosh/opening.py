"""Opening a Whoosh index safely: segment names from the OS's randomness, segment files read
in place, a retry for the table-of-contents race, a probe, and what counts as damage.

Importing this module installs the three patches; :mod:`memory.index.whoosh.index` imports it."""

from __future__ import annotations

import secrets
import string
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from whoosh import index as whoosh_index
from whoosh.codec import base as _codec_base

from memory.index.stored import StoredNote
from memory.index.whoosh import columns as whoosh_columns
from memory.index.whoosh import files as whoosh_files
from memory.index.whoosh.schema import shared_schema

_SEGMENT_ALPHABET = string.ascii_lowercase + string.digits


def _os_random_segment_id(cls: type, size: int = 16) -> str:
    return "".join(secrets.choice(_SEGMENT_ALPHABET) for _ in range(size))


# Whoosh names new segments with the global `random` module. Two processes forked from one
# parent (or a test framework that reseeds `random`) then pick the same name and a commit
# fails. Segment names come from the OS's randomness instead.
_codec_base.Segment._random_id = classmethod(_os_random_segment_id)
whoosh_files.install()  # segment files are read in place, not copied (memory/index/whoosh/files.py)
whoosh_columns.install()  # stored-field offsets summed in C (memory/index/whoosh/columns.py)


T = TypeVar("T")


def retrying(fn: Callable[[], T], attempts: int = 5) -> T:
    """``fn()``, again when a commit in another process removed the table of contents it
    was reading (Whoosh lists the generations, then opens the newest): a race, not damage.
    A missing segment file is not retried here: Whoosh's reader already reads the table of
    contents again for it, ten times over half a second, so a file still missing after that
    is damage, and the rebuild should start at once (it waited 2.5 s more, twice)."""
    for attempt in range(attempts):
        try:
            return fn()
        except FileNotFoundError as exc:
            if attempt == attempts - 1 or not str(exc.filename or "").endswith(".toc"):
                raise
            time.sleep(0.01 * (attempt + 1))
    raise AssertionError("unreachable")


def probe(folder: Path) -> Any:
    """The index in ``folder``, opened, once a searcher over it could count its documents."""
    ix = whoosh_index.open_dir(str(folder), schema=shared_schema())
    try:
        with ix.searcher() as searcher:
            searcher.doc_count()
    except BaseException:
        ix.close()
        raise
    return ix


def stored_notes_of(ix: Any) -> dict[str, StoredNote]:
    with ix.searcher() as searcher:
        return {str(d["note_id"]): StoredNote.of(d) for d in searcher.documents(kind="note")}


def looks_like_damage(exc: BaseException) -> bool:
    return isinstance(exc, OSError | EOFError | ValueError | KeyError | AssertionError) or \
        type(exc).__module__.startswith("whoosh")
