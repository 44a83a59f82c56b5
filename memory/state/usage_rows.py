"""The usage log's rows: what is stored for a call, and what is accepted back as one.

Stored: text made safe for SQLite (a lone surrogate becomes '?'), bounded in length (a query
keeps an excerpt of its first ``MAX_QUERY_CHARS`` characters), and the query in the form the
configuration asks for: ``plain`` (the excerpt), ``hashed`` (an HMAC-SHA256 of the normalized
query, keyed per log, so equal questions still compare equal) or ``off`` (nothing).

Read back: every value is checked; a row with a value of the wrong type or shape is left out
and counted, never raised.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import unicodedata
from dataclasses import dataclass

QUERY_MODES = ("plain", "hashed", "off")
MAX_QUERY_CHARS = 1000  # a question's excerpt; the promoter needs its words, not a pasted log
MAX_NAME_CHARS = 300  # session, note and section ids
MAX_RANKED = 50
HASH_PREFIX = "sha256:"
_HASHED = re.compile(r"sha256:[0-9a-f]{64}")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Call:
    """One logged ladder call."""

    id: int
    ts: float
    session: str
    front: str
    rung: str
    query: str  # an excerpt, a "sha256:…" digest (see :func:`is_hashed`) or ''
    note: str
    section: str
    tokens: int
    ranked: tuple[str, ...]


class Undecodable(bytes):
    """A TEXT value that is not UTF-8 (the text factory's answer instead of raising)."""


def decode_text(raw: bytes) -> str | Undecodable:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return Undecodable(raw)


def safe_text(text: str, limit: int) -> str:
    """``text`` encodable by SQLite and at most ``limit`` characters (cut at a space, with
    '…', when longer)."""
    text = text.encode("utf-8", "replace").decode("utf-8")
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    space = cut.rfind(" ", limit // 2)
    return (cut[:space] if space > 0 else cut).rstrip() + "…"


def normalized_query(query: str) -> str:
    """The form two askings of one question share: NFKC, case-folded, spaces collapsed."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", query).casefold()).strip()


def hashed_query(query: str, key: bytes) -> str:
    digest = hmac.new(key, normalized_query(query).encode("utf-8", "replace"), hashlib.sha256)
    return HASH_PREFIX + digest.hexdigest()


def is_hashed(query: str) -> bool:
    return _HASHED.fullmatch(query) is not None


def stored_query(query: str, mode: str, key: bytes) -> str:
    """What the log keeps of ``query`` under ``mode`` (one of ``QUERY_MODES``)."""
    if mode == "off" or not query.strip():
        return ""
    if mode == "hashed":
        return query if is_hashed(query) else hashed_query(query, key)
    return safe_text(query, MAX_QUERY_CHARS)


def as_seconds(value: object) -> float | None:
    """A finite number of seconds, or None (a text, a blob, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def to_call(row: tuple[object, ...]) -> Call | None:
    """The call a row of ``SELECT id, ts, session, front, rung, query, note, section, tokens,
    ranked`` holds, or None when a value has the wrong type or shape."""
    if len(row) != 10:
        return None
    call_id, ts, session, front, rung, query, note, section, tokens, ranked = row
    seconds = as_seconds(ts)
    texts = (session, front, rung, query, note, section, ranked)
    if (seconds is None or not isinstance(call_id, int) or type(tokens) is not int
            or not all(type(t) is str for t in texts)):
        return None
    names = _ranked(str(ranked))
    if names is None:
        return None
    return Call(call_id, seconds, str(session), str(front), str(rung),
                safe_text(str(query), MAX_QUERY_CHARS) if not is_hashed(str(query))
                else str(query), str(note), str(section), tokens, names)


def _ranked(raw: str) -> tuple[str, ...] | None:
    try:
        value = json.loads(raw or "[]")
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(value)
