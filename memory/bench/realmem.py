"""RealMem (Apache-2.0; ``*_dialogues_256k.json``, one file a persona) as a bench.

Ten personas, each a series of task-oriented sessions between a user and an assistant. One
note per session (``adeleke-okonjo/session-042``), titled with the persona, the session's
project and day; its state is one line (who, which session, when); its history one entry,
``### 2025-12-24 · Session 42``, with one line per turn: ``- User: text`` or
``- Assistant: text`` (every run of whitespace one space, so a turn is one line).

A question is a user turn marked ``is_query``: the message that needs memory of earlier
sessions. Its context is the session's earlier turns; its date the session's day. Its
evidence comes from the assistant's reply: ``memory_used`` names items of earlier sessions'
``extracted_memory`` (by ``session_uuid`` and text), and each item names the turn it came from
(``source_turn``, 1-based). Those turns' lines are the answer lines; their sessions are the
gold notes. The question leaves out (``exclude_notes``) its own session and every later
session of its persona: what the store did not hold yet when it was asked. Other personas'
sessions stay, as distractors about other lives.

The files are read where they lie and never copied into the project; the bench is derived
data under the same licence.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.bench.locomo import check_lines, note_text
from memory.bench.questions import (
    BenchError,
    Question,
    QuestionWriter,
    one_line,
    prepare_out,
)
from memory.model.text import slugify

_DAY = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})(?:\s*\((\w+)\))?")


@dataclass
class RealmemCounts:
    personas: int = 0
    sessions: int = 0
    turns: int = 0
    queries: int = 0
    categories: Counter[str] = field(default_factory=Counter)
    references: int = 0  # memory_used items of the queries' replies
    by_own_turn: int = 0  # resolved by the item's own source turn
    by_other_item: int = 0  # the item names no turn (0): through the same memory's other item
    edited: int = 0  # resolved, but the turn's text differs from the item's snapshot
    no_turn: int = 0  # dropped: no item, or it names no turn of its session
    same_session: int = 0  # dropped: the query's own session (its context, not memory)
    no_evidence: int = 0
    gold_notes: Counter[int] = field(default_factory=Counter)  # gold notes -> questions
    excluded: int = 0  # notes left out, summed over the questions

    @property
    def resolved(self) -> int:
        return self.by_own_turn + self.by_other_item

    def summary(self) -> str:
        cats = ", ".join(f"{name} {n}" for name, n in sorted(self.categories.items()))
        several = sum(n for size, n in self.gold_notes.items() if size > 1)
        mean = self.excluded / self.queries if self.queries else 0.0
        return (f"{self.personas} personas, {self.sessions} sessions, {self.turns} turns, "
                f"{self.queries} queries ({cats}); {self.references} memory references: "
                f"{self.resolved} name a turn ({self.by_own_turn} by their own source turn, "
                f"{self.by_other_item} through the same memory's other item; {self.edited} "
                f"of those turns edited since the memory was taken), {self.no_turn} name "
                f"none and are dropped; {self.same_session} turns in the query's own or a "
                f"later session dropped too (its context, not memory); {self.no_evidence} queries "
                "with no evidence left\n"
                f"one note per session: {self.sessions} notes; {self.gold_notes[1]} questions "
                f"with one gold note, {several} with several (up to "
                f"{max(self.gold_notes, default=0)}); each question leaves out its own and "
                f"later sessions: {mean:.1f} notes on average")


@dataclass(frozen=True)
class Session:
    position: int  # 0-based, in the persona's order (its timeline)
    note_id: str
    day: str
    data: dict[str, Any]

    @property
    def turns(self) -> list[dict[str, Any]]:
        turns = self.data.get("dialogue_turns")
        return [t for t in turns if isinstance(t, dict)] if isinstance(turns, list) else []


@dataclass
class Persona:
    name: str
    slug: str
    sessions: list[Session]

    def by_uuid(self) -> dict[str, Session]:
        return {str(s.data.get("session_uuid")): s for s in self.sessions}


def realmem_to_bench(source: Path, out: Path, force: bool = False,
                     persona: str | None = None) -> RealmemCounts:
    """Write the bench (``out/notes/PERSONA/session-NNN.md``, ``out/questions.jsonl``) of
    every persona in ``source`` (or of the one named ``persona``); return the counts."""
    files = persona_files(source)
    if persona is not None:
        files = [_named(files, persona)]
    notes_dir = prepare_out(out, force)
    counts = RealmemCounts()
    with QuestionWriter(out / "questions.jsonl") as writer:
        for path in files:
            one = load_persona(path)
            counts.personas += 1
            for session in one.sessions:
                _write_note(notes_dir, one, session, counts)
            writer.write_all(questions_of(one, counts))
    return counts


def persona_files(source: Path) -> list[Path]:
    """The persona files in ``source`` (the dataset folder, or a folder holding ``dataset/``)."""
    folder = source / "dataset" if (source / "dataset").is_dir() else source
    files = sorted(folder.glob("*.json")) if folder.is_dir() else []
    if not files:
        raise BenchError(f"no RealMem files in {source}: give the folder holding the "
                         "*_dialogues_256k.json files (or its parent, with dataset/)")
    return files


def _named(files: list[Path], persona: str) -> Path:
    names = {slugify(_persona_name(path)): path for path in files}
    found = names.get(slugify(persona))
    if found is None:
        raise BenchError(f"no persona {persona!r} in RealMem; use one of "
                         f"{', '.join(sorted(names))}")
    return found


def _persona_name(path: Path) -> str:
    return re.sub(r"_dialogues.*$", "", path.stem)


def load_persona(path: Path) -> Persona:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchError(f"cannot read RealMem from {path} ({exc}); give the folder of the "
                         "dataset's *_dialogues_256k.json files") from None
    dialogues = data.get("dialogues") if isinstance(data, dict) else None
    if not isinstance(dialogues, list) or not all(isinstance(d, dict) for d in dialogues):
        raise BenchError(f"{path} is not a RealMem persona file: expected an object with a "
                         "'dialogues' list")
    meta = data.get("_metadata") if isinstance(data.get("_metadata"), dict) else {}
    name = one_line(str(meta.get("person_name") or _persona_name(path)))
    slug = slugify(name) or slugify(path.stem)
    sessions = [Session(n, f"{slug}/session-{n + 1:03d}", _day(d, f"{path.name} session "
                                                              f"{n + 1}"), d)
                for n, d in enumerate(dialogues)]
    return Persona(name.replace("_", " "), slug, sessions)


def _day(dialogue: dict[str, Any], where: str) -> str:
    match = _DAY.match(str(dialogue.get("current_time") or ""))
    if not match:
        raise BenchError(f"{where}: cannot read its current_time "
                         f"{dialogue.get('current_time')!r}; expected e.g. '2025-12-19 "
                         "(Friday)'")
    return match[1]


def turn_line(turn: dict[str, Any]) -> str:
    """One turn as one note line: ``- User: text``."""
    speaker = one_line(str(turn.get("speaker") or "?"))
    return f"- {speaker}: {one_line(str(turn.get('content') or ''))}".rstrip()


def _write_note(notes_dir: Path, persona: Persona, session: Session,
                counts: RealmemCounts) -> None:
    number, total = session.position + 1, len(persona.sessions)
    identifier = one_line(str(session.data.get("session_identifier") or ""))
    project, _, stage = identifier.partition(":")
    about = f"{project.replace('_', ' ')}, {stage}" if stage else project.replace("_", " ")
    title = f"{persona.name}: {about or f'session {number}'} ({session.day})"
    weekday = _DAY.match(str(session.data.get("current_time")))
    when = f"{session.day} ({weekday[2]})" if weekday and weekday[2] else session.day
    state = (f"- {persona.name} and the assistant, session {number} of {total}"
             f"{f' ({identifier})' if identifier else ''}, on {when}.")
    lines = {n: turn_line(t) for n, t in enumerate(session.turns)}
    body = ["", f"### {session.day} · Session {number}", *lines.values()]
    text = note_text(title, state, body)
    check_lines(text, lines, session.note_id)
    path = notes_dir / f"{session.note_id}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    counts.sessions += 1
    counts.turns += len(lines)


def questions_of(persona: Persona, counts: RealmemCounts) -> Iterator[Question]:
    """The queries of one persona, each with its evidence turns' lines."""
    sessions = persona.by_uuid()
    for session in persona.sessions:
        turns = session.turns
        for number, turn in enumerate(turns):
            if not turn.get("is_query"):
                continue
            reply = turns[number + 1] if number + 1 < len(turns) else {}
            lines, gold = _evidence(reply.get("memory_used"), session, sessions, counts)
            yield _question(persona, session, number, lines, gold, counts)


def _question(persona: Persona, session: Session, number: int, lines: list[str],
              gold: list[str], counts: RealmemCounts) -> Question:
    turn = session.turns[number]
    counts.queries += 1
    category = one_line(str(turn.get("category_name") or "")) or None
    counts.categories[category or "none"] += 1
    counts.no_evidence += not lines
    counts.gold_notes[len(gold)] += 1
    later = tuple(s.note_id for s in persona.sessions[session.position:])
    if set(gold) & set(later):
        raise BenchError(f"{persona.slug} {turn.get('query_id')}: evidence in a session it "
                         "leaves out; the RealMem adapter is wrong")
    counts.excluded += len(later)
    qid = one_line(str(turn.get("query_id") or f"s{session.position + 1}t{number + 1}"))
    return Question(f"{persona.slug}:{qid}", str(turn.get("content") or ""), tuple(lines),
                    tuple(str(t.get("content") or "") for t in session.turns[:number]),
                    session.day, gold[0] if len(gold) == 1 else None, category,
                    tuple(gold) if len(gold) > 1 else (), later)


def _evidence(used: Any, query: Session, sessions: dict[str, Session],
              counts: RealmemCounts) -> tuple[list[str], list[str]]:
    """The answer lines (trimmed, each once) and gold notes (in the evidence's order) of a
    reply's ``memory_used``; references that name no turn, or a turn of the query's own
    session or a later one, are dropped and counted."""
    lines: list[str] = []
    gold: list[str] = []
    for reference in used if isinstance(used, list) else []:
        if not isinstance(reference, dict):
            continue
        counts.references += 1
        home = sessions.get(str(reference.get("session_uuid")))
        turn = _source_turn(home, str(reference.get("content") or ""), counts) \
            if home is not None else None
        if home is None or turn is None:
            counts.no_turn += 1
            continue
        if home.position >= query.position:
            counts.same_session += 1
            continue
        line = turn_line(home.turns[turn]).strip()
        if line not in lines:
            lines.append(line)
        if home.note_id not in gold:
            gold.append(home.note_id)
    return lines, gold


def _source_turn(session: Session, content: str, counts: RealmemCounts) -> int | None:
    """The 0-based turn a memory item of ``session`` came from, found by its text.

    ``source_turn`` counts from 1 (the turn's speaker is the item's ``source_role_snapshot``;
    the snapshot is the turn's text, unless the turn was edited after the memory was taken:
    the turn is then still the one named). An item with ``source_turn`` 0 is a rewritten
    copy of a memory that names no turn; the session's other item of the same ``index``
    names it. -1 (an empty snapshot) names none."""
    memory = [m for m in session.data.get("extracted_memory") or [] if isinstance(m, dict)]
    item = next((m for m in memory if m.get("content") == content), None) or next(
        (m for m in memory if one_line(str(m.get("content") or "")) == one_line(content)), None)
    if item is None:
        return None
    through_other = _turn_number(item) == 0
    if through_other:
        item = next((m for m in memory if m is not item and m.get("index") == item.get("index")
                     and _turn_number(m) > 0), {})
    number, turns = _turn_number(item), session.turns
    if not 1 <= number <= len(turns):
        return None
    role = item.get("source_role_snapshot")
    if role and role != turns[number - 1].get("speaker"):
        return None
    if through_other:
        counts.by_other_item += 1
    else:
        counts.by_own_turn += 1
    counts.edited += item.get("source_content_snapshot") != turns[number - 1].get("content")
    return number - 1


def _turn_number(item: dict[str, Any]) -> int:
    value = item.get("source_turn")
    return value if isinstance(value, int) and not isinstance(value, bool) else -1
