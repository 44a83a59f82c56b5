"""The interface every index backend offers the ladder, the writes and the watcher."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from memory.errors import ConfigError
from memory.index import NoteIndex, Notify, Observer, Progress, RefreshReport
from memory.state.store import Store
from memory.state.tokens import TokenCounter


class SearchIndex(Protocol):
    """What :class:`memory.api.Notes` needs of an index.

    ``run_search(fn)`` calls ``fn(searcher)``; the searcher is backend-specific and is only
    handed to :func:`memory.search.search` and read with ``searcher.documents(**terms)``.
    """

    store: Store
    counter: TokenCounter
    notify: Notify
    dir: Path

    def open(self) -> Any: ...

    def close(self) -> None: ...

    def refresh(self, progress: Progress | None = None) -> RefreshReport: ...

    def update_notes(self, note_ids: list[str]) -> None: ...

    def tidy(self) -> int: ...

    def rebuild(self, reason: str = "rebuild requested",
                progress: Progress | None = None) -> RefreshReport: ...

    def run_search(self, fn: Callable[[Any], Any]) -> Any: ...

    def searcher(self) -> AbstractContextManager[Any]: ...


def make_index(store: Store, counter: TokenCounter, notify: Notify,
               observer: Observer | None = None) -> SearchIndex:
    """The index of the configured backend (``store.config.backend``)."""
    if store.config.backend == "tantivy":
        try:
            from memory.backends.tantivy_index import TantivyIndex
        except ImportError as exc:
            raise ConfigError("NOTES_BACKEND=tantivy needs the tantivy package: install the "
                              "extra (pip install 'notes-memory[tantivy]') or unset "
                              f"NOTES_BACKEND ({exc})") from exc
        return TantivyIndex(store, counter, notify, observer)
    return NoteIndex(store, counter, notify, observer)
