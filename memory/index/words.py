"""What a word is, for every backend: tokens, stop words, accent folding. Pure Python.

A query's words and the index's exact terms are made by the same steps:

- ``\\w+`` tokens, lower-cased;
- one-letter tokens and stop words (Spanish + English, compared accent-folded, so ``cómo``
  and ``como`` both go) removed; ``estado``/``estados`` are kept: the word matters here;
- for the exact terms, accents folded with the accent table (``configuración`` →
  ``configuracion``).

The lists are data (:mod:`memory.index.wordlists`), so the query's words, promotion's word
sets and the tantivy analyzers need no Whoosh. Whoosh's analyzers are built from the same
lists (:mod:`memory.index.whoosh.analysis`) and add the stemmed terms, which are each
backend's own, made from the text with English irregular past forms put as their base verb
(:func:`base_forms`) on both sides.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory.index.wordlists import ACCENTS, ENGLISH, ENGLISH_IRREGULAR, SPANISH
from memory.model.text import fold

# in each index's version.json: a change rebuilds the indexes (5: irregular English verbs
# stem as their base verb, base_forms)
ANALYZER_VERSION = 5
KEEP_WORDS = frozenset({"estado", "estados"})
WORD_PATTERN = r"\w+"
_WORD = re.compile(WORD_PATTERN)
_BETWEEN_WORDS = re.compile(f"({WORD_PATTERN})")  # split: text, word, text, ..., word, text


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """Spanish and English stop words, accent-folded (so ``cómo`` and ``como`` both go)."""
    return frozenset(fold(w) for w in (SPANISH | ENGLISH) - KEEP_WORDS)


@lru_cache(maxsize=1)
def accent_table() -> dict[int, str]:
    """The accent table as a ``str.translate`` map."""
    return {ord(source): target for target, sources in ACCENTS.items() for source in sources}


def words(text: str) -> list[str]:
    """The words of a text, lower-cased, in order, duplicates kept: a word is two letters
    or more, and not a stop word."""
    stops = stop_words()
    return [token for word in _WORD.findall(text)
            if len(token := word.lower()) >= 2 and fold(token) not in stops]


def exact_terms(text: str) -> list[str]:
    """The exact terms of a text (its words, accents folded), in order, duplicates kept."""
    table = accent_table()
    return [word.translate(table) for word in words(text)]


def query_words(text: str) -> list[tuple[str, str]]:
    """(word, exact term) for each distinct word of a query, in order. A word is analyzed
    again on its own, as an index term is, and left out if that leaves nothing (a token
    whose lower case splits into one-letter pieces, as ``İ`` does)."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for word in words(text):
        exact = exact_terms(word)
        if not exact or word in seen:
            continue
        seen.add(word)
        out.append((word, exact[0]))
    return out


def base_forms(text: str) -> str:
    """``text`` with each English irregular past form put as its base verb (``chose`` →
    ``choose``): what the stemmed fields and terms are made from, on the index side and
    the query side alike, so the stemmer joins them as it joins ``added`` and ``add``."""
    # split with the word pattern as its group: the words are the odd items, each put as
    # ``_WORD.sub`` with a per-word function would, in about half its time (every text
    # indexed goes through here three times: as its note, its section and its block)
    parts = _BETWEEN_WORDS.split(text)
    base = ENGLISH_IRREGULAR.get
    parts[1::2] = [base(word.lower(), word) for word in parts[1::2]]
    return "".join(parts)
