"""Text analysis shared by indexing and querying: one place decides what a term is.

Two analyzers over the same tokenizer:

- ``exact``: words lower-cased, stop words (Spanish + English) removed, accents folded.
  ``configuración`` and ``configuracion`` both become ``configuracion``.
- ``stem``: the same words stemmed for Spanish, *then* accent-folded, then stemmed for English,
  so ``configuración``, ``configuracion`` and ``configuring`` meet at ``configur``. Folding
  before the Spanish stemmer would make it miss ``-ación``. Stemming both languages merges some
  unrelated words, so it feeds a secondary, lower-weighted field only.

``estado``/``estados`` are removed from Whoosh's Spanish stop list: the word matters here.
Queries are never parsed as syntax (no ``NOT``, ``*`` or ``field:``): the query text goes
through the same analyzers and becomes plain OR-ed terms.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from whoosh.analysis import (
    CharsetFilter,
    Filter,
    LowercaseFilter,
    RegexTokenizer,
    StemFilter,
)
from whoosh.lang import stopwords_for_language
from whoosh.support.charset import accent_map

from memory.model.text import fold

ANALYZER_VERSION = 4
KEEP_WORDS = frozenset({"estado", "estados"})
WORD_PATTERN = r"\w+"


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """Spanish and English stop words, accent-folded (so ``cómo`` and ``como`` both go)."""
    words = set(stopwords_for_language("es")) | set(stopwords_for_language("en"))
    return frozenset(fold(w) for w in words - KEEP_WORDS)


class FoldedStopFilter(Filter):  # type: ignore[misc]
    """Drops one-letter tokens and stop words, comparing accent-folded forms."""

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
    return _base() | CharsetFilter(accent_map)


@lru_cache(maxsize=1)
def stem_analyzer() -> Any:
    """Spanish stem, accent fold, English stem: a cross-language, lower-precision field."""
    return (_base() | StemFilter(lang="es") | CharsetFilter(accent_map)
            | StemFilter(lang="en"))


def terms(text: str, analyzer: Any) -> list[str]:
    """The analyzed terms of a text, in order, duplicates kept."""
    return [token.text for token in analyzer(text, mode="query")]


def query_terms(text: str) -> list[tuple[str, str, str]]:
    """(original word, exact term, stem term) for each distinct word of a query."""
    seen: set[str] = set()
    out: list[tuple[str, str, str]] = []
    for token in _base()(text, mode="query"):
        word = token.text
        exact = terms(word, exact_analyzer())
        stem = terms(word, stem_analyzer())
        if not exact or word in seen:
            continue
        seen.add(word)
        out.append((word, exact[0], stem[0] if stem else exact[0]))
    return out
