"""A bench from Claude Code transcripts: the memory lines the agent read and then used.

For each user turn, a line the agent read from memory is an **answer line** when at least
:data:`MIN_RECALLED` of its rare words reappear in the agent's reply for that turn and none of
those words was in the user's message or the :data:`~memory.bench.transcripts.BEFORE`
messages before it (words the conversation already held are echo, not recall).

A word is **rare** when it is made of letters only, has at least :data:`MIN_LETTERS` of them,
is not a stop word (the index's Spanish + English list), and appears in at most
:data:`RARE_SHARE` of today's notes (never fewer than one note); words are compared
lower-cased and accent-folded. Turns where the agent wrote memory are dropped (what it read
may be what it had just written), and so are note header lines: front matter and heading
lines. Each answer line is looked up verbatim in today's notes; lines that no longer exist are
counted and left out (benches decay as notes are rewritten).
"""

from __future__ import annotations

import math
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from memory.bench.questions import Question, QuestionWriter, prepare_out
from memory.bench.transcripts import (
    PathMap,
    Transcript,
    Turn,
    read_transcript,
    transcript_files,
)
from memory.config import load_config
from memory.index.words import stop_words
from memory.model.text import fold, split_lines
from memory.state.store import Store

MIN_RECALLED = 3
MIN_LETTERS = 4
RARE_SHARE = 0.10
_WORD = re.compile(rf"[^\W\d_]{{{MIN_LETTERS},}}")
_HEADING = re.compile(r"^#{1,6}(?:\s|$)")


@dataclass
class MiningCounts:
    files: int = 0
    records: int = 0
    bad_lines: int = 0
    turns: int = 0
    turns_reading_memory: int = 0
    turns_writing_memory: int = 0
    lines_read: int = 0
    echo_lines: int = 0
    answer_lines: int = 0
    stale_lines: int = 0
    questions: int = 0
    stale: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (f"{self.files} transcripts, {self.records} records ({self.bad_lines} unreadable "
                f"lines), {self.turns} user turns: {self.turns_reading_memory} read memory, "
                f"{self.turns_writing_memory} dropped for writing memory; {self.lines_read} "
                f"memory lines read, {self.echo_lines} echo, {self.answer_lines} answer lines, "
                f"of which {self.stale_lines} no longer exist in the notes; "
                f"{self.questions} questions")


class Vocabulary:
    """Document frequency of words over today's notes, for the rare-word rule."""

    def __init__(self, store: Store) -> None:
        self.frequency: Counter[str] = Counter()
        self.notes = 0
        for text in _note_texts(store):
            self.notes += 1
            self.frequency.update(set(words(text)))
        self.limit = max(1, math.floor(RARE_SHARE * self.notes))

    def rare(self, text: str) -> set[str]:
        return {w for w in words(text) if self.frequency[w] <= self.limit}


def words(text: str) -> Iterator[str]:
    """Folded words of at least MIN_LETTERS letters that are not stop words."""
    stops = stop_words()
    for match in _WORD.finditer(text):
        word = fold(match[0])
        if word not in stops:
            yield word


def _note_texts(store: Store) -> Iterator[str]:
    for entry in store.files():
        try:
            yield entry.path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue


def content_lines(text: str) -> list[str]:
    """A read text's lines without note headers (front matter, heading lines) or blanks."""
    lines = [line.rstrip("\r\n") for line in split_lines(text)]
    if lines and lines[0].strip() == "---":
        close = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if close is not None:
            lines = lines[close + 1:]
    return [line.strip() for line in lines
            if line.strip() and not _HEADING.match(line.strip()) and line.strip() != "---"]


def answer_lines(turn: Turn, vocabulary: Vocabulary, counts: MiningCounts) -> list[str]:
    """The lines of this turn's memory reads that the reply recalled (not echoed)."""
    reply = set(words("\n".join(turn.reply)))
    echo = set(words("\n".join((turn.prompt, *turn.before))))
    found: list[str] = []
    for read in turn.reads:
        for line in content_lines(read.text):
            counts.lines_read += 1
            shared = vocabulary.rare(line) & reply
            if len(shared) < MIN_RECALLED:
                continue
            if len(shared - echo) < MIN_RECALLED:
                counts.echo_lines += 1
            elif line not in found:
                found.append(line)
    return found


class NoteLines:
    """Where lines live in today's notes (looked up for a given set of lines)."""

    def __init__(self, store: Store, wanted: set[str]) -> None:
        self.places: dict[str, set[str]] = {}
        for entry in store.files():
            try:
                text = entry.path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in split_lines(text):
                if line.strip() in wanted:
                    self.places.setdefault(line.strip(), set()).add(entry.note_id)


@dataclass(frozen=True)
class Mined:
    """What a question needs from one turn (the transcript itself is let go)."""

    id: str
    prompt: str
    before: tuple[str, ...]
    timestamp: str | None
    read_notes: tuple[str | None, ...]
    lines: tuple[str, ...]


def transcripts_to_bench(paths: list[Path], notes_dir: Path, out: Path,
                         force: bool = False, path_map: PathMap = ()) -> MiningCounts:
    """Write a bench from transcripts: the notes copied, one question per useful turn;
    ``path_map`` maps the paths the sessions read onto this machine's (``--path-map``)."""
    store = Store(load_config(notes_dir))
    target = prepare_out(out, force)
    vocabulary = Vocabulary(store)
    counts = MiningCounts()
    mined: list[Mined] = []
    for path in transcript_files(paths):
        transcript = read_transcript(path, store.root, path_map)
        counts.files += 1
        counts.records += transcript.records
        counts.bad_lines += transcript.bad_lines
        mined += _mine(transcript, vocabulary, counts)
    places = NoteLines(store, {line for m in mined for line in m.lines})
    shutil.copytree(store.root, target, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".*"))
    with QuestionWriter(out / "questions.jsonl") as writer:
        for found in mined:
            question = _question(found, places, counts)
            if question is not None:
                writer.write(question)
                counts.questions += 1
    return counts


def _mine(transcript: Transcript, vocabulary: Vocabulary, counts: MiningCounts) -> list[Mined]:
    mined = []
    for turn in transcript.turns:
        counts.turns += 1
        if turn.memory_calls:
            counts.turns_reading_memory += 1
        if turn.wrote_memory:
            counts.turns_writing_memory += 1
            continue
        found = answer_lines(turn, vocabulary, counts)
        if found:
            mined.append(Mined(f"{transcript.path.stem}:{turn.number}", turn.prompt,
                               turn.before, turn.timestamp,
                               tuple(r.note for r in turn.reads), tuple(found)))
    return mined


def _question(found: Mined, places: NoteLines, counts: MiningCounts) -> Question | None:
    counts.answer_lines += len(found.lines)
    alive = [line for line in found.lines if line in places.places]
    for line in found.lines:
        if line not in places.places:
            counts.stale_lines += 1
            counts.stale.append(line)
    if not alive:
        return None
    return Question(found.id, found.prompt, tuple(alive), found.before, found.timestamp,
                    _gold_note(found.read_notes, alive, places))


def _gold_note(read_notes: tuple[str | None, ...], lines: list[str],
               places: NoteLines) -> str | None:
    """The note holding every answer line, preferring one the agent read in the turn."""
    holding = set.intersection(*(places.places[line] for line in lines))
    read_from = [note for note in read_notes if note in holding]
    if read_from:
        return read_from[0]
    return min(holding) if len(holding) == 1 else None
