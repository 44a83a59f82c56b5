"""A fast listing of the note files, for the freshness check every read makes.

:meth:`memory.store.Store.files` resolves every path with ``os.path.realpath`` to keep
symbolic links from leading out of the store, and builds a ``Path`` for each; with 2,200 notes
that costs about 80 ms, more than a search. :func:`note_stats` finds the same files by the
same rules (hidden files and folders skipped, folders reached through links not entered, as
``os.walk`` does, links leading out of the store left out) but resolves only the entries that
are links and builds no paths: about 8 ms for 2,200 notes.
"""

from __future__ import annotations

import os
from pathlib import Path

Stat = tuple[str, int, int]  # path, mtime_ns, size


def note_stats(root: Path) -> dict[str, Stat]:
    """Every note file under ``root`` as {note id: (path, mtime_ns, size)}: the files
    :meth:`Store.files` lists, unordered."""
    real_root = os.path.realpath(root) + os.sep
    found: dict[str, Stat] = {}
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name[0] == ".":
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, f"{prefix}{name}/"))
                    continue
                if not name.endswith(".md"):
                    continue
                if entry.is_symlink():
                    if entry.is_dir() or not os.path.realpath(entry.path).startswith(real_root):
                        continue
                    stat = os.stat(entry.path)
                else:
                    stat = entry.stat()
            except OSError:
                continue
            found[prefix + name[:-3]] = (entry.path, stat.st_mtime_ns, stat.st_size)
    return found
