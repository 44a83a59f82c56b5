"""Whoosh's analyzers: the shared word rules (:mod:`memory.index.words`) as Whoosh filters,
and the stemmed terms, which are Whoosh's own.

- ``exact``: words lower-cased, stop words (Spanish + English) removed, accents folded.
  ``configuración`` and ``configuracion`` both become ``configuracion``.
- ``stem``: the same words stemmed for Spanish, *then* accent-folded, then stemmed for English,
  so ``configuración``, ``configuracion`` and ``configuring`` meet at ``configur``. Folding
  before the Spanish stemmer would make it miss ``-ación``. Stemming both languages merges some
  unrelated words, so it feeds a secondary, lower-weighted field only.

The exact analyzer's terms are :func:`memory.index.words.exact_terms`' (the same tokenizer,
stop list and accent table), which is what lets a query's words be made without Whoosh.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from whoosh.analysis import (
    CharsetFilter,
    Filter,
    LowercaseFilter,
    RegexTokenizer,
    StemFilter,
)

from memory.index.words import WORD_PATTERN, accent_table, base_forms, stop_words
from memory.model.text import fold


class FoldedStopFilter(Filter):  # type: ignore[misc]
    """Drops one-letter tokens and stop words, comparing accent-folded forms (as
    :func:`memory.index.words.kept`, inlined: it runs on every token indexed)."""

    def __call__(self, tokens: Any) -> Any:
        stops = stop_words()
        for token in tokens:
            if len(token.text) >= 2 and fold(token.text) not in stops:
                yield token


def _base() -> Any:
    return RegexTokenizer(WORD_PATTERN) | LowercaseFilter() | FoldedStopFilter()


@lru_cache(maxsize=1)
def exact_analyzer() -> Any:
    """Lower-case, stop words out, accents folded."""
    return _base() | CharsetFilter(accent_table())


@lru_cache(maxsize=1)
def stem_analyzer() -> Any:
    """Spanish stem, accent fold, English stem: a cross-language, lower-precision field."""
    return (_base() | StemFilter(lang="es") | CharsetFilter(accent_table())
            | StemFilter(lang="en"))


def terms(text: str, analyzer: Any) -> list[str]:
    """The analyzed terms of a text, in order, duplicates kept."""
    return [token.text for token in analyzer(text, mode="query")]


@lru_cache(maxsize=4096)
def stem_term(word: str, exact: str) -> str:
    """A query word's stemmed term (its exact term when stemming leaves nothing)."""
    stem = terms(base_forms(word), stem_analyzer())
    return stem[0] if stem else exact


_WORD = re.compile(WORD_PATTERN)


@lru_cache(maxsize=65536)
def _stem_word(word: str) -> str | None:
    """One token's stemmed term (the analyzer on the token alone: the tokenizer matches it
    whole, so the term is the one it has in any text); none for a stop word."""
    stem = terms(base_forms(word), stem_analyzer())
    return stem[0] if stem else None


def stem_terms(text: str) -> frozenset[str]:
    """The distinct stemmed terms of a text, as ``terms(text, stem_analyzer())`` gives them,
    with each distinct word stemmed once (kept for the next text): several times faster on
    a note's lines, whose words repeat."""
    found = {_stem_word(word) for word in _WORD.findall(text)}
    return frozenset(term for term in found if term is not None)
