"""A note scope: a view of a :class:`SearchIndex` whose searches leave a set of notes out.

:class:`ScopedIndex` wraps an index; every searcher it hands out (``run_search``,
``searcher``) is the backend's searcher narrowed with :meth:`Searcher.without`, so a
:class:`memory.retrieval.ladder.Ladder` built over the view sees only the allowed notes with
no change to the retrieval code: ``suggest``, the maps' evidence, ``recall``, the paragraph
search and the hook's evidence all search through it. Everything else (refresh, writes,
rebuild, stemming) is the wrapped index's, unchanged: the scope filters what is found, never
what is indexed.

What it does not hide: a note read by id (``section_map``, ``read_section``, ``read``)
parses the file itself, as it would for any id a caller names; and the excluded notes still
count in the words' statistics (see :meth:`Searcher.without`).

The bench sets the scope per question (``exclude_notes``: what the store did not hold yet
when the question was asked); a project scope can leave out the notes of other projects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from memory.index.interface import Progress, RefreshReport, Searcher, SearchIndex, WrittenNote

T = TypeVar("T")


class ScopedIndex:
    """``index`` with the notes ``exclude`` left out of every search. ``exclude`` may be
    set again between searches (the bench narrows it question by question)."""

    def __init__(self, index: SearchIndex, exclude: Iterable[str] = ()) -> None:
        self.inner = index
        self.store, self.counter, self.notify, self.dir = (index.store, index.counter,
                                                           index.notify, index.dir)
        self._exclude = frozenset(exclude)

    @property
    def exclude(self) -> frozenset[str]:
        return self._exclude

    @exclude.setter
    def exclude(self, note_ids: Iterable[str]) -> None:
        self._exclude = frozenset(note_ids)

    def scoped(self, searcher: Searcher) -> Searcher:
        """The searcher narrowed to this scope (itself when nothing is left out)."""
        return searcher.without(self._exclude) if self._exclude else searcher

    def run_search(self, fn: Callable[[Searcher], T]) -> T:
        return self.inner.run_search(lambda searcher: fn(self.scoped(searcher)))

    @contextmanager
    def searcher(self) -> Iterator[Searcher]:
        with self.inner.searcher() as searcher:
            yield self.scoped(searcher)

    # -- the wrapped index's own, unchanged -------------------------------------------------
    def open(self) -> object:
        return self.inner.open()

    def close(self) -> None:
        self.inner.close()

    def refresh(self, progress: Progress | None = None) -> RefreshReport:
        return self.inner.refresh(progress)

    def update_notes(self, note_ids: list[str]) -> None:
        self.inner.update_notes(note_ids)

    def index_written(self, written: list[WrittenNote]) -> None:
        self.inner.index_written(written)

    def tidy(self) -> int:
        return self.inner.tidy()

    def rebuild(self, reason: str = "rebuild requested",
                progress: Progress | None = None) -> RefreshReport:
        return self.inner.rebuild(reason, progress)

    def stem_terms(self, text: str) -> frozenset[str]:
        return self.inner.stem_terms(text)

    def stemming(self) -> str:
        return self.inner.stemming()
