"""The bench format: a folder with ``notes/`` (a store) and ``questions.jsonl``.

One JSON object a line: ``id``, ``question``, ``answer_lines`` (each equal, once trimmed, to a
whole line of one note) and, optionally, ``context`` (earlier messages, oldest first),
``date`` (ISO date or datetime of the question), ``note`` (the gold note id), ``notes`` (the
gold notes, when the answer lines lie in several), ``category`` and ``exclude_notes`` (the
notes the store did not hold yet when the question was asked: every policy runs without
them).
Other tools write benches too, so this module reads tolerantly (unknown keys are ignored) and
writes exactly those keys. Questions are streamed: a bench may be large.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from memory.errors import NotesError
from memory.model.text import split_lines
from memory.state.safe_files import finish_atomic, temp_beside

QUESTIONS_FILE = "questions.jsonl"
NOTES_FOLDER = "notes"


class BenchError(NotesError):
    """A bench, or the data an adapter reads, cannot be used as it is."""


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    answer_lines: tuple[str, ...]
    context: tuple[str, ...] = ()
    date: str | None = None
    note: str | None = None  # the gold note, when there is exactly one
    category: str | None = None
    notes: tuple[str, ...] = ()  # the gold notes, when there are several (``note`` is None)
    exclude_notes: tuple[str, ...] = ()  # not in the store yet when the question was asked

    @property
    def gold_notes(self) -> tuple[str, ...]:
        """Every gold note: the one ``note``, or the several ``notes`` (none: no gold)."""
        return self.notes if self.notes else (self.note,) if self.note is not None else ()

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "question": self.question,
                                "answer_lines": list(self.answer_lines)}
        optional = {"context": list(self.context) or None, "date": self.date,
                    "note": self.note, "notes": list(self.notes) or None,
                    "category": self.category,
                    "exclude_notes": list(self.exclude_notes) or None}
        data.update({k: v for k, v in optional.items() if v is not None})
        return data


def trimmed(line: str) -> str:
    """A line as the hit rule compares it: without surrounding spaces and line end."""
    return line.strip()


def line_set(text: str) -> set[str]:
    """The trimmed, non-empty lines of a text (split as the note parser splits)."""
    return {t for t in (trimmed(line) for line in split_lines(text)) if t}


def one_line(text: str) -> str:
    """Any text as one line: every run of whitespace (line breaks included) becomes a space."""
    return " ".join(text.split())


def bench_paths(bench: Path) -> tuple[Path, Path]:
    """The notes folder and the questions file of a bench, checked to exist."""
    notes, questions = bench / NOTES_FOLDER, bench / QUESTIONS_FILE
    if not notes.is_dir() or not questions.is_file():
        raise BenchError(f"{bench} is not a bench: it needs a {NOTES_FOLDER}/ folder and a "
                         f"{QUESTIONS_FILE} file (make one with `notes bench from-locomo` or "
                         "`notes bench from-transcripts`)")
    return notes, questions


def read_questions(path: Path, limit: int | None = None) -> Iterator[Question]:
    """Stream the questions of a ``questions.jsonl`` (the first ``limit`` of them)."""
    with open(path, encoding="utf-8") as handle:
        count, number = 0, 0
        try:
            for number, raw in enumerate(handle, start=1):
                if limit is not None and count >= limit:
                    return
                if raw.strip():
                    yield parse_question(raw, f"{path}:{number}")
                    count += 1
        except UnicodeDecodeError:
            raise BenchError(f"{path}:{number + 1}: not UTF-8; save the file as UTF-8") from None


def parse_question(raw: str, where: str) -> Question:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise BenchError(f"{where}: not JSON ({exc.msg}); each line must be one JSON "
                         "object") from None
    if not isinstance(data, dict):
        raise BenchError(f"{where}: each line must be a JSON object")
    qid, question = data.get("id"), data.get("question")
    if not isinstance(qid, str | int) or not isinstance(question, str) or not question.strip():
        raise BenchError(f"{where}: 'id' and a non-empty 'question' string are required")
    gold = gold_of(_optional_str(data.get("note")), _strings(data.get("notes"), where,
                                                                   "notes"))
    return Question(str(qid), question, _strings(data.get("answer_lines"), where, "answer_lines"),
                    tuple(_message_text(m) for m in _list(data.get("context"), where,
                                                          "context")),
                    _optional_str(data.get("date")), gold[0] if len(gold) == 1 else None,
                    _optional_str(data.get("category")), gold if len(gold) > 1 else (),
                    tuple(dict.fromkeys(_strings(data.get("exclude_notes"), where,
                                                 "exclude_notes"))))


def gold_of(note: str | None, notes: tuple[str, ...]) -> tuple[str, ...]:
    """The gold notes a question names: ``note`` first, then ``notes``, each once. One gold
    note is carried as ``note``, several as ``notes``, whichever key the writer used."""
    named = ((note,) if note else ()) + tuple(n for n in notes if n)
    return tuple(dict.fromkeys(named))


def _list(value: object, where: str, key: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BenchError(f"{where}: '{key}' must be a list")
    return value


def _strings(value: object, where: str, key: str) -> tuple[str, ...]:
    items = _list(value, where, key)
    if not all(isinstance(v, str) for v in items):
        raise BenchError(f"{where}: '{key}' must be a list of strings")
    return tuple(items)


def _message_text(message: object) -> str:
    """A context message: a string, or an object with ``text`` or ``content``."""
    if isinstance(message, dict):
        message = message.get("text", message.get("content", ""))
    return message if isinstance(message, str) else json.dumps(message, ensure_ascii=False)


def _optional_str(value: object) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


class QuestionWriter:
    """Writes ``questions.jsonl`` one question at a time, atomically on close."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._tmp = temp_beside(path)
        self._handle: TextIO = open(self._tmp, "w", encoding="utf-8")
        self.count = 0

    def write(self, question: Question) -> None:
        self._handle.write(json.dumps(question.to_json(), ensure_ascii=False) + "\n")
        self.count += 1

    def write_all(self, questions: Iterable[Question]) -> None:
        for question in questions:
            self.write(question)

    def close(self) -> None:
        self._handle.close()
        finish_atomic(self._tmp, self.path)

    def abort(self) -> None:
        self._handle.close()
        self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> QuestionWriter:
        return self

    def __exit__(self, kind: object, value: object, tb: object) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()


def prepare_out(out: Path, force: bool) -> Path:
    """Make ``out`` ready for a new bench; refuse to overwrite one unless ``force``."""
    notes = out / NOTES_FOLDER
    if (notes.exists() or (out / QUESTIONS_FILE).exists()) and not force:
        raise BenchError(f"{out} already holds a bench; pass --force to replace it, or "
                         "choose another --out folder")
    if notes.exists():
        shutil.rmtree(notes)
    notes.mkdir(parents=True)
    return notes
