"""The index as the rest of the package sees it: a :class:`SearchIndex` that keeps itself
fresh and hands a typed :class:`Searcher` to the function it runs.

Who needs what: the ladder searches notes, sections and paragraphs and reads a note's stored
fields for the session prior (``Searcher.stored_note``); ``list_notes`` and ``notes status``
list the stored notes; the writes re-index the notes they wrote from the parsed text they
hand over (``index_written``); the watcher and ``notes index`` refresh, rebuild and tidy.
Nothing here imports a backend: :func:`make_index` imports the configured one's package
(:mod:`memory.index.whoosh`, :mod:`memory.index.tantivy`) when an index is made.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

from memory.errors import ConfigError
from memory.index.query import ParsedQuery
from memory.index.stored import Found, PartKind, StoredNote, StoredPart
from memory.state.store import LoadedNote, NoteFile, Store
from memory.state.tokens import TokenCounter

Progress = Callable[[int, int], None]  # (notes done, notes in all)
Observer = Callable[[list[LoadedNote]], None]  # told of the notes the index read itself
Notify = Callable[[str], None]
T = TypeVar("T")


@dataclass
class RefreshReport:
    """What one refresh or rebuild did."""

    indexed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    rebuilt: bool = False
    reason: str = ""


@dataclass(frozen=True)
class WrittenNote:
    """A note a write has just made: its file as written (stat) and its text, parsed."""

    file: NoteFile
    loaded: LoadedNote


class Searcher(Protocol):
    """A point-in-time view of the index: what a search function may ask of it."""

    def search_notes(self, parsed: ParsedQuery, limit: int | None) -> Found[StoredNote]:
        """Notes by BM25F over title, tags and aliases, state and body (``limit`` None:
        every match), best first, and how many matched."""
        ...

    def search_parts(self, parsed: ParsedQuery, kind: PartKind, limit: int | None,
                     note_id: str | None = None) -> Found[StoredPart]:
        """Sections or paragraphs, of the whole store or of one note."""
        ...

    def stored_note(self, note_id: str) -> StoredNote | None:
        """What the index holds of one note (None: it holds nothing of it)."""
        ...

    def stored_notes(self) -> list[StoredNote]:
        """What the index holds of every note, in no particular order."""
        ...

    def without(self, note_ids: frozenset[str]) -> Searcher:
        """The same view with the notes ``note_ids`` left out of every search and of
        :meth:`stored_note`/:meth:`stored_notes`: a filter inside the backend's search, so a
        ``limit`` still returns ``limit`` hits among the other notes, and the count is of
        them only. The left-out notes still count in the words' statistics (idf, average
        lengths): a scope hides notes, it does not re-weigh words. Views compose: a view's
        ``without`` leaves out its own notes and these."""
        ...


class SearchIndex(Protocol):
    """What :class:`memory.api.Notes`, the ladder, the watcher and the bench need of an
    index. What each method raises on purpose is in docs/architecture.md ("Index")."""

    store: Store
    counter: TokenCounter
    notify: Notify
    dir: Path

    def open(self) -> object:
        """The open index (the backend's own handle), built first if it is missing,
        outdated or unreadable."""
        ...

    def close(self) -> None: ...

    def refresh(self, progress: Progress | None = None) -> RefreshReport:
        """Re-index the notes whose files changed since they were indexed."""
        ...

    def update_notes(self, note_ids: list[str]) -> None:
        """Re-index these notes now, reading their files."""
        ...

    def index_written(self, written: list[WrittenNote]) -> None:
        """Re-index notes a write has just made, from the parsed text it hands over: the
        files are not read again, and the observer is not told of them."""
        ...

    def tidy(self) -> int: ...

    def rebuild(self, reason: str = "rebuild requested",
                progress: Progress | None = None) -> RefreshReport: ...

    def run_search(self, fn: Callable[[Searcher], T]) -> T:
        """``fn(searcher)``; a damaged index is rebuilt once and ``fn`` run again."""
        ...

    def searcher(self) -> AbstractContextManager[Searcher]: ...

    def stem_terms(self, text: str) -> frozenset[str]:
        """The distinct terms of ``text`` as the index's stemmed fields have them (what the
        coverage lever compares a message's words with a note's lines by)."""
        ...

    def stemming(self) -> str:
        """Names the stemming of :meth:`stem_terms` (the backend and its analyzers'
        version): terms kept under another name were made by another stemmer."""
        ...


def make_index(store: Store, counter: TokenCounter, notify: Notify,
               observer: Observer | None = None) -> SearchIndex:
    """The index of the configured backend (``store.config.backend``)."""
    if store.config.backend == "tantivy":
        try:
            from memory.index.tantivy import TantivyIndex
        except ImportError as exc:
            raise ConfigError("NOTES_BACKEND=tantivy needs the tantivy package: install the "
                              "extra (pip install 'notes-memory[tantivy]') or unset "
                              f"NOTES_BACKEND ({exc})") from exc
        return TantivyIndex(store, counter, notify, observer)
    from memory.index.whoosh import WhooshIndex

    return WhooshIndex(store, counter, notify, observer)
