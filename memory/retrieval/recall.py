"""The budgeted rung: the best evidence that fits a token budget, in one call.

``recall(query, budget)`` routes like ``suggest`` (the top notes, with the conversation as
low-weight context), then fills the budget: the best note's state first when it is small
enough, then blocks (paragraphs, list items) from the whole store ranked by a hierarchical
score: the block's own BM25 score plus shares of its section's and its note's (evidence
clusters in a note and an entry), plus a share when its entry is dated inside the question's
time expression. The budget is filled so that more budget never shows less, and what is
picked is shown grouped by note and section under short labels
(:mod:`memory.retrieval.filling`); the last line says how many matching blocks were left
out (the result also has the next one and its cost).

It is a pipeline over a :class:`memory.retrieval.reader.Reader`: :func:`gather` routes and
ranks (its steps in its doc), :func:`fill` picks what fits; the levers that are on act at
their points (:mod:`memory.retrieval.stages`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from memory.errors import InvalidArgument, NotesError
from memory.index import ParsedQuery, parse_query
from memory.model.timeexpr import asks_when, dated_inside, find_ranges, mentions_time
from memory.retrieval.blocks import POOL, Seen, loaded, section_blocks, unit
from memory.retrieval.filling import (
    Counter,
    Group,
    Grouped,
    Recalled,
    Unit,
    add_to,
    left_over,
)
from memory.retrieval.reader import Reader
from memory.retrieval.reading import short_ref
from memory.retrieval.results import Suggestions
from memory.retrieval.stages import acting
from memory.retrieval.stages.base import Stage
from memory.retrieval.suggest import suggest
from memory.retrieval.zoom import block_ref

if TYPE_CHECKING:
    from memory.model.note import Block

__all__ = ["POOL", "Gathered", "Group", "Recalled", "Unit", "check_budget", "fill", "gather",
           "recall", "spread", "with_neighbours"]
MIN_BUDGET, MAX_BUDGET = 100, 20_000
ROUTE_NOTES = 3  # notes whose score lifts their blocks
SECTION_WEIGHT = 0.3  # share of the section's (normalised) score a block adds
NOTE_WEIGHT = 0.2  # share of the note's (normalised) routing score a block adds
DATE_WEIGHT = 0.5  # added to a block whose entry falls inside the question's dates
WHEN_WEIGHT = 0.3  # added, for a "when" question, to a block that carries a time
SPREAD_DECAY = 0.8  # a spread block's score times this per better block of its section
STATE_SHARE = 0.35  # the best note's state comes first when it costs at most this share
K = TypeVar("K")


def check_budget(budget: int) -> None:
    if not isinstance(budget, int) or isinstance(budget, bool) or \
            not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise InvalidArgument(f"budget_tokens must be between {MIN_BUDGET} and {MAX_BUDGET}, "
                              f"got {budget!r}")


@dataclass(frozen=True)
class Gathered:
    """What one query routes to and matches, before any budget: the top note and the
    ranked blocks (a bench fills several budgets from one gathering). ``counted``: the
    token counts its fills took (:func:`_counter`)."""

    query: str
    top_note: str | None
    units: tuple[Unit, ...]
    counted: dict[str, int] = field(default_factory=dict, compare=False, repr=False)


def recall(reader: Reader, query: str, budget: int, context: str | None = None,
           today: dt.date | None = None, prior: dict[str, float] | None = None) -> Recalled:
    """The best evidence for ``query`` within ``budget`` tokens (see the module's doc)."""
    check_budget(budget)
    return fill(reader, gather(reader, query, context, today, prior), budget)


def gather(reader: Reader, query: str, context: str | None = None,
           today: dt.date | None = None, prior: dict[str, float] | None = None,
           hierarchy: bool = True) -> Gathered:
    """Route, then rank the matching blocks; ``hierarchy=False`` ranks blocks by their own
    score alone (the bench's ``recall-flat`` policy, to measure what the hierarchy adds).
    The steps: **route** (``suggest`` without the stages that score a note by its best
    block, for as many notes as the ``routes`` stages ask), **settle** (a message that
    settles its own topic is routed and ranked as if asked directly), **rank** (a ``rank``
    stage's ranking, else the hierarchical score, each block's own score as the ``weigh``
    stages make it), the ``widen`` stages, and **neighbours** (the blocks around a ranked
    one, as the ``shares`` stages give them)."""
    on = reader.levers.chosen()
    parsed = parse_query(query, context)
    routes = ROUTE_NOTES
    for stage in acting(on, "routes"):
        routes = stage.routes(query, routes)
    # the notes' own BM25F weighs them (block-route left out): each block is scored itself
    routed = suggest(reader, query, routes, context, prior=prior, today=today,
                     by_blocks=False)
    if context and _settles(reader, parsed, routed):  # the message settles its own topic:
        parsed = parse_query(query)  # it is routed and its blocks ranked as if asked directly
        routed = suggest(reader, query, routes, prior=prior, today=today, by_blocks=False)
    note_scores = _normalised({h.note: h.score for h in routed.hits}) if hierarchy else {}
    seen: Seen = {}  # each note read once for the whole gathering
    day = today or dt.date.today()
    units = None
    for stage in acting(on, "rank") if hierarchy else ():
        units = stage.rank(reader, parsed, [h.note for h in routed.hits], day, seen)
        if units is not None:
            break
    if units is None:
        units = _ranked_units(reader, parsed, note_scores, day, hierarchy, seen,
                              acting(on, "weigh"))
    for stage in acting(on, "widen"):
        units = stage.widen(reader, query, units, note_scores, seen)
    sharing = acting(on, "shares")
    if sharing:
        units = with_neighbours(reader, units, seen, sharing)
    return Gathered(query, routed.hits[0].note if routed.hits else None, tuple(units))


def _settles(reader: Reader, parsed: ParsedQuery, routed: Suggestions) -> bool:
    """Whether the message settles its own topic despite its context: ``suggest`` found the
    note it settles on, or the note routed first is one the message names."""
    if routed.settled is not None:
        return True
    return bool(routed.hits) and reader.names(routed.hits[0].note,
                                              [w[1] for w in parsed.words])


def fill(reader: Reader, gathered: Gathered, budget: int) -> Recalled:
    """The answer within ``budget``, built on the answer within ``budget // 2``
    (:mod:`memory.retrieval.filling`): more budget never shows less."""
    check_budget(budget)
    grouped = Grouped(_counter(reader, gathered.counted))
    state = _state_unit(reader, gathered.top_note)
    spreads = any(stage.spreads(gathered.query)
                  for stage in acting(reader.levers.chosen(), "spreads"))
    picked, ranked = _picks(gathered, state, budget, grouped, spreads)
    shown = grouped(picked)
    left = left_over(picked, ranked)
    nxt = left[0] if left else None
    return Recalled(gathered.query, budget, tuple(shown), sum(g.tokens for g in shown),
                    len(left), sum(u.tokens for u in left),
                    f"{nxt.note}#{block_ref(nxt.section, nxt.block)}" if nxt else None,
                    nxt.tokens if nxt else 0, f"{nxt.note}#{nxt.ref}" if nxt else None)


def _picks(gathered: Gathered, state: Unit | None, budget: int, grouped: Grouped,
           spreads: bool) -> tuple[list[Unit], list[Unit]]:
    """What ``budget`` shows, in the order picked, and the ranking it was picked from
    (its second half spread across sections when a ``spreads`` stage asks)."""
    smaller = budget // 2
    base = _picks(gathered, state, smaller, grouped, spreads)[0] \
        if smaller >= MIN_BUDGET else []
    units = list(gathered.units)
    if spreads:
        units = spread(units, budget // 2)
    fits = state is not None and state.tokens <= STATE_SHARE * budget
    return add_to(base, state if fits else None, units, budget, grouped), units


def _counter(reader: Reader, counted: dict[str, int]) -> Counter:
    """Token counts for one gathering's answers, each text counted once (kept in
    ``counted``): the labels a fill weighs for every ranked block recur at each smaller
    budget it is built on, and at each budget a bench fills from the same gathering. They
    are not kept in the store's token cache (``remember=False``): a count kept here for the
    gathering saves hashing the text and looking it up there again at every fill."""

    def count(text: str) -> int:
        known = counted.get(text)
        if known is None:
            known = counted[text] = reader.count(text, remember=False)
        return known

    return count


def _ranked_units(reader: Reader, parsed: ParsedQuery, note_scores: dict[str, float],
                  today: dt.date, hierarchy: bool, seen: Seen,
                  weighing: list[Stage]) -> list[Unit]:
    blocks, _ = reader.search(parsed, "paragraph", POOL)
    sections, _ = reader.search(parsed, "section", POOL)
    section_scores = _normalised({(h.doc.note_id, h.doc.section): h.score
                                  for h in sections}) if hierarchy else {}
    best_block = max((h.score for h in blocks), default=1.0) or 1.0
    ranges = find_ranges(parsed.text, today)
    when = asks_when(parsed.text)
    units = []
    for hit in blocks:
        note, section = hit.doc.note_id, hit.doc.section
        own = hit.score / best_block
        for stage in weighing:
            own = stage.weigh(reader, hit, seen, own)
        score = own + SECTION_WEIGHT * section_scores.get((note, section), 0)
        score += NOTE_WEIGHT * note_scores.get(note, 0.0)
        if dated_inside(hit.doc.date, ranges):
            score += DATE_WEIGHT
        read = loaded(reader, note, seen)
        if read is None:
            continue  # the note went away or became unreadable since it was indexed
        found = unit(reader, hit, score, read)
        if when and mentions_time(found.text):
            found = dataclasses.replace(found, score=found.score + WHEN_WEIGHT)
        units.append(found)
    return sorted(units, key=lambda u: -u.score)


def spread(units: list[Unit], head_tokens: int) -> list[Unit]:
    """Units re-ranked so the second half of the budget spreads across sections (the
    spread and across levers): the best blocks worth ``head_tokens`` keep their order;
    after them, each better-ranked block of the same section multiplies a block's score by
    ``SPREAD_DECAY``, so the next block of the best session competes with the best block of
    the next one (ranks within a section keep their order)."""
    seen: dict[tuple[str, str], int] = defaultdict(int)
    head: list[Unit] = []
    tail: list[Unit] = []
    used = 0
    for ranked in units:  # best first
        key = (ranked.note, ranked.section)
        if not tail and used + ranked.tokens <= head_tokens:
            head.append(ranked)
            used += ranked.tokens
        else:
            tail.append(dataclasses.replace(ranked, score=ranked.score
                                            * SPREAD_DECAY ** seen[key]))
        seen[key] += 1
    return head + sorted(tail, key=lambda u: -u.score)


def with_neighbours(reader: Reader, units: list[Unit], seen: Seen,
                    sharing: list[Stage]) -> list[Unit]:
    """Units re-ranked with the blocks around them (the neighbours and replies levers): each
    block of a ranked block's section that a stage in ``sharing`` gives a share of it
    (:meth:`Stage.shares`; the highest share wins) scores at least that share of the
    block's score, joining the ranking when it did not match at all. A reply often shares
    no word with the question its line answers."""
    best: dict[tuple[str, str, int], Unit] = {(u.note, u.section, u.block): u for u in units}
    sections: dict[tuple[str, str], tuple[Block, ...]] = {}
    for ranked in units:
        if ranked.block == 0:
            continue
        where = (ranked.note, ranked.section)
        if where not in sections:
            sections[where] = section_blocks(loaded(reader, ranked.note, seen), ranked.section)
        blocks = sections[where]
        for number, share in _shares(sharing, ranked, len(blocks)):
            score = ranked.score * share
            key = (ranked.note, ranked.section, number)
            known = best.get(key)
            if known is None:
                text = blocks[number - 1].text
                best[key] = Unit(ranked.note, ranked.section, number, ranked.date,
                                 blocks[number - 1].start, text,
                                 reader.count(text, remember=False), score, ranked.short,
                                 ranked.of)
            elif known.score < score:
                best[key] = dataclasses.replace(known, score=score)
    return sorted(best.values(), key=lambda u: -u.score)


def _shares(sharing: list[Stage], ranked: Unit, count: int) -> list[tuple[int, float]]:
    """The blocks of ``ranked``'s section (numbered 1 to ``count``) that take a share of its
    score, in block order: the highest share any stage gives each."""
    shares: dict[int, float] = {}
    for stage in sharing:
        for number, share in stage.shares(ranked).items():
            shares[number] = max(shares.get(number, 0.0), share)
    return [(n, share) for n, share in sorted(shares.items()) if 1 <= n <= count]


def _state_unit(reader: Reader, note: str | None) -> Unit | None:
    if note is None:
        return None
    try:
        parsed = reader.load(note).note
    except NotesError:
        return None  # the note went away since it was routed: no state to show
    state = parsed.lead
    if state is None:
        return None
    return Unit(note, state.id, 0, None, state.start, state.shown, reader.count(state.shown),
                float("inf"), short_ref(parsed, state))


def _normalised(scores: dict[K, float]) -> dict[K, float]:
    top = max(scores.values(), default=0.0)
    return {k: v / top for k, v in scores.items()} if top > 0 else {}
