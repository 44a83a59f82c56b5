"""The ``feedback`` lever: pseudo-relevance feedback (RM3-style) for ``suggest``: the words
that weigh most in the best paragraphs of a first search join the query at a low weight."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from typing import TYPE_CHECKING

from memory.errors import NotesError
from memory.index.words import query_words, words
from memory.model.text import split_lines
from memory.retrieval.stages.base import Stage

if TYPE_CHECKING:
    from memory.index import ParsedQuery, SearchHit, StoredPart
    from memory.retrieval.reader import Reader

FEEDBACK_DOCS = 10  # paragraphs of the first search the feedback words come from
FEEDBACK_TERMS = 10  # words added
FEEDBACK_WEIGHT = 0.3  # the best feedback word's weight (a message word weighs 1)


class Feedback(Stage):
    name = "feedback"
    summary = "suggest: the best paragraphs' words join the query at a low weight"

    def expand(self, reader: Reader, parsed: ParsedQuery) -> ParsedQuery:
        return with_feedback(reader, parsed)


STAGE = Feedback()


def with_feedback(reader: Reader, parsed: ParsedQuery) -> ParsedQuery:
    """``parsed`` with RM3-style feedback words: each word of the best paragraphs of a
    first search weighs the sum, over those paragraphs, of its share of the paragraph's
    words times the paragraph's share of their scores; the ``FEEDBACK_TERMS`` heaviest
    words not already in the query join it, the heaviest at ``FEEDBACK_WEIGHT``."""
    hits, _ = reader.search(parsed, "paragraph", FEEDBACK_DOCS)
    weights = feedback_words(reader, hits, parsed)
    if not weights:
        return parsed
    top = max(weights.values())
    ranked = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0][1]))[:FEEDBACK_TERMS]
    return dataclasses.replace(parsed, expansion=tuple(
        (word, round(FEEDBACK_WEIGHT * weight / top, 3)) for word, weight in ranked))


def feedback_words(reader: Reader, hits: list[SearchHit[StoredPart]],
                   parsed: ParsedQuery) -> dict[tuple[str, str], float]:
    known = {w[1] for w in parsed.words} | {w[1] for w in parsed.context}
    mass = sum(h.score for h in hits) or 1.0
    weights: dict[tuple[str, str], float] = defaultdict(float)
    for hit in hits:
        found = [w for w in _paragraph_words(reader, hit.doc) if w[1] not in known]
        if not found:
            continue
        share = hit.score / mass / len(found)
        for word in found:
            weights[word] += share
    return dict(weights)


def _paragraph_words(reader: Reader, part: StoredPart) -> list[tuple[str, str]]:
    """The paragraph's words (every occurrence, so a word used twice weighs twice)."""
    try:
        lines = split_lines(reader.load(part.note_id).note.text)
    except NotesError:  # a note gone since it was indexed adds no words
        return []
    start, end = part.lines
    text = "".join(lines[start:end])
    distinct = dict(query_words(text))
    return [(w, distinct[w]) for w in words(text) if w in distinct]
