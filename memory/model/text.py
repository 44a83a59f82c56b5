"""Small text helpers shared by the note model, the store and the renderers."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_NON_SLUG = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=65_536)
def fold(text: str) -> str:
    """Lower-case and strip accents: ``Bitácora`` → ``bitacora``."""
    if text.isascii():
        return text.lower().strip()
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).strip()


def slugify(text: str, max_length: int = 60) -> str:
    """A stable ASCII id from a title: ``Spanish stemming`` → ``spanish-stemming``."""
    slug = _NON_SLUG.sub("-", fold(text)).strip("-")
    return slug[:max_length].rstrip("-")


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
# what str.splitlines breaks on besides \r and \n (markdown-it does not)
_OTHER_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def split_lines(text: str) -> list[str]:
    """Split into lines keeping their ends, breaking where markdown-it does (``\\r\\n``,
    ``\\r``, ``\\n``), so its line maps index this list. ``str.splitlines`` breaks on more
    (form feed, ``\\u2028``...): it is used only for a text with none of those, where it splits
    alike in half the pattern's time (recall splits every note it reads)."""
    if not any(other in text for other in _OTHER_BREAKS):
        return text.splitlines(keepends=True)
    return _LINE.findall(text)


def excerpt(value: str, limit: int = 60) -> str:
    """A user's input echoed in a message: quoted, and cut to ``limit`` characters."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


# An import keeps a source heading it had to replace verbatim inside this comment, right below
# our heading (memory.model.compose): in the file, never in what is read, recalled or counted.
KEPT_HEADING = "<!-- imported heading, kept as it was:"
_KEPT_LINES = 2  # the heading's own lines: one, or two for a setext heading


def without_kept_headings(text: str) -> str:
    """``text`` without the comments that keep an imported heading as it was (the marker
    line, the heading's one or two lines, ``-->``); anything else, a comment left unclosed
    included, stays as it is."""
    if KEPT_HEADING not in text:
        return text
    lines = split_lines(text)
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip("\r\n") == KEPT_HEADING:
            close = next((j for j in range(i + 1, min(i + 2 + _KEPT_LINES, len(lines)))
                          if lines[j].rstrip("\r\n") == "-->"), None)
            if close is not None:
                i = close + 1
                continue
        out.append(lines[i])
        i += 1
    return "".join(out)
