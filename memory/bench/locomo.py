"""LoCoMo (Maharana et al. 2024, ``locomo10.json``) as a bench.

One note per conversation (id ``conv-26``), titled with its two speakers. Its state is one line
(who, how many sessions, from when to when); its history has one entry per session,
``### YYYY-MM-DD HH:MM · Session N``, with one line per turn: ``- Speaker: text`` (image
turns get `` [image: caption]``). A question's evidence turn ids (``D3:5``) become its answer
lines, the exact rendered lines of those turns. The dataset is CC BY-NC: it is read where it
lies, never copied into the project.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.bench.followups import (
    FollowUpCounts,
    Talk,
    speakers_of,
    topic_switches,
)
from memory.bench.followups import follow_ups as as_follow_ups
from memory.bench.questions import (
    BenchError,
    Question,
    QuestionWriter,
    line_set,
    one_line,
    prepare_out,
)
from memory.model.note import parse_note

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop",
              5: "adversarial"}
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})",
                   re.IGNORECASE)
# tolerant: "D3:5", "D:11:26", "D30:05", "D8:6; D9:17", "D9:1 D4:4"
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


@dataclass
class LocomoCounts:
    conversations: int = 0
    sessions: int = 0
    turns: int = 0
    questions: int = 0
    evidence_ids: int = 0
    dropped_ids: int = 0
    no_evidence: int = 0
    categories: Counter[str] = field(default_factory=Counter)
    follow_ups: FollowUpCounts | None = None
    per_session: bool = False
    notes: int = 0
    gold_notes: Counter[int] = field(default_factory=Counter)  # gold notes -> questions

    def summary(self) -> str:
        cats = ", ".join(f"{name} {n}" for name, n in sorted(self.categories.items()))
        text = (f"{self.conversations} conversations, {self.sessions} sessions, {self.turns} "
                f"turns, {self.questions} questions ({cats}); {self.evidence_ids} evidence ids, "
                f"{self.dropped_ids} dropped as malformed or unknown; {self.no_evidence} "
                "questions with no evidence left")
        if self.per_session:
            several = sum(n for size, n in self.gold_notes.items() if size > 1)
            most = max(self.gold_notes, default=0)
            text += (f"\none note per session: {self.notes} notes; {self.gold_notes[1]} "
                     f"questions with one gold note, {several} with several (up to {most})")
        return text + (f"\n{self.follow_ups.summary()}" if self.follow_ups else "")


@dataclass(frozen=True)
class Conversation:
    note_id: str  # the conversation's id (``conv-26``)
    notes: tuple[tuple[str, str], ...]  # (note id, text): the conversation's, or one a session
    lines: dict[tuple[int, int], str]  # (session, turn) -> rendered line
    homes: dict[tuple[int, int], str]  # (session, turn) -> the id of the note holding it
    last_date: datetime
    sessions: int


def locomo_to_bench(source: Path, out: Path, force: bool = False, follow_ups: bool = False,
                    per_session: bool = False) -> LocomoCounts:
    """Write the bench (``out/notes/*.md``, ``out/questions.jsonl``); return the counts.
    With ``follow_ups``, the questions are rewritten as vague follow-ups (see followups.py);
    with ``per_session``, every session is a note of its own (``conv-26/session-03``)."""
    samples = _load(source)
    notes_dir = prepare_out(out, force)
    counts = LocomoCounts(follow_ups=FollowUpCounts() if follow_ups else None,
                          per_session=per_session)
    talks: list[Talk] = []
    for number, sample in enumerate(samples, start=1):
        conversation = conversation_note(sample, number, per_session)
        for note_id, text in conversation.notes:
            path = notes_dir / f"{note_id}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        counts.conversations += 1
        counts.notes += len(conversation.notes)
        counts.sessions += conversation.sessions
        counts.turns += len(conversation.lines)
        talks.append(_talk(sample, questions_of(sample, conversation, counts)))
    with QuestionWriter(out / "questions.jsonl") as writer:
        switches: dict[int, list[Question]] = {}
        if counts.follow_ups is not None:
            for index, switch in topic_switches(talks, counts.follow_ups):
                switches.setdefault(index, []).append(switch)
        for index, talk in enumerate(talks):
            if counts.follow_ups is None:
                writer.write_all(talk.questions)
                continue
            writer.write_all(list(as_follow_ups(talk.questions, talk.qas, talk.speakers,
                                                counts.follow_ups)))
            writer.write_all(switches.get(index, []))
    return counts


def _talk(sample: dict[str, Any], questions: list[Question]) -> Talk:
    talk = sample["conversation"]
    turns = [str(t.get("text", "")) for key, value in talk.items()
             if _SESSION_KEY.match(key) and isinstance(value, list)
             for t in value if isinstance(t, dict)]
    speakers = speakers_of(one_line(str(talk.get("speaker_a", "A"))),
                           one_line(str(talk.get("speaker_b", "B"))), turns)
    qas = {question.id: qa for question, qa in
           zip(questions, (qa for qa in sample.get("qa") or [] if isinstance(qa, dict)),
               strict=True)}
    return Talk(questions, qas, speakers)


def _load(source: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchError(f"cannot read LoCoMo from {source} ({exc}); give the path of "
                         "locomo10.json") from None
    if not isinstance(data, list) or not all(isinstance(s, dict) for s in data):
        raise BenchError(f"{source} is not LoCoMo: expected a JSON list of samples")
    return data


def conversation_note(sample: dict[str, Any], number: int,
                      per_session: bool = False) -> Conversation:
    """The note of one conversation (or, ``per_session``, the note of each of its sessions),
    and the rendered line of each turn."""
    talk = sample.get("conversation")
    if not isinstance(talk, dict):
        raise BenchError(f"sample {number} has no 'conversation'")
    note_id = _note_id(sample, number)
    a, b = one_line(str(talk.get("speaker_a", "A"))), one_line(str(talk.get("speaker_b", "B")))
    sessions = _sessions(talk, note_id)
    lines: dict[tuple[int, int], str] = {}
    homes: dict[tuple[int, int], str] = {}
    notes: list[tuple[str, str]] = []
    body: list[str] = []
    for session, when, turns in sessions:
        entry = _entry(session, when, turns)
        home = f"{note_id}/session-{session:02d}" if per_session else note_id
        if per_session:
            title = f"{a} and {b}: session {session}, {when:%Y-%m-%d}"
            state = (f"- {a} and {b}, session {session} of {len(sessions)}, on "
                     f"{when:%Y-%m-%d} at {when:%H:%M}.")
            notes.append((home, note_text(title, state, entry.body)))
        body += entry.body
        lines.update(entry.lines)
        homes.update(dict.fromkeys(entry.lines, home))
    if not per_session:
        first, last = sessions[0][1], sessions[-1][1]
        state = (f"- Conversation between {a} and {b}: {len(sessions)} sessions, from "
                 f"{first:%Y-%m-%d} to {last:%Y-%m-%d}.")
        notes.append((note_id, note_text(f"{a} and {b}", state, body)))
    for home, text in notes:
        check_lines(text, {k: v for k, v in lines.items() if homes[k] == home}, home)
    return Conversation(note_id, tuple(notes), lines, homes, sessions[-1][1], len(sessions))


@dataclass(frozen=True)
class _Entry:
    body: list[str]  # a blank line, the entry's heading, a line per turn
    lines: dict[tuple[int, int], str]


def _entry(session: int, when: datetime, turns: list[Any]) -> _Entry:
    """One session as a history entry: ``### 2023-05-08 13:56 · Session 1``, a line a turn."""
    body = ["", f"### {when:%Y-%m-%d %H:%M} · Session {session}"]
    lines: dict[tuple[int, int], str] = {}
    for turn_number, turn in enumerate(turns, start=1):
        line = turn_line(turn)
        lines[_turn_key(turn, session, turn_number)] = line
        body.append(line)
    return _Entry(body, lines)


def note_text(title: str, state: str, body: list[str]) -> str:
    head = ["---", f"title: {json.dumps(title, ensure_ascii=False)}", "---", f"# {title}", "",
            "## Current state", state, "", "## History"]
    return "\n".join(head + body) + "\n"


def _note_id(sample: dict[str, Any], number: int) -> str:
    raw = str(sample.get("sample_id") or f"conv-{number}")
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", raw).strip("-.") or f"conv-{number}"


def _sessions(talk: dict[str, Any], note_id: str) -> list[tuple[int, datetime, list[Any]]]:
    """(number, date, turns) of every ``session_<N>`` key, in order (not the date keys)."""
    found = []
    for key, turns in talk.items():
        match = _SESSION_KEY.match(key)
        if match and isinstance(turns, list):
            number = int(match[1])
            raw = talk.get(f"session_{number}_date_time")
            found.append((number, parse_locomo_date(str(raw), f"{note_id} session {number}"),
                          turns))
    if not found:
        raise BenchError(f"{note_id} has no session_<N> lists")
    return sorted(found, key=lambda s: s[0])


def parse_locomo_date(raw: str, where: str = "") -> datetime:
    """``"1:56 pm on 8 May, 2023"`` → 2023-05-08 13:56."""
    match = _DATE.search(raw)
    if not match:
        raise BenchError(f"{where}: cannot read the date {raw!r}; expected e.g. "
                         "'1:56 pm on 8 May, 2023'")
    hour, minute, half, day, month, year = match.groups()
    try:
        moment = datetime.strptime(f"{day} {month[:3]} {year}", "%d %b %Y")
    except ValueError:
        raise BenchError(f"{where}: cannot read the date {raw!r}") from None
    hour_24 = int(hour) % 12 + (12 if half.lower() == "p" else 0)
    return moment.replace(hour=hour_24, minute=int(minute))


def turn_line(turn: Any) -> str:
    """One turn as one note line: ``- Speaker: text [image: caption]``."""
    if not isinstance(turn, dict):
        return f"- {one_line(str(turn))}"
    line = f"- {one_line(str(turn.get('speaker', '')))}: {one_line(str(turn.get('text', '')))}"
    caption = one_line(str(turn.get("blip_caption") or ""))
    if caption:
        line += f" [image: {caption}]"
    return line.rstrip()


def _turn_key(turn: Any, session: int, number: int) -> tuple[int, int]:
    """A turn's (session, index) from its ``dia_id``, else from its position."""
    dia = turn.get("dia_id") if isinstance(turn, dict) else None
    match = _EVIDENCE.fullmatch(str(dia or "").strip())
    return (int(match[1]), int(match[2])) if match else (session, number)


def check_lines(text: str, lines: Mapping[Any, str], note_id: str) -> None:
    """Every turn must be one line of the note and stay inside the history's entries."""
    note = parse_note(text)
    inside: set[str] = set().union(*(line_set(e.text) for e in note.entries))
    lost = [key for key, line in lines.items() if line.strip() not in inside]
    if lost or len(note.entries) == 0:
        raise BenchError(f"{note_id}: turns {lost[:5]} did not stay lines of their session "
                         "entry; the note format broke")


def questions_of(sample: dict[str, Any], conversation: Conversation,
                 counts: LocomoCounts) -> list[Question]:
    """The questions of one conversation, their evidence turned into answer lines."""
    out = []
    for number, qa in enumerate(sample.get("qa") or [], start=1):
        if not isinstance(qa, dict):
            continue
        answer_lines, gold = _answer_lines(qa.get("evidence"), conversation, counts)
        if not answer_lines:
            counts.no_evidence += 1
            gold = [conversation.notes[0][0]] if len(conversation.notes) == 1 else []
        category = category_name(qa.get("category"))
        counts.questions += 1
        counts.categories[category or "none"] += 1
        counts.gold_notes[len(gold)] += 1
        out.append(Question(f"{conversation.note_id}:q{number}", str(qa.get("question", "")),
                            tuple(answer_lines), (),
                            conversation.last_date.isoformat(timespec="minutes"),
                            gold[0] if len(gold) == 1 else None, category,
                            tuple(gold) if len(gold) > 1 else ()))
    return out


def category_name(value: Any) -> str | None:
    """LoCoMo's category number as a name (unknown values are kept as they are)."""
    if isinstance(value, int) and value in CATEGORIES:
        return CATEGORIES[value]
    return str(value) if value not in (None, "") else None


def _answer_lines(evidence: Any, conversation: Conversation,
                  counts: LocomoCounts) -> tuple[list[str], list[str]]:
    """The rendered lines of the evidence turns, and the notes holding them (the gold notes,
    in the order of the evidence); malformed or unknown ids are dropped."""
    raw_ids = evidence if isinstance(evidence, list) else [evidence] if evidence else []
    found: list[str] = []
    gold: list[str] = []
    for raw in raw_ids:
        matches = _EVIDENCE.findall(str(raw))
        counts.evidence_ids += max(1, len(matches))
        if not matches:
            counts.dropped_ids += 1
        for session, turn in matches:
            key = (int(session), int(turn))
            line = conversation.lines.get(key)
            if line is None:
                counts.dropped_ids += 1
                continue
            if line.strip() not in found:
                found.append(line.strip())
            if conversation.homes[key] not in gold:
                gold.append(conversation.homes[key])
    return found, gold
