"""The promoter: what the usage log says should move from history into the state.

- **Promotion candidates**: history entries read in at least ``min_sessions`` distinct
  sessions within ``days`` days, not yet reflected in the state; each with its counts, the
  questions that reached it, and a proposed state line drawn from the entry (the sentence
  that shares most words with those questions; no LLM).
- **Demotion candidates**: state lines that no question reaching their note has matched
  within ``demote_days`` (notes reached by at least ``MIN_QUESTIONS_FOR_DEMOTION`` questions).
- **Routing misses**: notes that sessions read although the last suggestion did not put
  them first, with the queries that missed and what was read before.

``apply_promotion`` writes a line into the state with a back-reference to the entry
(``(history: <entry id>)``); the history stays byte-identical and a second run adds nothing.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field

from memory.api import Notes
from memory.errors import InvalidArgument, NotesError
from memory.index.words import exact_terms
from memory.model.note import Note, Section
from memory.retrieval.reading import resolve_section
from memory.state.store import LoadedNote
from memory.state.usage import DAY_S, Call
from memory.state.usage_rows import is_hashed

MIN_QUESTIONS_FOR_DEMOTION = 3
MAX_LINE_CHARS = 220
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-ZÁÉÍÓÚÑ¿¡`\"(])")
_MARKUP = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+|`{3}.*$")


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


@dataclass
class _Reads:
    sessions: set[str] = field(default_factory=set)
    questions: list[str] = field(default_factory=list)
    count: int = 0


def build_report(notes: Notes, days: int = 30, min_sessions: int = 3,
                 demote_days: int = 90, now: float | None = None) -> PromotionReport:
    """Read the usage log and the notes; nothing is written (but a log found damaged is
    moved aside). Rows with bad values are skipped and counted in the report."""
    if notes.usage is None:
        raise InvalidArgument("the usage log is off (NOTES_USAGE_LOG=0); turn it on to promote")
    now = time.time() if now is None else now
    read = notes.usage.read(since=now - max(days, demote_days) * DAY_S)
    recent = list(read.calls)
    window = [c for c in recent if c.ts >= now - days * DAY_S]
    fronts: dict[str, int] = defaultdict(int)
    for call in window:
        fronts[call.front] += 1
    return PromotionReport(
        dt.datetime.fromtimestamp(now).isoformat(timespec="seconds"), days, min_sessions,
        demote_days, len(window), len({c.session for c in window}), dict(fronts),
        tuple(_candidates(notes, window, min_sessions)),
        tuple(_demotions(notes, [c for c in recent if c.ts >= now - demote_days * DAY_S])),
        tuple(_routing_misses(window)), read.skipped, read.damaged, notes.usage.queries)


# -- promotion candidates -----------------------------------------------------------------
def _candidates(notes: Notes, calls: list[Call], min_sessions: int) -> list[Candidate]:
    reads: dict[tuple[str, str], _Reads] = defaultdict(_Reads)
    for call in calls:
        if call.rung == "read_section" and call.section:
            seen = reads[(call.note, call.section)]
            seen.sessions.add(call.session)
            seen.count += 1
            if call.query and call.query not in seen.questions:
                seen.questions.append(call.query)
    found = []
    for (note_id, section_id), seen in reads.items():
        if len(seen.sessions) >= min_sessions:
            candidate = _candidate(notes, note_id, section_id, seen)
            if candidate is not None:
                found.append(candidate)
    return sorted(found, key=lambda c: (-c.sessions, -c.reads, c.note, c.entry))


def _candidate(notes: Notes, note_id: str, section_id: str, seen: _Reads) -> Candidate | None:
    try:
        loaded = notes.store.load(note_id)
    except NotesError:
        return None  # the note is gone or renamed
    entry = loaded.note.section(section_id)
    if entry is None or entry.kind != "entry" or _in_state(loaded.note, entry):
        return None
    return Candidate(note_id, entry.id, entry.title, entry.date or "", len(seen.sessions),
                     seen.count, tuple(seen.questions), proposed_line(entry, seen.questions))


def back_reference(entry: Section) -> str:
    return f"(history: {entry.id})"


def _in_state(note: Note, entry: Section) -> bool:
    """Already promoted (back-reference present) or its key sentence already in the state."""
    state = note.state.text if note.state else ""
    if back_reference(entry) in state:
        return True
    key = set(exact_terms(_sentences(entry)[0] if _sentences(entry) else ""))
    have = set(exact_terms(state))
    return bool(key) and len(key & have) >= 0.8 * len(key)


def proposed_line(entry: Section, questions: list[str] | tuple[str, ...]) -> str:
    """The entry's sentence that shares most words with the questions, as a state line."""
    sentences = _sentences(entry) or [entry.title]
    asked = set()
    for question in questions:
        if not is_hashed(question):
            asked |= set(exact_terms(question))
    best = max(sentences, key=lambda s: (len(set(exact_terms(s)) & asked),
                                         -sentences.index(s)))
    if len(best) > MAX_LINE_CHARS:
        best = best[:MAX_LINE_CHARS].rsplit(" ", 1)[0] + "…"
    return f"- {best} {back_reference(entry)}"


def _sentences(entry: Section) -> list[str]:
    body = entry.text.split("\n", 1)[1] if "\n" in entry.text else ""
    out: list[str] = []
    in_fence = False
    for raw in body.splitlines():
        if raw.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        line = _MARKUP.sub("", raw).strip()
        if line and not in_fence:
            out.extend(s.strip() for s in _SENTENCE.split(line) if s.strip())
    return out


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
        loaded = notes.store.load(note_id)
    except NotesError:
        return []
    state = loaded.note.state
    if state is None:
        return []
    asked_terms = [set(exact_terms(q)) for q in asked]
    out = []
    for offset, line in enumerate(state.text.splitlines()[1:], start=state.start + 2):
        words = set(exact_terms(line))
        if words and not line.lstrip().startswith("#") and not any(
                len(words & q) >= min(2, len(words)) for q in asked_terms):
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


# -- applying -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Applied:
    note: str
    entry: str
    line: str
    changed: bool
    before: str
    after: str


def apply_promotion(notes: Notes, note_id: str, entry_ref: str, line: str | None = None,
                    dry_run: bool = False, days: int = 30) -> Applied:
    """Add the entry's line to the state (once); the history is left byte-identical. The
    note is read, changed and written under its lock, and replaced only if no editor saved
    it meanwhile (:meth:`Notes.update_state`)."""
    from memory.model.edit import with_state

    loaded = notes.store.load(note_id)
    entry = resolve_section(loaded, entry_ref, notes.counter)
    if entry.kind != "entry":
        raise InvalidArgument(f"{entry.id!r} is a {entry.kind}, not a history entry; give an "
                              "entry id (see `notes map " + loaded.note_id + "`)")
    questions = _questions_for(notes, loaded, entry, days)
    seen: dict[str, Note] = {}

    def promoted(note: Note) -> str:
        seen["before"] = note
        fresh = note.section(entry.id)
        if fresh is None or fresh.kind != "entry":
            raise InvalidArgument(f"entry {entry.id!r} is no longer in {loaded.note_id!r}; "
                                  f"run `notes map {loaded.note_id}` and retry")
        if back_reference(fresh) in (note.state.text if note.state else ""):
            return _state_body(note)  # promoted meanwhile: nothing to add
        return _state_body(note) + "\n" + _promoted_line(fresh, line, questions)

    text = _promoted_line(entry, line, questions)
    before = loaded.note.text
    if back_reference(entry) in (loaded.note.state.text if loaded.note.state else ""):
        return Applied(loaded.note_id, entry.id, text, False, before, before)
    if dry_run:
        return Applied(loaded.note_id, entry.id, text, True, before,
                       with_state(loaded.note, promoted(loaded.note)))
    notes.update_state(loaded.note_id, promoted)
    after = notes.store.path_for(loaded.note_id).read_text(encoding="utf-8")
    return Applied(loaded.note_id, entry.id, text, True, seen["before"].text, after)


def _promoted_line(entry: Section, line: str | None, questions: list[str]) -> str:
    if line is None:
        return proposed_line(entry, questions)
    clean = " ".join(line.split()).removeprefix("- ")
    if not clean:
        raise InvalidArgument("the line is empty; give the text to put in the state")
    return f"- {clean} {back_reference(entry)}"


def _questions_for(notes: Notes, loaded: LoadedNote, entry: Section, days: int) -> list[str]:
    if notes.usage is None:
        return []
    since = time.time() - days * DAY_S
    return [c.query for c in notes.usage.calls(since) if c.note == loaded.note_id
            and c.section == entry.id and c.query]


def _state_body(note: Note) -> str:
    state = note.state
    if state is None:
        return ""
    return state.text.split("\n", 1)[1].rstrip() if "\n" in state.text else ""
