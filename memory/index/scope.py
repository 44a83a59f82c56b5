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
when the question was asked). A project scope (:meth:`ScopedIndex.within`) leaves out the
notes of every other project, for the calls made inside it: which notes those are is read
when each search starts (after the ladder's refresh, so a note moved to another project a
moment ago is already left out), from the projects the index stores
(:meth:`SearchIndex.note_projects`). It is set per thread (a context variable), so the MCP
server can answer the prompt hook of one project while a tool call of another runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
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
        self._project: ContextVar[str | None] = ContextVar(f"notes-project-{id(self)}",
                                                           default=None)
        self._left_out: tuple[dict[str, str], str, frozenset[str]] | None = None

    @contextmanager
    def within(self, project: str | None) -> Iterator[None]:
        """Inside the block (in this thread), searches see the notes of ``project`` and
        the notes of no project only; ``None``: every note."""
        token = self._project.set(project)
        try:
            yield
        finally:
            self._project.reset(token)

    def other_projects(self, project: str | None) -> frozenset[str]:
        """The notes of every project but ``project`` (none when ``project`` is None)."""
        if project is None:
            return frozenset()
        projects = self.inner.note_projects()
        kept = self._left_out
        if kept is not None and kept[0] is projects and kept[1] == project:
            return kept[2]
        found = frozenset(n for n, p in projects.items() if p != project)
        self._left_out = (projects, project, found)
        return found

    def _excluded(self) -> frozenset[str]:
        project = self._project.get()
        return self._exclude | self.other_projects(project) if project is not None \
            else self._exclude

    @property
    def exclude(self) -> frozenset[str]:
        return self._exclude

    @exclude.setter
    def exclude(self, note_ids: Iterable[str]) -> None:
        self._exclude = frozenset(note_ids)

    def scoped(self, searcher: Searcher, exclude: frozenset[str] | None = None) -> Searcher:
        """The searcher narrowed to this scope (itself when nothing is left out)."""
        left_out = self._excluded() if exclude is None else exclude
        return searcher.without(left_out) if left_out else searcher

    def run_search(self, fn: Callable[[Searcher], T]) -> T:
        left_out = self._excluded()  # before the searcher is taken: it may read the index
        return self.inner.run_search(lambda searcher: fn(self.scoped(searcher, left_out)))

    @contextmanager
    def searcher(self) -> Iterator[Searcher]:
        left_out = self._excluded()
        with self.inner.searcher() as searcher:
            yield self.scoped(searcher, left_out)

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

    def note_projects(self) -> dict[str, str]:
        return self.inner.note_projects()

    def rebuild(self, reason: str = "rebuild requested",
                progress: Progress | None = None) -> RefreshReport:
        return self.inner.rebuild(reason, progress)

    def stem_terms(self, text: str) -> frozenset[str]:
        return self.inner.stem_terms(text)

    def stemming(self) -> str:
        return self.inner.stemming()
