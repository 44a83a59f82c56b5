"""The promoter: what the usage log says should move from history into the state.

- **Promotion candidates**: history entries read in at least ``min_sessions`` distinct
  sessions within ``days`` days, not yet reflected in the state; each with its counts, the
  questions that reached it, a proposed state line drawn from the entry (a rule of
  :mod:`memory.services.promote_lines`; no LLM), what it would have answered (the questions
  that reached the entry after its first read), its token cost, and an estimate of its
  precision from the log alone (:func:`precision_estimate`).
- **Demotion candidates**: state lines that no question reaching their note has matched (a
  word in common, stemmed as the index stems) within ``demote_days`` (notes reached by at least
  ``MIN_QUESTIONS_FOR_DEMOTION`` questions).
- **Routing misses**: notes that sessions read although the last suggestion did not put
  them first, with the queries that missed and what was read before.

Applying, undoing and demoting are in :mod:`memory.services.promote_apply`.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import defaultdict
from dataclasses import dataclass, field

from memory.api import Notes
from memory.errors import InvalidArgument, NotesError
from memory.index.words import exact_terms
from memory.model.note import Note, Section
from memory.services.promote_lines import (
    DEFAULT_RULE,
    agreeing,
    back_reference,
    line_text,
    proposed_line,
    sentences,
)
from memory.state.usage import DAY_S, Call
from memory.state.usage_rows import is_hashed

MIN_QUESTIONS_FOR_DEMOTION = 3
MIN_SHARED_WORDS = 2  # a question "is held" by a line holding this many of its words


@dataclass(frozen=True)
class Candidate:
    note: str
    entry: str
    title: str
    date: str
    sessions: int
    reads: int
    questions: tuple[str, ...]
    proposed: str
    later: tuple[str, ...] = ()  # questions that reached the entry after its first read
    settled: float = 0.0  # share of the sessions that read it whose read counted
    held: float = 0.0  # share of ``later`` whose words the proposed line holds
    agreeing: int = 0  # questions that came for the line (their best line is the one it carries)
    line_tokens: int = 0  # what the line adds to every read of the state
    state_reads: int = 0  # reads of the note's state in the window
    precision: float = 0.0  # the estimate ``--min-precision`` compares (precision_estimate)


@dataclass(frozen=True)
class Demotion:
    note: str
    line: int  # 1-based line in the file
    text: str
    questions: int  # questions that reached the note in the window


@dataclass(frozen=True)
class RoutingMiss:
    note: str
    misses: int
    sessions: int
    queries: tuple[str, ...]
    read_before: tuple[str, ...]
    ranks: tuple[str, ...]  # where the note stood in the suggestion ("2", "not shown")


@dataclass(frozen=True)
class PromotionReport:
    generated: str
    days: int
    min_sessions: int
    demote_days: int
    calls: int
    sessions: int
    fronts: dict[str, int]
    candidates: tuple[Candidate, ...]
    demotions: tuple[Demotion, ...]
    misses: tuple[RoutingMiss, ...]
    skipped: int = 0  # rows of the log left out for bad values
    damaged: str = ""  # where a log found damaged while reading went ('' if it was not)
    queries: str = "plain"  # how the log keeps queries now (NOTES_USAGE_QUERIES)


COUNTS = ("settled", "all")  # which reads count toward promotion (docs/promotion.md)
RECALL_BATCH_S = 2.0  # reads logged this soon after a recall, same session and query: its own


@dataclass
class _Reads:
    sessions: set[str] = field(default_factory=set)  # sessions whose reads count
    questions: list[str] = field(default_factory=list)  # the questions of those reads
    count: int = 0  # every read
    every: set[str] = field(default_factory=set)  # every session that read it


def build_report(notes: Notes, days: int = 30, min_sessions: int = 3,
                 demote_days: int = 90, now: float | None = None,
                 rule: str = DEFAULT_RULE, counting: str = "settled") -> PromotionReport:
    """Read the usage log and the notes; nothing is written (but a log found damaged is
    moved aside). Rows with bad values are skipped and counted in the report."""
    now = time.time() if now is None else now
    read = notes.usage_read(since=now - max(days, demote_days) * DAY_S)
    if read is None:
        raise InvalidArgument("the usage log is off (NOTES_USAGE_LOG=0); turn it on to promote")
    recent = list(read.calls)
    window = [c for c in recent if c.ts >= now - days * DAY_S]
    fronts: dict[str, int] = defaultdict(int)
    for call in window:
        fronts[call.front] += 1
    return PromotionReport(
        dt.datetime.fromtimestamp(now).isoformat(timespec="seconds"), days, min_sessions,
        demote_days, len(window), len({c.session for c in window}), dict(fronts),
        tuple(_candidates(notes, window, min_sessions, rule, counting)),
        tuple(_demotions(notes, [c for c in recent if c.ts >= now - demote_days * DAY_S])),
        tuple(_routing_misses(window)), read.skipped, read.damaged,
        notes.config.usage_queries)


# -- promotion candidates -----------------------------------------------------------------
def _candidates(notes: Notes, calls: list[Call], min_sessions: int,
                rule: str = DEFAULT_RULE, counting: str = "settled") -> list[Candidate]:
    reads: dict[tuple[str, str], _Reads] = defaultdict(_Reads)
    state_reads: dict[str, int] = defaultdict(int)
    shown = _shown_by_recall(calls)
    unsettled = _unsettled_reads([c for c in calls if c.id not in shown])
    for call in calls:
        if call.rung == "read_section" and call.section:
            if call.section == "state":
                state_reads[call.note] += 1
            seen = reads[(call.note, call.section)]
            seen.every.add(call.session)
            seen.count += 1
            if counting == "settled" and (call.id in shown or call.id in unsettled):
                continue
            seen.sessions.add(call.session)
            if call.query and call.query not in seen.questions:
                seen.questions.append(call.query)
    found = []
    for (note_id, section_id), seen in reads.items():
        if len(seen.sessions) >= min_sessions:
            candidate = _candidate(notes, note_id, section_id, seen, rule,
                                   state_reads[note_id])
            if candidate is not None:
                found.append(candidate)
    return sorted(found, key=lambda c: (-c.sessions, -c.reads, c.note, c.entry))


def _shown_by_recall(calls: list[Call]) -> set[int]:
    """The ids of the reads a ``recall`` logged for the sections it showed, but the first one
    that is not the state: what it put first is its read, the rest came along."""
    out: set[int] = set()
    batch: dict[str, tuple[Call, bool]] = {}  # session -> (its recall, first section seen)
    for call in calls:
        if call.rung == "recall":
            batch[call.session] = (call, False)
            continue
        open_ = batch.get(call.session)
        if open_ is None:
            continue
        recall, first = open_
        if call.rung != "read_section" or call.query != recall.query \
                or call.ts - recall.ts > RECALL_BATCH_S:
            del batch[call.session]
            continue
        if call.section == "state":
            continue
        if first:
            out.add(call.id)
        batch[call.session] = (recall, True)
    return out


def _unsettled_reads(calls: list[Call]) -> set[int]:
    """The ids of read calls that the same session followed, for the same question, with a
    read of another section of the same note (the first read did not settle it)."""
    out: set[int] = set()
    last: dict[tuple[str, str, str], Call] = {}  # (session, note, query) -> its latest read
    for call in calls:
        if call.rung != "read_section" or not call.section or call.section == "state":
            continue
        key = (call.session, call.note, call.query)
        before = last.get(key)
        if before is not None and before.section != call.section:
            out.add(before.id)
        last[key] = call
    return out


def _candidate(notes: Notes, note_id: str, section_id: str, seen: _Reads, rule: str,
               state_reads: int) -> Candidate | None:
    try:
        loaded = notes.load_note(note_id)
    except NotesError:
        return None  # the note is gone or renamed
    entry = loaded.note.section(section_id)
    if entry is None or entry.kind != "entry" or _in_state(loaded.note, entry):
        return None
    terms = notes.stem_terms
    line = proposed_line(entry, seen.questions, rule, terms)
    later = tuple(seen.questions[1:])
    settled = round(len(seen.sessions) / len(seen.every), 4)
    held = held_share(line, later)
    agreed = agreeing(entry, line, seen.questions, terms)
    return Candidate(note_id, entry.id, entry.title, entry.date or "", len(seen.sessions),
                     seen.count, tuple(seen.questions), line, later, settled, held, agreed,
                     notes.count_tokens(line + "\n"), state_reads, precision_estimate(agreed))


def held_share(line: str, questions: tuple[str, ...]) -> float:
    """The share of the (plain) questions whose words ``line`` holds: at least
    ``MIN_SHARED_WORDS`` of them, or all of a shorter question's (0 when none is plain)."""
    words = set(exact_terms(line_text(line)))
    asked = [q for q in (set(exact_terms(t)) for t in questions if t and not is_hashed(t)) if q]
    if not asked:
        return 0.0
    held = sum(len(q & words) >= min(MIN_SHARED_WORDS, len(q)) for q in asked)
    return round(held / len(asked), 4)


def precision_estimate(agreeing: int) -> float:
    """How likely the line is what later questions come for, from the log alone: with ``k``
    questions that came for it, ``k / (k + 1)`` (0, 1/2, 2/3, 3/4, …). Measured on the
    promotion bench (docs/promotion.md): the lines came true for a later question about as
    often, and the share of later questions whose words a line holds, or the share of sessions
    whose read of the entry ended the search, did not tell better lines from worse."""
    return round(agreeing / (agreeing + 1), 4)


def _in_state(note: Note, entry: Section) -> bool:
    """Already promoted (back-reference present) or its key sentence already in the state."""
    state = note.state.text if note.state else ""
    if back_reference(entry) in state:
        return True
    first = sentences(entry)
    key = set(exact_terms(first[0] if first else ""))
    have = set(exact_terms(state))
    return bool(key) and len(key & have) >= 0.8 * len(key)


# -- demotion candidates ------------------------------------------------------------------
def _demotions(notes: Notes, calls: list[Call]) -> list[Demotion]:
    questions: dict[str, set[str]] = defaultdict(set)
    for call in calls:
        reached = set(call.ranked[:1]) | ({call.note} if call.note else set())
        for note_id in reached:
            if call.query and not is_hashed(call.query):  # a digest has no words to match
                questions[note_id].add(call.query)
    found: list[Demotion] = []
    for note_id, asked in sorted(questions.items()):
        if len(asked) >= MIN_QUESTIONS_FOR_DEMOTION:
            found.extend(_unmatched_lines(notes, note_id, asked))
    return found


def _unmatched_lines(notes: Notes, note_id: str, asked: set[str]) -> list[Demotion]:
    try:
        loaded = notes.load_note(note_id)
    except NotesError:
        return []
    state = loaded.note.state
    if state is None:
        return []
    stems = notes.stem_terms
    asked_terms = [stems(q) for q in asked]
    out = []
    for offset, line in enumerate(state.text.splitlines()[1:], start=state.start + 2):
        words = stems(line)
        if words and not line.lstrip().startswith("#") and not any(words & q
                                                                   for q in asked_terms):
            out.append(Demotion(note_id, offset, line.strip(), len(asked)))
    return out


# -- routing misses -----------------------------------------------------------------------
@dataclass
class _Misses:
    count: int = 0
    sessions: set[str] = field(default_factory=set)
    queries: list[str] = field(default_factory=list)
    before: list[str] = field(default_factory=list)
    ranks: list[str] = field(default_factory=list)


def _routing_misses(calls: list[Call]) -> list[RoutingMiss]:
    misses: dict[str, _Misses] = defaultdict(_Misses)
    last: dict[str, tuple[Call, list[str]]] = {}  # session -> (last suggest, notes read since)
    for call in calls:
        if call.rung == "suggest":
            last[call.session] = (call, [])
            continue
        if not call.note or call.session not in last:
            continue
        suggestion, read = last[call.session]
        if call.note in read:
            continue
        if suggestion.ranked[:1] != (call.note,):
            _count_miss(misses[call.note], call, suggestion, read)
        read.append(call.note)
    return sorted((RoutingMiss(n, m.count, len(m.sessions), tuple(m.queries), tuple(m.before),
                               tuple(m.ranks)) for n, m in misses.items()),
                  key=lambda r: (-r.misses, r.note))


def _count_miss(miss: _Misses, call: Call, suggestion: Call, read: list[str]) -> None:
    miss.count += 1
    miss.sessions.add(call.session)
    if suggestion.query not in miss.queries:
        miss.queries.append(suggestion.query)
    miss.before.extend(n for n in read if n not in miss.before)
    rank = suggestion.ranked.index(call.note) + 1 if call.note in suggestion.ranked else 0
    miss.ranks.append(str(rank) if rank else "not shown")
