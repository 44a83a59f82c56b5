"""The promotion bench's parts: the earlier/later split, the replay of the earlier half as an
agent's sessions, and the hit rule for promoted lines.

- **Earlier and later.** By ``date`` when the questions carry distinct dates (every question
  has one, there are at least :data:`MIN_DATES_SHARE` as many dates as questions, and no date
  holds more than :data:`MAX_DATE_SHARE` of them): the first half in date order (then file
  order) is earlier. Otherwise by a hash of the id: bit 1 of the first byte of
  its SHA-256, where the tuning/test split (:mod:`memory.bench.split`) takes bit 0, so the two
  splits cross (each later half holds tuning and test questions alike).
- **Sessions.** The earlier questions, in that order, are cut into sessions of
  :data:`SESSION_SIZE` consecutive questions (an agent's session asks about one task: on a
  bench ordered by note, consecutive questions are about the same thing), each with its own
  session id, spread evenly over :data:`REPLAY_DAYS` days before the promoter runs.
- **The climb.** Each question goes through the real ladder (:class:`memory.api.Notes`, usage
  log on), its searches narrowed to what the store held when it was asked (its
  ``exclude_notes``, as :mod:`memory.bench.run` narrows them): one question in
  :data:`RECALL_EVERY` (by a hash of its id) is a ``recall`` at :data:`RECALL_BUDGET` tokens;
  the others ``suggest``, then ``section_map`` of the first note,
  ``read_section`` of its state and of the map's best section, and, when what was read does
  not hold the answer lines yet, of its second best: an agent that did not find what it
  needed reads on once before it gives up.
- **Promoted lines.** A promoted state line *carries* an answer line when its back-reference
  names the history entry that holds the answer line (in the same note) and its text (without
  the list marker, the back-reference and a cut's ``…``) is a sentence of the answer line (whole,
  or its first part when the proposal was cut), or holds at least half of the answer line's
  words (stop words out, accents folded). An answer line is *reached* when the text read holds
  it, or holds a promoted line that carries it (:meth:`memory.bench.policies.Reading.reaches`).
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from memory.api import Notes
from memory.bench.policies import question_day
from memory.bench.questions import Question, line_set
from memory.services.promote_lines import carries, referenced_entry
from memory.state.usage import DAY_S

EARLIER, LATER = "earlier", "later"
MIN_DATES_SHARE = 0.10
MAX_DATE_SHARE = 0.10
SESSION_SIZE = 4
REPLAY_DAYS = 7
RECALL_EVERY = 4
RECALL_BUDGET = 1000
SUGGEST_LIMIT = 4


def hash_half(question_id: str) -> str:
    """``earlier`` or ``later``: bit 1 of the first byte of the id's SHA-256."""
    return (EARLIER, LATER)[(hashlib.sha256(question_id.encode("utf-8")).digest()[0] >> 1) & 1]


def recalls(question_id: str) -> bool:
    """Whether the replayed agent asks ``recall`` for this question (one in RECALL_EVERY)."""
    return hashlib.sha256(question_id.encode("utf-8")).digest()[1] % RECALL_EVERY == 0


def dated(questions: list[Question]) -> bool:
    """Whether the questions carry distinct dates: all have one, none shared too widely."""
    if not questions or any(not q.date for q in questions):
        return False
    days = Counter(q.date for q in questions)
    return len(days) >= MIN_DATES_SHARE * len(questions) \
        and days.most_common(1)[0][1] <= MAX_DATE_SHARE * len(questions)


def split_in_time(questions: list[Question]) -> tuple[list[Question], list[Question], str]:
    """(earlier, later, how): ``how`` is ``date`` or ``hash``; earlier in asking order."""
    if dated(questions):
        order = sorted(range(len(questions)), key=lambda i: (str(questions[i].date), i))
        half = (len(order) + 1) // 2
        return ([questions[i] for i in order[:half]], [questions[i] for i in order[half:]],
                "date")
    earlier = [q for q in questions if hash_half(q.id) == EARLIER]
    later = [q for q in questions if hash_half(q.id) == LATER]
    return earlier, later, "hash"


def cut_sessions(earlier: list[Question], size: int = SESSION_SIZE) -> list[list[Question]]:
    return [earlier[i:i + size] for i in range(0, len(earlier), size)]


@dataclass
class Replayed:
    sessions: int = 0
    questions: int = 0
    recalls: int = 0
    second_reads: int = 0  # climbs that read the second best section too
    start: float = 0.0
    end: float = 0.0


def replay(notes: Notes, sessions: list[list[Question]], end: float,
           days: float = REPLAY_DAYS) -> Replayed:
    """Ask every question of ``sessions`` through ``notes`` (its usage log on), the sessions
    spread evenly over the ``days`` before ``end``; the log's clock says when."""
    done = Replayed(start=end - days * DAY_S, end=end)
    now = [done.start]
    notes.replay_clock(lambda: now[0])  # raises with the usage log off
    step = days * DAY_S / max(len(sessions), 1)
    for number, session in enumerate(sessions):
        now[0] = done.start + number * step
        for question in session:
            now[0] += 60.0
            notes.leave_out(question.exclude_notes)
            ask(notes, question, f"replay-{number:05d}", done)
        done.sessions += 1
    notes.leave_out(())
    return done


def ask(notes: Notes, question: Question, session: str, done: Replayed) -> None:
    """One question, as the agent asks it (see the module's docstring)."""
    done.questions += 1
    today = question_day(question)
    context = " ".join(question.context) or None
    if recalls(question.id):
        done.recalls += 1
        notes.recall(question.question, RECALL_BUDGET, context, session=session, today=today)
        return
    found = notes.suggest(question.question, SUGGEST_LIMIT, context, session=session,
                          today=today)
    if not found.hits:
        return
    note = found.hits[0].note
    mapped = notes.section_map(note, question.question, session=session, today=today,
                               context=context)
    seen: set[str] = set()
    if any(row.id == "state" for row in mapped.rows):
        seen |= line_set(notes.read_section(note, "state", session=session).text)
    wanted = {line.strip() for line in question.answer_lines}
    best = [s for s in mapped.best if s != "state" and not s.startswith("state/")]
    for number, section in enumerate(best[:2]):
        if number and wanted <= seen:
            break
        done.second_reads += number
        seen |= line_set(notes.read_section(note, section, session=session).text)


# -- the hit rule for promoted lines ------------------------------------------------------
@dataclass(frozen=True)
class Promoted:
    """A line a promotion wrote into a note's state."""

    note: str
    entry: str
    line: str  # as written, trimmed


def carried_lines(promoted: Iterable[Promoted], entry_lines: dict[tuple[str, str], set[str]],
                  answers: set[str]) -> dict[str, frozenset[str]]:
    """For each answer line, the promoted lines that carry it: promoted from the entry that
    holds it (``entry_lines``: (note, entry) -> its trimmed lines)."""
    out: dict[str, set[str]] = defaultdict(set)
    for line in promoted:
        if referenced_entry(line.line) != line.entry:
            continue
        for answer in entry_lines.get((line.note, line.entry), set()) & answers:
            if carries(line.line, answer):
                out[answer].add(line.line)
    return {answer: frozenset(lines) for answer, lines in out.items()}


def holds_evidence(line: Promoted, carried: dict[str, frozenset[str]],
                   questions: Iterable[Question]) -> bool:
    """Whether the promoted line carries an answer line of at least one of ``questions``."""
    return any(line.line in carried.get(answer.strip(), frozenset())
               for q in questions for answer in q.answer_lines)
