"""Rung 1, ``suggest``: notes ranked by BM25F over title, tags, state and body, as a
pipeline of named steps over a :class:`memory.retrieval.reader.Reader`.

1. **parse** the message with its context (recent conversation) and bring the index up to
   date; the pool of notes to rank is ``limit`` plus the session prior's notes, or what a
   stage that is on asks for (``pool``);
2. **search** each part of the query (the message, its context) apart and blend them
   (:func:`memory.retrieval.context.blended_search`): each part's query as the stages
   ``expand`` it, its notes as the first stage that ``route``\\ s them gives, else BM25F;
3. **keep named first**: a note the message names is never passed by one that scores lower
   on the message alone (:func:`memory.retrieval.context.keep_named_first`);
4. the stages that ``lift`` notes (the dates lever);
5. **prior**: the notes this session has been reading (1.0 for the latest) gain a share of
   the best score (:func:`memory.retrieval.context.with_prior`);
6. the stages that ``rerank`` notes (coverage, semantic);
7. **settle**: the note the message settles on despite its context stays first
   (:func:`memory.retrieval.context.settled_note`).

The stages are the levers that are on (:mod:`memory.retrieval.stages`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt

from memory.errors import InvalidArgument
from memory.index import Found, ParsedQuery, StoredNote, parse_query
from memory.retrieval.context import (
    blended_search,
    keep_ahead,
    keep_named_first,
    mentions,
    settled_note,
    with_prior,
)
from memory.retrieval.reader import Reader
from memory.retrieval.results import SuggestHit, Suggestions
from memory.retrieval.stages import acting
from memory.retrieval.stages.base import Ask

MAX_LIMIT = 50


def suggest(reader: Reader, query: str, limit: int = 5, context: str | None = None,
            prior: dict[str, float] | None = None, today: dt.date | None = None,
            by_blocks: bool = True) -> Suggestions:
    """The notes for ``query`` (see the module's doc). ``by_blocks=False`` leaves out the
    stages that score a note by its best block or line (block-route, coverage): ``recall``
    scores every block itself (a note's best block would count twice), and the hook has no
    time for block-route's two store-wide searches nor for reading its candidates."""
    check_limit(limit)
    ask = Ask(query, parse_query(query, context), limit, prior or {},
              today or dt.date.today(), by_blocks)
    on = reader.levers.chosen()
    reader.freshen()
    pool = max([limit + len(ask.prior),
                *(stage.pool(reader, ask) for stage in acting(on, "pool"))])
    parsed = ask.parsed
    found = blended_search(lambda part, size: _route(reader, ask, part, size or pool),
                           parsed, pool, keep_own=True)
    words = [w[1] for w in parsed.words]
    titles = {hit.doc.note_id: hit.doc.title for hit in found.hits}
    hits = keep_named_first(found.hits, found.message, lambda note: reader.names(
        note, words, titles=titles), limit)
    ranked = hits
    for stage in acting(on, "lift"):
        ranked = stage.lift(reader, ask, ranked)
    ranked = with_prior(ranked, dict(ask.prior), len(parsed.words), reader.note_fields)
    for stage in acting(on, "rerank"):
        ranked = stage.rerank(reader, ask, ranked)
    settled = settled_note(found.message, lambda note: reader.names(
        note, words, mentions, titles)) if parsed.context or prior else None
    if settled is not None:
        ranked = keep_ahead(ranked, found.message, {settled})
    total = found.total + len(ranked) - len(hits)  # notes the prior added count too
    return Suggestions(query, tuple(_suggest_hit(h.doc, h.score, h.matched)
                                    for h in ranked[:limit]), total,
                       tuple(dict.fromkeys(w[0] for w in parsed.words)), settled)


def _route(reader: Reader, ask: Ask, part: ParsedQuery, pool: int) -> Found[StoredNote]:
    """The notes for one part of the query, best first: as the stages ``expand`` and
    ``route`` it, else by BM25F."""
    on = reader.levers.chosen()
    for stage in acting(on, "expand"):
        part = stage.expand(reader, part)
    for stage in acting(on, "route"):
        routed = stage.route(reader, ask, part, pool)
        if routed is not None:
            return own_words(part, routed)
    return own_words(part, reader.search_notes(part, pool))


def own_words(parsed: ParsedQuery, found: Found[StoredNote]) -> Found[StoredNote]:
    """Hits whose matched words leave out the words a stage added (they are not the
    user's)."""
    if not parsed.expansion:
        return found
    extra = {w[0][0] for w in parsed.expansion}
    hits, total = found
    return [dataclasses.replace(h, matched=tuple(m for m in h.matched if m not in extra))
            for h in hits], total


def check_limit(limit: int) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}, got {limit!r}")


def _suggest_hit(stored: StoredNote, score: float, matched: tuple[str, ...]) -> SuggestHit:
    return SuggestHit(stored.note_id, stored.title, round(score, 2), stored.state_tokens,
                      stored.tokens, matched)
