"""How ``suggest`` ranks notes: BM25F over the notes, and the optional routing levers
(:mod:`memory.retrieval.levers`): block routing (each note's own score plus a share of its
best paragraph's) and pseudo-relevance feedback (RM3-style expansion from the best paragraphs).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from typing import TYPE_CHECKING

from memory.errors import NotesError
from memory.index import Found, ParsedQuery, SearchHit, StoredNote, StoredPart
from memory.index.words import query_words, words
from memory.model.text import split_lines
from memory.model.timeexpr import TimeRange, dated_inside, find_ranges
from memory.retrieval.context import split

if TYPE_CHECKING:
    from memory.retrieval.ladder import Ladder

BLOCK_SHARE = 0.5  # block-route: the best paragraph's weight beside the note's own score
BLOCK_POOL = 200  # block-route: the store's best paragraphs the notes' best are taken from
HEADER = "header"  # the section of a note's front matter (title, tags, aliases)
FEEDBACK_DOCS = 10  # paragraphs of the first search the feedback words come from
FEEDBACK_TERMS = 10  # words added
FEEDBACK_WEIGHT = 0.3  # the best feedback word's weight (a message word weighs 1)
DATE_SHARE = 0.5  # dates lever: a note written inside the message's dates scores 1 + this times
DATE_POOL = 200  # sections searched for entries written then
DATE_NOTES = 100  # notes ranked before the lift, when the message names a time
DATE_SPAN_DAYS = 32  # only expressions shorter than this narrow the routing (a month at most)


def route_notes(ladder: Ladder, parsed: ParsedQuery, pool: int, by_blocks: bool = True
                ) -> Found[StoredNote]:
    """The notes for ``parsed``, best first, with the levers that are on (block-route only
    with ``by_blocks``)."""
    levers = ladder.levers
    if levers.feedback:
        parsed = with_feedback(ladder, parsed)
    if levers.block_route and by_blocks:
        return block_routed_notes(ladder, parsed, pool)
    return _own_words(parsed, ladder.index.run_search(
        lambda searcher: searcher.search_notes(parsed, pool)))


def date_ranges(ladder: Ladder, parsed: ParsedQuery, today: dt.date | None) -> list[TimeRange]:
    """The message's time expressions that narrow it to at most a month, when the dates
    lever is on (else none): "this year" or "since 2020" hold most notes and say little."""
    if not ladder.levers.dates:
        return []
    return [r for r in find_ranges(parsed.text, today or dt.date.today())
            if (r.end - r.start).days < DATE_SPAN_DAYS]


def with_dates(ladder: Ladder, parsed: ParsedQuery, hits: list[SearchHit[StoredNote]],
               ranges: list[TimeRange]) -> list[SearchHit[StoredNote]]:
    """Hits re-ranked by the message's time expressions (the dates lever): a note with a
    section that the message's own words match (among the store's ``DATE_POOL`` best; not
    the words of the time expression, which every heading of that year or month holds) and
    that is dated inside them scores ``1 + DATE_SHARE`` times as much. The time belongs to
    the message, so a section only the conversation matched lifts nothing; and the lift is
    a ratio, so among the notes written then the order stays, and "what did we decide on 3
    November" goes to a note written that day only over those that match nearly as well
    (a note whose state holds the answer is dated by no entry). ``hits`` should be a wide
    pool (``DATE_NOTES``)."""
    if not ranges:
        return hits
    message, _ = split(parsed)
    said = {word for r in ranges for word, _ in query_words(r.phrase)}  # "august", "2024"
    own = dataclasses.replace(message, words=tuple(w for w in message.words
                                                   if w[0] not in said))
    if not own.words:
        return hits
    sections, _ = ladder.search(own, "section", DATE_POOL)  # no context: the message's own
    dated = {h.doc.note_id for h in sections if dated_inside(h.doc.date, ranges)}
    if not dated:
        return hits
    lifted = [dataclasses.replace(h, score=round(h.score * (1 + DATE_SHARE), 2))
              if h.doc.note_id in dated else h for h in hits]
    return sorted(lifted, key=lambda h: -h.score)


def block_routed_notes(ladder: Ladder, parsed: ParsedQuery, pool: int) -> Found[StoredNote]:
    """Notes re-ordered by their BM25F score over the best note's plus ``BLOCK_SHARE`` times
    their best block's score over the best block's: a note whose one paragraph holds the
    message's words together gains on a note that holds them scattered. The blocks are the
    store's ``BLOCK_POOL`` best paragraphs and the headers among its ``BLOCK_POOL`` best
    sections (a note's title, tags and aliases are one block of it: a note reached by its
    names keeps its place whatever language its paragraphs are in, howto/rotate-secrets,
    written in Spanish, for "rotate the database secrets"); a note with no block there adds
    nothing. The n-th note takes the n-th BM25F score, so the scores keep BM25F's spread
    (recall weighs notes by them) and the best note keeps the usual scale."""
    notes, total = ladder.index.run_search(
        lambda searcher: searcher.search_notes(parsed, pool))
    if not notes:
        return notes, total
    paragraphs, _ = ladder.search(parsed, "paragraph", BLOCK_POOL)
    sections, _ = ladder.search(parsed, "section", BLOCK_POOL)
    best: dict[str, float] = {}
    for hit in [*paragraphs, *(h for h in sections if h.doc.section == HEADER)]:
        best[hit.doc.note_id] = max(best.get(hit.doc.note_id, 0.0), hit.score)
    top_note = notes[0].score or 1.0
    top_block = max(best.values(), default=0.0) or 1.0
    mixed = {h.doc.note_id: h.score / top_note
             + BLOCK_SHARE * best.get(h.doc.note_id, 0.0) / top_block for h in notes}
    order = sorted(range(len(notes)), key=lambda n: (-mixed[notes[n].doc.note_id], n))
    hits = [dataclasses.replace(notes[n], score=notes[rank].score)
            for rank, n in enumerate(order)]
    return _own_words(parsed, (hits, total))


def with_feedback(ladder: Ladder, parsed: ParsedQuery) -> ParsedQuery:
    """``parsed`` with RM3-style feedback words: each word of the best paragraphs of a
    first search weighs the sum, over those paragraphs, of its share of the paragraph's
    words times the paragraph's share of their scores; the ``FEEDBACK_TERMS`` heaviest
    words not already in the query join it, the heaviest at ``FEEDBACK_WEIGHT``."""
    hits, _ = ladder.search(parsed, "paragraph", FEEDBACK_DOCS)
    weights = feedback_words(ladder, hits, parsed)
    if not weights:
        return parsed
    top = max(weights.values())
    ranked = sorted(weights.items(), key=lambda kv: (-kv[1], kv[0][1]))[:FEEDBACK_TERMS]
    return dataclasses.replace(parsed, expansion=tuple(
        (word, round(FEEDBACK_WEIGHT * weight / top, 3)) for word, weight in ranked))


def feedback_words(ladder: Ladder, hits: list[SearchHit[StoredPart]],
                   parsed: ParsedQuery) -> dict[tuple[str, str], float]:
    known = {w[1] for w in parsed.words} | {w[1] for w in parsed.context}
    mass = sum(h.score for h in hits) or 1.0
    weights: dict[tuple[str, str], float] = defaultdict(float)
    for hit in hits:
        found = [w for w in _paragraph_words(ladder, hit.doc) if w[1] not in known]
        if not found:
            continue
        share = hit.score / mass / len(found)
        for word in found:
            weights[word] += share
    return dict(weights)


def _paragraph_words(ladder: Ladder, part: StoredPart) -> list[tuple[str, str]]:
    """The paragraph's words (every occurrence, so a word used twice weighs twice)."""
    try:
        lines = split_lines(ladder.load(part.note_id).note.text)
    except NotesError:  # a note gone since it was indexed adds no words
        return []
    start, end = part.lines
    text = "".join(lines[start:end])
    distinct = dict(query_words(text))
    return [(w, distinct[w]) for w in words(text) if w in distinct]


def _own_words(parsed: ParsedQuery, found: Found[StoredNote]) -> Found[StoredNote]:
    """Hits whose matched words leave out the feedback words (they are not the user's)."""
    if not parsed.expansion:
        return found
    extra = {w[0][0] for w in parsed.expansion}
    hits, total = found
    return [dataclasses.replace(h, matched=tuple(m for m in h.matched if m not in extra))
            for h in hits], total
