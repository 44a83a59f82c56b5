"""Querying the index: agent text in, scored hits out. Read-only.

The query is never parsed as syntax. Its words go through the shared analyzers and become an
OR of plain terms over the weighted fields (BM25F), so ``NOT``, ``*``, ``field:`` or brackets
in a message are just words (or dropped as punctuation).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from whoosh.query import And, Or, Query, Term
from whoosh.scoring import BM25F

from memory.analysis import query_terms
from memory.documents import FIELD_KIND, KIND_FIELDS, STEM_FIELD
from memory.errors import InvalidArgument

MAX_QUERY_CHARS = 4000
MAX_QUERY_WORDS = 64
CONTEXT_WEIGHT = 0.2  # a context word's weight beside a message of ``VAGUE_WORDS`` or more
VAGUE_CONTEXT_WEIGHT = 0.5  # … and beside a one-word message (in between: linear)
VAGUE_WORDS = 5  # a message of this many words or more is not vague


@dataclass(frozen=True)
class ParsedQuery:
    """A query's words and the terms they became, for matching back.

    ``context`` holds words of the recent conversation, searched with ``context_weight``
    (low) so a vague message still leans toward the topic at hand.
    """

    text: str
    words: tuple[tuple[str, str, str], ...]  # (word, exact term, stem term)
    context: tuple[tuple[str, str, str], ...] = ()
    context_weight: float = CONTEXT_WEIGHT

    def word_for(self, field: str, term: str) -> str | None:
        index = 2 if field in STEM_FIELD.values() else 1
        return next((w[0] for w in (*self.words, *self.context) if w[index] == term), None)

    @property
    def query_words(self) -> frozenset[str]:
        return frozenset(w[0] for w in self.words)


@dataclass(frozen=True)
class SearchHit:
    fields: dict[str, Any]
    score: float
    matched: tuple[str, ...]


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
    words = query_terms(text[:MAX_QUERY_CHARS])[:MAX_QUERY_WORDS]
    extra: list[tuple[str, str, str]] = []
    if context:
        seen = {w[1] for w in words}
        extra = [w for w in query_terms(context[-MAX_QUERY_CHARS:]) if w[1] not in seen]
        extra = extra[-MAX_QUERY_WORDS:]
    weight = context_weight_for(len(words)) if context_weight is None else context_weight
    return ParsedQuery(text, tuple(words), tuple(extra), weight)


def build_query(parsed: ParsedQuery, kind: str) -> Query:
    """An OR of every query word over the kind's exact fields and its stemmed field;
    context words join with a low boost."""
    parts: list[Query] = []
    weighted = [(w, 1.0) for w in parsed.words] + [(w, parsed.context_weight)
                                                    for w in parsed.context]
    for (_word, exact, stem), boost in weighted:
        parts.extend(Term(f, exact, boost=boost) for f in KIND_FIELDS[kind])
        parts.append(Term(STEM_FIELD[kind], stem, boost=boost))
    return Or(parts)


class KindBM25F(BM25F):  # type: ignore[misc]
    """BM25F whose statistics are those of the field's own document kind.

    Whoosh divides a field's total length by the number of *all* documents, and its idf
    counts all documents too; with notes, sections and paragraphs in one index that would
    compare a note's body with paragraphs. Here each field's average length and idf use
    only the documents of its kind.
    """

    def scorer(self, searcher: Any, fieldname: str, text: bytes, qf: int = 1) -> Any:
        if not searcher.schema[fieldname].scorable or fieldname not in FIELD_KIND:
            return super().scorer(searcher, fieldname, text, qf)
        scorer = super().scorer(searcher, fieldname, text, qf)
        parent = searcher.get_parent()
        docs = max(1, parent.doc_frequency("kind", FIELD_KIND[fieldname]))
        freq = parent.doc_frequency(fieldname, text)
        scorer.idf = math.log(1 + (docs - freq + 0.5) / (freq + 0.5))
        scorer.avgfl = (parent.field_length(fieldname) / docs) or 1
        return scorer


def weighting() -> KindBM25F:
    """BM25F with the usual constants; field boosts come from the schema."""
    return KindBM25F(B=0.75, K1=1.2)


@runtime_checkable
class NativeSearcher(Protocol):
    """A backend's searcher that runs the query itself (tantivy); Whoosh's is searched here."""

    def search_parsed(self, parsed: ParsedQuery, kind: str, limit: int | None,
                      note_id: str | None = None) -> tuple[list[SearchHit], int]: ...


def search(searcher: Any, parsed: ParsedQuery, kind: str, limit: int | None,
           note_id: str | None = None) -> tuple[list[SearchHit], int]:
    """Hits of one document kind (optionally inside one note) and how many matched in all."""
    if not parsed.words and not parsed.context:
        return [], 0
    if isinstance(searcher, NativeSearcher):
        return searcher.search_parsed(parsed, kind, limit, note_id)
    scope: Query = Term("kind", kind)
    if note_id is not None:
        scope = And([scope, Term("note_id", note_id)])
    # Every match is scored (limit=None) and the best are kept: it gives the exact count of
    # matching documents in scope (Whoosh's ``len(results)`` with a limit ignores the
    # filter), and Whoosh's top-k shortcut, which skips blocks by their quality bound, can
    # drop a better document once KindBM25F has replaced the idf and average lengths.
    results = searcher.search(build_query(parsed, kind), limit=None, filter=scope, terms=True)
    shown = results[:limit] if limit is not None else results
    hits = [SearchHit(dict(hit.fields()), float(hit.score), _matched(hit, parsed))
            for hit in shown]
    return hits, len(results)


def _matched(hit: Any, parsed: ParsedQuery) -> tuple[str, ...]:
    words: list[str] = []
    for field, term in hit.matched_terms() or []:
        text = term.decode("utf-8") if isinstance(term, bytes) else str(term)
        word = parsed.word_for(field, text)
        if word and word not in words:
            words.append(word)
    order = [w[0] for w in (*parsed.words, *parsed.context)]
    return tuple(sorted(words, key=order.index))
