"""A query as every backend receives it: the message's words and the conversation's.

The query is never parsed as syntax: ``NOT``, ``*``, ``field:`` or brackets in a message are
just words (or dropped as punctuation). Each backend turns the words into its own terms
(exact and stemmed) and ORs them over the weighted fields of a document kind.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.errors import InvalidArgument
from memory.index.words import query_words

MAX_QUERY_CHARS = 4000
MAX_QUERY_WORDS = 64
CONTEXT_WEIGHT = 0.2  # a context word's weight beside a message of ``VAGUE_WORDS`` or more
VAGUE_CONTEXT_WEIGHT = 0.5  # … and beside a one-word message (in between: linear)
VAGUE_WORDS = 5  # a message of this many words or more is not vague

Word = tuple[str, str]  # (word as written, lower-cased; its exact term)


@dataclass(frozen=True)
class ParsedQuery:
    """A query's words, each with its exact term.

    ``context`` holds words of the recent conversation, searched with ``context_weight``
    (low) so a vague message still leans toward the topic at hand; a context word whose
    exact term is one of the message's is left out. ``expansion`` holds words added by
    pseudo-relevance feedback (``memory.retrieval.stages.feedback``), each with its own low weight.
    """

    text: str
    words: tuple[Word, ...]
    context: tuple[Word, ...] = ()
    context_weight: float = CONTEXT_WEIGHT
    expansion: tuple[tuple[Word, float], ...] = ()

    @property
    def query_words(self) -> frozenset[str]:
        return frozenset(w[0] for w in self.words)

    def weighted(self) -> list[tuple[Word, float]]:
        """The message's words (weight 1), then the context's (``context_weight``), then
        the feedback words (each its own weight)."""
        return [(w, 1.0) for w in self.words] + [(w, self.context_weight)
                                                 for w in self.context] + list(self.expansion)


def vagueness(words: int) -> float:
    """1.0 for a message of one word (or none), falling linearly to 0 at ``VAGUE_WORDS``."""
    return max(0.0, min(1.0, 1 - (words - 1) / (VAGUE_WORDS - 1)))


def context_weight_for(words: int) -> float:
    """The weight of the conversation's words beside a message of ``words`` words: the
    vaguer the message, the more the conversation counts."""
    return CONTEXT_WEIGHT + (VAGUE_CONTEXT_WEIGHT - CONTEXT_WEIGHT) * vagueness(words)


def parse_query(text: str, context: str | None = None,
                context_weight: float | None = None) -> ParsedQuery:
    if not isinstance(text, str) or (not text.strip() and not (context or "").strip()):
        raise InvalidArgument("the query is empty; give a few words about what you need")
    words = query_words(text[:MAX_QUERY_CHARS])[:MAX_QUERY_WORDS]
    extra: list[Word] = []
    if context:
        seen = {w[1] for w in words}
        extra = [w for w in query_words(context[-MAX_QUERY_CHARS:]) if w[1] not in seen]
        extra = extra[-MAX_QUERY_WORDS:]
    weight = context_weight_for(len(words)) if context_weight is None else context_weight
    return ParsedQuery(text, tuple(words), tuple(extra), weight)
