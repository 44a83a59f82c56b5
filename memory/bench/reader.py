"""What a policy can read from a bench's store, rendered as the agent would see it.

The reader opens the store as a steady :class:`memory.api.Notes` (``steady=True``: notes that
do not change during a run are parsed once and kept, the index is refreshed once) and reads
it through that object's public methods only; the rungs' answers are rendered by
:mod:`memory.retrieval.answers`, as the CLI and the MCP server print them. Answers are the
same as those of the ladder over the same files. Each question narrows the store to the notes
it held when the question was asked (:meth:`Notes.leave_out`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from memory.api import Notes
from memory.bench.dense_store import DenseStore
from memory.config import BACKENDS, Config, load_config
from memory.errors import ConfigError
from memory.index import RefreshReport, StoredPart
from memory.model.note import Note
from memory.model.text import split_lines
from memory.retrieval import answers
from memory.retrieval.ladder import SectionMap, Suggestions
from memory.retrieval.levers import DEFAULT, Levers

NOTE_CACHE = 512  # note lines and sections read kept at once (a question reads hundreds)


def bench_config(notes_dir: Path, state_dir: Path, backend: str = "whoosh") -> Config:
    """The store's settings for a run: its index (of ``backend``) outside the bench, no
    usage logging, and no levers from the environment (a run names its own)."""
    if backend not in BACKENDS:
        raise ConfigError(f"{backend!r} is not a search backend; use one of "
                          f"{', '.join(BACKENDS)}")
    return dataclasses.replace(load_config(notes_dir, state_dir), usage_log=False,
                               backend=backend, semantic=False, levers="")


@dataclass(frozen=True)
class Paragraph:
    note: str
    section: str
    score: float
    text: str


class BenchReader:
    """The ladder's rungs and the paragraph search over a bench's store (``config``, from
    :func:`bench_config`), rendered as the agent would see them. Close it when done."""

    def __init__(self, config: Config, levers: Levers = DEFAULT,
                 vectors: Path | None = None) -> None:
        self.notes = Notes(config, notify=lambda _: None, steady=True, levers=levers,
                           vectors=vectors)
        self.levers = levers
        self._lines: OrderedDict[str, list[str]] = OrderedDict()
        self._reads: dict[tuple[str, str], str] = {}
        self._dense: DenseStore | None = None  # the dense curve's blocks, made when asked

    def prepare(self) -> RefreshReport:
        """Build (or refresh) the index once, before the questions, and with the semantic
        lever on, the notes' vectors (not timed with the questions, like the index). No
        ranks table: no prompt hook reads a bench's store (about 0.2 s a run)."""
        report = self.notes.refresh_index(keep_ranks=False)
        if self.levers.semantic:
            self.notes.embed()
        return report

    def exclude(self, note_ids: tuple[str, ...]) -> None:
        """Leave these notes out of every search from now on (the question's scope); an
        empty tuple searches the whole store again."""
        self.notes.leave_out(note_ids)

    def count(self, text: str) -> int:
        return self.notes.count_tokens(text)

    def note_ids(self) -> list[str]:
        return self.notes.note_ids()

    def note(self, note: str) -> Note:
        """The note parsed (kept: the store does not change during a run)."""
        return self.notes.load_note(note).note

    def exists(self, note: str) -> bool:
        return self.notes.has_note(note)

    def suggest(self, query: str, limit: int, context: str | None = None,
                today: dt.date | None = None, by_blocks: bool = True
                ) -> tuple[Suggestions, str]:
        result = self.notes.suggest(query, limit, context, today=today, by_blocks=by_blocks)
        return result, answers.suggestions(result)

    def section_map(self, note: str, query: str, today: dt.date | None = None,
                    context: str | None = None) -> tuple[SectionMap, str]:
        result = self.notes.section_map(note, query, today=today, context=context)
        return result, answers.section_map(result)

    def recall(self, query: str, budgets: tuple[int, ...], context: str | None = None,
               today: dt.date | None = None, hierarchy: bool = True) -> dict[int, str]:
        """The budgeted rung at each budget, rendered, from one search (no session prior:
        a bench has no session)."""
        found = self.notes.recall_at(query, budgets, context, today, hierarchy)
        return {b: answers.recalled(found[b]) for b in budgets}

    def read(self, note: str, section: str) -> str:
        """``read_section`` rendered; the same (note, section) is read from a cache."""
        key = (note, section)
        if key not in self._reads:
            if len(self._reads) > 4 * NOTE_CACHE:
                self._reads.clear()
            self._reads[key] = answers.section_text(self.notes.read_section(note, section))
        return self._reads[key]

    def read_note(self, note: str) -> str:
        """The whole note, as ``notes read NOTE`` prints it."""
        return answers.section_text(self.notes.read_section(note))

    def has_state(self, note: str) -> bool:
        return self.note(note).state is not None

    def paragraphs(self, query: str, k: int, context: str | None = None) -> list[Paragraph]:
        """The ``k`` best paragraphs of the whole store, with their text from the note file;
        ``context`` is blended in as for ``suggest``, so fragments see what the ladder sees."""
        return [self._paragraph(stored, score)
                for stored, score in self.notes.search_paragraphs(query, k, context)]

    def _paragraph(self, stored: StoredPart, score: float) -> Paragraph:
        start, end = stored.lines
        text = "".join(self.note_lines(stored.note_id)[start:end])
        return Paragraph(stored.note_id, stored.section, score, text)

    def dense_paragraphs(self, query: str, k: int) -> list[Paragraph]:
        """The ``k`` blocks of the store (but the question's excluded notes) closest to the
        question by e5's cosine: the dense fragments curve. The whole store's vectors are
        embedded when first asked (kept with the run's vectors) and held as one matrix."""
        if self._dense is None:
            self.notes.embed()
            self._dense = DenseStore(self.notes.dense_reader(), self.notes.load_note,
                                     self.notes.note_ids())
        asked = self.notes.query_vector(query)
        found = self._dense.closest(asked, k, self.notes.left_out())
        return [Paragraph(b.note, b.section, b.cosine,
                          "".join(self.note_lines(b.note)[b.start:b.end])) for b in found]

    def note_lines(self, note: str) -> list[str]:
        found = self._lines.get(note)
        if found is None:
            found = split_lines(self.note(note).text)
            self._lines[note] = found
            if len(self._lines) > NOTE_CACHE:
                self._lines.popitem(last=False)
        return found

    def close(self) -> None:
        self.notes.close()
