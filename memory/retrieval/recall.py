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
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from memory.errors import InvalidArgument, NotesError
from memory.index import ParsedQuery, SearchHit, StoredPart, parse_query
from memory.index.words import query_words
from memory.model.note import Block
from memory.model.text import split_lines
from memory.model.timeexpr import (
    asks_across,
    asks_when,
    dated_inside,
    find_ranges,
    mentions_time,
)
from memory.retrieval.filling import (
    Counter,
    Group,
    Recalled,
    Unit,
    add_to,
    groups,
    left_over,
)
from memory.retrieval.ladder import Ladder, Suggestions
from memory.retrieval.levers import Levers
from memory.retrieval.reading import Names, short_ref
from memory.retrieval.zoom import block_ref, own_blocks
from memory.state.store import LoadedNote

if TYPE_CHECKING:
    from memory.retrieval.dense import DenseBlock

__all__ = ["Gathered", "Group", "Recalled", "Unit", "check_budget", "fill", "gather",
           "recall", "spread", "with_neighbours"]
MIN_BUDGET, MAX_BUDGET = 100, 20_000
POOL = 200  # blocks and sections considered
ROUTE_NOTES = 3  # notes whose score lifts their blocks
SECTION_WEIGHT = 0.3  # share of the section's (normalised) score a block adds
NOTE_WEIGHT = 0.2  # share of the note's (normalised) routing score a block adds
DATE_WEIGHT = 0.5  # added to a block whose entry falls inside the question's dates
WHEN_WEIGHT = 0.3  # added, for a "when" question, to a block that carries a time
SPREAD_DECAY = 0.8  # spread lever: a block's score times this per better block of its section
NEIGHBOUR_SHARE = 0.5  # neighbours lever: a block next to a matching one gets this share of
NEIGHBOUR_REACH = 2  # its score per block of distance, up to this many blocks away
REPLY_SHARE = 0.9  # replies lever: the block after one that asks gets this share of it
NAMES_SHARE = 0.5  # names lever: the share of its own score a block matching only title words keeps
RRF_K = 60  # fusion lever: reciprocal rank fusion's constant (the usual one, not tuned here)
STATE_SHARE = 0.35  # the best note's state comes first when it costs at most this share
K = TypeVar("K")


class Read(NamedTuple):
    """A note as one gathering reads it: parsed, its lines, its title's words."""

    loaded: LoadedNote
    lines: list[str]
    title_words: frozenset[str]
    sections: dict[str, tuple[str, int]]  # id -> (short name, blocks), as asked for
    names: list[Names]  # the note's ids for short_ref, made when first asked for

    def section(self, section: str) -> tuple[str, int]:
        """The section's short name (:func:`short_ref`) and how many blocks it has."""
        if section not in self.sections:
            note = self.loaded.note
            found = note.section(section)
            if not self.names:
                self.names.append(Names(note))
            self.sections[section] = (short_ref(note, found, self.names[0]),
                                      len(own_blocks(found, note.sections))) if found \
                else (section, 0)
        return self.sections[section]


Seen = dict[str, Read | None]  # note id -> the note read once per gathering (None: unreadable)


def check_budget(budget: int) -> None:
    if not isinstance(budget, int) or isinstance(budget, bool) or \
            not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise InvalidArgument(f"budget_tokens must be between {MIN_BUDGET} and {MAX_BUDGET}, "
                              f"got {budget!r}")


@dataclass(frozen=True)
class Gathered:
    """What one query routes to and matches, before any budget: the top note and the
    ranked blocks (a bench fills several budgets from one gathering)."""

    query: str
    top_note: str | None
    units: tuple[Unit, ...]


def recall(ladder: Ladder, query: str, budget: int, context: str | None = None,
           today: dt.date | None = None, prior: dict[str, float] | None = None) -> Recalled:
    """The best evidence for ``query`` within ``budget`` tokens (see the module's doc)."""
    check_budget(budget)
    return fill(ladder, gather(ladder, query, context, today, prior), budget)


def gather(ladder: Ladder, query: str, context: str | None = None,
           today: dt.date | None = None, prior: dict[str, float] | None = None,
           hierarchy: bool = True) -> Gathered:
    """Route, then rank the matching blocks; ``hierarchy=False`` ranks blocks by their own
    score alone (the bench's ``recall-flat`` policy, to measure what the hierarchy adds)."""
    parsed = parse_query(query, context)
    routes = ROUTE_NOTES * (2 if ladder.levers.across and asks_across(query) else 1)
    # the notes' own BM25F weighs them (block-route left out): each block is scored itself
    routed = ladder.suggest(query, routes, context, prior=prior, today=today,
                            by_blocks=False)
    if context and _settles(ladder, parsed, routed):  # the message settles its own topic:
        parsed = parse_query(query)  # it is routed and its blocks ranked as if asked directly
        routed = ladder.suggest(query, routes, prior=prior, today=today,
                                by_blocks=False)
    note_scores = _normalised({h.note: h.score for h in routed.hits}) if hierarchy else {}
    levers = ladder.levers
    seen: Seen = {}  # each note read once for the whole gathering
    if hierarchy and levers.fusion:
        units = _fused_units(ladder, parsed, [h.note for h in routed.hits],
                             today or dt.date.today(), seen)
    else:
        units = _ranked_units(ladder, parsed, note_scores, today or dt.date.today(),
                              hierarchy, seen)
    if levers.semantic:
        units = _with_dense(ladder, query, units, note_scores, seen)
    if levers.neighbours or levers.replies:
        units = with_neighbours(ladder, units, seen)
    return Gathered(query, routed.hits[0].note if routed.hits else None, tuple(units))


def _with_dense(ladder: Ladder, query: str, units: list[Unit], note_scores: dict[str, float],
                seen: Seen) -> list[Unit]:
    """The semantic lever in ``recall`` (:mod:`memory.retrieval.dense`): every block of the
    routed notes joins the ranked blocks, and each block gains ``BLOCK_WEIGHT`` times its
    cosine's place among them (0 to 1); a block new to the ranking starts from its note's
    share. Blocks of notes without vectors keep their score."""
    from memory.retrieval.dense import BLOCK_WEIGHT, shares

    reader, asked = ladder.dense(), ladder.router().query_vector(query)
    known = {u.key: u for u in units}
    notes = list(dict.fromkeys([*note_scores, *(u.note for u in units)]))
    candidates = []
    for note in notes:
        read = _loaded(ladder, note, seen)
        if read is None:
            continue
        for block in reader.note_blocks(read.loaded, asked):
            key = (note, block.section, block.number)
            if key in known or note in note_scores:
                candidates.append((key, block, read))
    lifted = dict(known)
    for (key, block, read), share in zip(candidates, shares([c[1].cosine for c in candidates]),
                                         strict=True):
        unit = known.get(key) or _block_unit(ladder, block, read,
                                             NOTE_WEIGHT * note_scores.get(key[0], 0.0))
        if unit is not None:
            lifted[key] = dataclasses.replace(unit, score=unit.score + BLOCK_WEIGHT * share)
    return sorted(lifted.values(), key=lambda u: -u.score)


def _block_unit(ladder: Ladder, block: DenseBlock, read: Read, score: float) -> Unit | None:
    section = read.loaded.note.section(block.section)
    if section is None:
        return None
    text = "".join(read.lines[block.start:block.end])
    return Unit(block.note, block.section, block.number, section.date, block.start, text,
                ladder.count(text, remember=False), score, *read.section(block.section))


def _settles(ladder: Ladder, parsed: ParsedQuery, routed: Suggestions) -> bool:
    """Whether the message settles its own topic despite its context: ``suggest`` found the
    note it settles on, or the note routed first is one the message names."""
    if routed.settled is not None:
        return True
    return bool(routed.hits) and ladder.names_note(routed.hits[0].note,
                                                   [w[1] for w in parsed.words])


def fill(ladder: Ladder, gathered: Gathered, budget: int) -> Recalled:
    """The answer within ``budget``, built on the answer within ``budget // 2``
    (:mod:`memory.retrieval.filling`): more budget never shows less."""
    check_budget(budget)
    count = _counter(ladder)
    state = _state_unit(ladder, gathered.top_note)
    picked, ranked = _picks(ladder, gathered, state, budget, count)
    shown = groups(picked, count)
    left = left_over(picked, ranked)
    nxt = left[0] if left else None
    return Recalled(gathered.query, budget, tuple(shown), sum(g.tokens for g in shown),
                    len(left), sum(u.tokens for u in left),
                    f"{nxt.note}#{block_ref(nxt.section, nxt.block)}" if nxt else None,
                    nxt.tokens if nxt else 0, f"{nxt.note}#{nxt.ref}" if nxt else None)


def _picks(ladder: Ladder, gathered: Gathered, state: Unit | None, budget: int,
           count: Counter) -> tuple[list[Unit], list[Unit]]:
    """What ``budget`` shows, in the order picked, and the ranking it was picked from."""
    smaller = budget // 2
    base = _picks(ladder, gathered, state, smaller, count)[0] if smaller >= MIN_BUDGET else []
    units = list(gathered.units)
    if ladder.levers.spread or (ladder.levers.across and asks_across(gathered.query)):
        units = spread(units, budget // 2)
    fits = state is not None and state.tokens <= STATE_SHARE * budget
    return add_to(base, state if fits else None, units, budget, count), units


def _counter(ladder: Ladder) -> Counter:
    return lambda text: ladder.count(text, remember=False)


def _ranked_units(ladder: Ladder, parsed: ParsedQuery, note_scores: dict[str, float],
                  today: dt.date, hierarchy: bool, seen: Seen) -> list[Unit]:
    blocks, _ = ladder.search(parsed, "paragraph", POOL)
    sections, _ = ladder.search(parsed, "section", POOL)
    section_scores = _normalised({(h.doc.note_id, h.doc.section): h.score
                                  for h in sections}) if hierarchy else {}
    best_block = max((h.score for h in blocks), default=1.0) or 1.0
    ranges = find_ranges(parsed.text, today)
    when = asks_when(parsed.text)
    units = []
    for hit in blocks:
        note, section = hit.doc.note_id, hit.doc.section
        own = hit.score / best_block
        if ladder.levers.names and _names_only(ladder, hit, seen):
            own *= NAMES_SHARE
        score = own + SECTION_WEIGHT * section_scores.get((note, section), 0)
        score += NOTE_WEIGHT * note_scores.get(note, 0.0)
        if dated_inside(hit.doc.date, ranges):
            score += DATE_WEIGHT
        read = _loaded(ladder, note, seen)
        if read is None:
            continue  # the note went away or became unreadable since it was indexed
        unit = _unit(ladder, hit, score, read)
        if when and mentions_time(unit.text):
            unit = dataclasses.replace(unit, score=unit.score + WHEN_WEIGHT)
        units.append(unit)
    return sorted(units, key=lambda u: -u.score)


def _fused_units(ladder: Ladder, parsed: ParsedQuery, routed: list[str],
                 today: dt.date, seen: Seen) -> list[Unit]:
    """Blocks ranked by reciprocal rank fusion (the fusion lever): the sum of
    ``1 / (RRF_K + rank)`` over the block's own rank among the store's blocks, its section's
    among the sections, its note's among the routed notes, and, for a block whose entry lies
    inside the question's dates (or that carries a time, for a "when" question), rank 1 of
    that signal. A signal the block is absent from adds nothing."""
    blocks, _ = ladder.search(parsed, "paragraph", POOL)
    sections, _ = ladder.search(parsed, "section", POOL)
    section_rank = {(h.doc.note_id, h.doc.section): r
                    for r, h in reversed(list(enumerate(sections, start=1)))}
    note_rank = {note: r for r, note in enumerate(routed, start=1)}
    ranges = find_ranges(parsed.text, today)
    when = asks_when(parsed.text)
    units = []
    for rank, hit in enumerate(blocks, start=1):
        note, section = hit.doc.note_id, hit.doc.section
        read = _loaded(ladder, note, seen)
        if read is None:
            continue
        ranks = [rank, section_rank.get((note, section)), note_rank.get(note)]
        unit = _unit(ladder, hit, 0.0, read)
        if dated_inside(hit.doc.date, ranges):
            ranks.append(1)
        if when and mentions_time(unit.text):
            ranks.append(1)
        score = sum(1 / (RRF_K + r) for r in ranks if r is not None)
        units.append(dataclasses.replace(unit, score=score))
    return sorted(units, key=lambda u: -u.score)


def spread(units: list[Unit], head_tokens: int) -> list[Unit]:
    """Units re-ranked so the second half of the budget spreads across sections (the
    spread lever): the best blocks worth ``head_tokens`` keep their order; after them, each
    better-ranked block of the same section multiplies a block's score by ``SPREAD_DECAY``,
    so the next block of the best session competes with the best block of the next one
    (ranks within a section keep their order)."""
    seen: dict[tuple[str, str], int] = defaultdict(int)
    head: list[Unit] = []
    tail: list[Unit] = []
    used = 0
    for unit in units:  # best first
        key = (unit.note, unit.section)
        if not tail and used + unit.tokens <= head_tokens:
            head.append(unit)
            used += unit.tokens
        else:
            tail.append(dataclasses.replace(unit, score=unit.score
                                            * SPREAD_DECAY ** seen[key]))
        seen[key] += 1
    return head + sorted(tail, key=lambda u: -u.score)


def with_neighbours(ladder: Ladder, units: list[Unit], seen: Seen) -> list[Unit]:
    """Units re-ranked with their neighbours (the neighbours lever): each block ``d`` blocks
    away (``d`` up to ``NEIGHBOUR_REACH``, in the same section) from a ranked block scores at
    least ``NEIGHBOUR_SHARE ** d`` times that block's score, joining the ranking when it did
    not match at all; with the replies lever, the block after one that asks scores
    ``REPLY_SHARE`` of it (:func:`_neighbour_shares`). A reply often shares no word with the
    question its line answers."""
    best: dict[tuple[str, str, int], Unit] = {(u.note, u.section, u.block): u for u in units}
    sections: dict[tuple[str, str], tuple[Block, ...]] = {}
    for unit in units:
        if unit.block == 0:
            continue
        where = (unit.note, unit.section)
        if where not in sections:
            sections[where] = _section_blocks(_loaded(ladder, unit.note, seen), unit.section)
        blocks = sections[where]
        for number, share in _neighbour_shares(ladder.levers, unit, len(blocks)):
            score = unit.score * share
            key = (unit.note, unit.section, number)
            known = best.get(key)
            if known is None:
                text = blocks[number - 1].text
                best[key] = Unit(unit.note, unit.section, number, unit.date,
                                 blocks[number - 1].start, text,
                                 ladder.count(text, remember=False), score, unit.short,
                                 unit.of)
            elif known.score < score:
                best[key] = dataclasses.replace(known, score=score)
    return sorted(best.values(), key=lambda u: -u.score)


def _neighbour_shares(levers: Levers, unit: Unit, count: int) -> list[tuple[int, float]]:
    """The blocks of ``unit``'s section (numbered 1 to ``count``) that take a share of its
    score: with ``neighbours``, those up to ``NEIGHBOUR_REACH`` away (``NEIGHBOUR_SHARE`` per
    block of distance); with ``replies``, when the unit asks something, the next block at
    ``REPLY_SHARE``."""
    shares: dict[int, float] = {}
    if levers.neighbours:
        for distance in range(1, NEIGHBOUR_REACH + 1):
            for number in (unit.block - distance, unit.block + distance):
                shares[number] = NEIGHBOUR_SHARE ** distance
    if levers.replies and _asks(unit.text):
        shares[unit.block + 1] = max(shares.get(unit.block + 1, 0.0), REPLY_SHARE)
    return [(n, share) for n, share in sorted(shares.items()) if 1 <= n <= count]


def _asks(text: str) -> bool:
    """Whether a block asks something near its end (a question mark in its last 200
    characters)."""
    body = text.rstrip()
    return "?" in body[max(0, len(body) - 200):]


def _section_blocks(read: Read | None, section: str) -> tuple[Block, ...]:
    if read is None:
        return ()
    found = read.loaded.note.section(section)
    return own_blocks(found, read.loaded.note.sections) if found else ()


def _names_only(ladder: Ladder, hit: SearchHit[StoredPart], seen: Seen) -> bool:
    """Whether the block matched only words of its note's title (the names lever): the
    speakers' names in a conversation, the topic a note is named for. Those words chose
    the note; inside it they tell one block from another no better than chance."""
    read = _loaded(ladder, hit.doc.note_id, seen)
    return read is not None and bool(hit.matched) and set(hit.matched) <= read.title_words


def _loaded(ladder: Ladder, note: str, seen: Seen) -> Read | None:
    """The note and its lines, read once per gathering (None: gone or unreadable since it
    was indexed)."""
    if note not in seen:
        try:
            loaded = ladder.load(note)
            seen[note] = Read(loaded, split_lines(loaded.note.text),
                              frozenset(w for w, _ in query_words(loaded.note.title)), {}, [])
        except NotesError:
            seen[note] = None
    return seen[note]


def _unit(ladder: Ladder, hit: SearchHit[StoredPart], score: float, read: Read) -> Unit:
    start, end = hit.doc.lines
    text = "".join(read.lines[start:end])
    return Unit(hit.doc.note_id, hit.doc.section, hit.doc.block, hit.doc.date, start, text,
                ladder.count(text, remember=False), score, *read.section(hit.doc.section))


def _state_unit(ladder: Ladder, note: str | None) -> Unit | None:
    if note is None:
        return None
    try:
        parsed = ladder.load(note).note
    except NotesError:
        return None  # the note went away since it was routed: no state to show
    state = parsed.lead
    if state is None:
        return None
    return Unit(note, state.id, 0, None, state.start, state.text, ladder.count(state.text),
                float("inf"), short_ref(parsed, state))


def _normalised(scores: dict[K, float]) -> dict[K, float]:
    top = max(scores.values(), default=0.0)
    return {k: v / top for k, v in scores.items()} if top > 0 else {}
