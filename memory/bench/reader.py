"""What a policy can read from a bench's store, with the caches a run needs.

The ladder used here is the real one (:class:`memory.retrieval.ladder.Ladder`, rendered with
:mod:`memory.fronts.render`); only its plumbing is adapted to a store that does not change during a
run: parsed notes are kept in a bounded cache instead of being re-read and re-parsed on every
call, and the index is refreshed once instead of being stat-checked on every call. Answers
are the same as those of the ladder over the same files. The ladder searches through a note
scope (:class:`memory.index.ScopedIndex`) that each question sets to leave out the notes the
store did not hold yet when it was asked.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from memory.api import Notes
from memory.bench.dense_store import DenseStore
from memory.config import BACKENDS, Config, load_config
from memory.errors import ConfigError
from memory.fronts import render
from memory.index import (
    RefreshReport,
    ScopedIndex,
    StoredPart,
    make_index,
    parse_query,
)
from memory.model.text import split_lines
from memory.retrieval.ladder import Ladder, SectionMap, Suggestions
from memory.retrieval.levers import DEFAULT, Levers
from memory.retrieval.recall import fill, gather
from memory.state.store import LoadedNote, Store

T = TypeVar("T")
NOTE_CACHE = 512  # parsed notes kept at once (a per-session bench reads hundreds a question)


def bench_config(notes_dir: Path, state_dir: Path, backend: str = "whoosh") -> Config:
    """The store's settings for a run: its index (of ``backend``) outside the bench, no
    usage logging, and no levers from the environment (a run names its own)."""
    if backend not in BACKENDS:
        raise ConfigError(f"{backend!r} is not a search backend; use one of "
                          f"{', '.join(BACKENDS)}")
    return dataclasses.replace(load_config(notes_dir, state_dir), usage_log=False,
                               backend=backend, semantic=False, levers="")


class CachingStore(Store):
    """A store whose notes are parsed once and kept (up to ``size`` of them)."""

    def __init__(self, config: Config, size: int = NOTE_CACHE) -> None:
        super().__init__(config)
        self._cache: OrderedDict[str, LoadedNote] = OrderedDict()
        self._size = size

    def load(self, note_id: str) -> LoadedNote:
        found = self._cache.get(note_id)
        if found is None:
            found = super().load(note_id)
            self._cache[note_id] = found
            if len(self._cache) > self._size:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(note_id)
        return found


@dataclass(frozen=True)
class Paragraph:
    note: str
    section: str
    score: float
    text: str


class BenchReader:
    """The ladder's rungs and the paragraph search, rendered as the agent would see them."""

    def __init__(self, notes: Notes, levers: Levers = DEFAULT,
                 vectors: Path | None = None) -> None:
        self.notes = notes
        self.counter = notes.counter
        self.store = CachingStore(notes.config)
        self.index = make_index(self.store, notes.counter, notes.index.notify)
        # every search goes through the scope, which a question narrows to what the store
        # held when it was asked (``exclude_notes``); the ladder itself is unchanged
        self.scope = ScopedIndex(self.index)
        # the bench's notes do not change while it runs: the index is refreshed once
        self.ladder = Ladder(self.store, self.scope, notes.counter, levers, steady=True,
                             vectors=vectors)
        self._lines: OrderedDict[str, list[str]] = OrderedDict()
        self._reads: dict[tuple[str, str], str] = {}
        self._dense: DenseStore | None = None  # the dense curve's blocks, made when asked

    def prepare(self) -> RefreshReport:
        """Build (or refresh) the index once, before the questions, and with the semantic
        lever on, the notes' vectors (not timed with the questions, like the index)."""
        report = self.index.refresh()
        self.ladder.freshen()  # marks it fresh: the questions refresh nothing
        if self.ladder.levers.semantic:
            self.ladder.router().build()
        return report

    def exclude(self, note_ids: tuple[str, ...]) -> None:
        """Leave these notes out of every search from now on (the question's scope); an
        empty tuple searches the whole store again."""
        self.scope.exclude = note_ids

    def count(self, text: str) -> int:
        return self.counter.count(text)

    def suggest(self, query: str, limit: int, context: str | None = None,
                today: dt.date | None = None, by_blocks: bool = True
                ) -> tuple[Suggestions, str]:
        result = self.ladder.suggest(query, limit, context, today=today, by_blocks=by_blocks)
        return result, render.suggestions(result)

    def section_map(self, note: str, query: str, today: dt.date | None = None,
                    context: str | None = None) -> tuple[SectionMap, str]:
        result = self.ladder.section_map(note, query, today, context)
        return result, render.section_map(result)

    def recall(self, query: str, budgets: tuple[int, ...], context: str | None = None,
               today: dt.date | None = None, hierarchy: bool = True) -> dict[int, str]:
        """The budgeted rung at each budget, rendered, from one search (no session prior:
        a bench has no session)."""
        gathered = gather(self.ladder, query, context, today, hierarchy=hierarchy)
        return {b: render.recalled(fill(self.ladder, gathered, b)) for b in budgets}

    def read(self, note: str, section: str) -> str:
        """``read_section`` rendered; the same (note, section) is read from a cache."""
        key = (note, section)
        if key not in self._reads:
            if len(self._reads) > 4 * NOTE_CACHE:
                self._reads.clear()
            self._reads[key] = render.section_text(self.ladder.read_section(note, section))
        return self._reads[key]

    def read_note(self, note: str) -> str:
        """The whole note, as ``notes read NOTE`` prints it."""
        return render.section_text(self.ladder.read_note(note))

    def has_state(self, note: str) -> bool:
        return self.store.load(note).note.state is not None

    def paragraphs(self, query: str, k: int, context: str | None = None) -> list[Paragraph]:
        """The ``k`` best paragraphs of the whole store, with their text from the note file;
        ``context`` is blended in as for ``suggest``, so fragments see what the ladder sees."""
        hits, _ = self.ladder.search(parse_query(query, context), "paragraph", k)
        return [self._paragraph(h.doc, h.score) for h in hits]

    def _paragraph(self, stored: StoredPart, score: float) -> Paragraph:
        start, end = stored.lines
        text = "".join(self.note_lines(stored.note_id)[start:end])
        return Paragraph(stored.note_id, stored.section, score, text)

    def dense_paragraphs(self, query: str, k: int) -> list[Paragraph]:
        """The ``k`` blocks of the store (but the question's excluded notes) closest to the
        question by e5's cosine: the dense fragments curve. The whole store's vectors are
        embedded when first asked (kept with the run's vectors) and held as one matrix."""
        if self._dense is None:
            self.ladder.router().build()
            self._dense = DenseStore(self.ladder, self.store.note_ids())
        asked = self.ladder.router().query_vector(query)
        found = self._dense.closest(asked, k, frozenset(self.scope.exclude))
        return [Paragraph(b.note, b.section, b.cosine,
                          "".join(self.note_lines(b.note)[b.start:b.end])) for b in found]

    def note_lines(self, note: str) -> list[str]:
        found = self._lines.get(note)
        if found is None:
            found = split_lines(self.store.load(note).note.text)
            self._lines[note] = found
            if len(self._lines) > NOTE_CACHE:
                self._lines.popitem(last=False)
        return found

    def close(self) -> None:
        self.index.close()
