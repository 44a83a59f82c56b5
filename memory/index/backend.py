"""What an index backend supplies to the life cycle (:mod:`memory.index.lifecycle`).

:class:`IndexBackend` holds the state every backend shares (its store, token counter, folder,
lock and build settings) and names what a backend must write itself: its files (open, create,
probe, close), its searcher, what it stores of each note, and a :class:`NoteWriter`. The life
cycle built on it, :class:`memory.index.lifecycle.IndexLifecycle`, is what a backend
subclasses.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from memory.index.interface import Notify, Observer, Searcher
from memory.index.stored import StoredNote
from memory.state.store import Store
from memory.state.tokens import TokenCounter

H = TypeVar("H")  # the backend's open index


class ParallelBuildFailed(Exception):
    """A worker of a parallel build died or its part is missing; build in one process."""


class NoteWriter(Protocol):
    """One write to the index: what the life cycle's writes ask of a backend."""

    def delete(self, note_id: str) -> None:
        """Drop every document of a note."""

    def put(self, note_id: str, documents: list[dict[str, Any]]) -> None:
        """Make these the note's documents (a new index: add them)."""

    def commit(self) -> None:
        """Make what was written so far searchable."""


def _quiet(_: str) -> None:
    return None


def no_beat() -> None:
    """The heartbeat when no build lock is held."""
    return None


class IndexBackend(ABC, Generic[H]):
    """The parts of an index that a backend supplies, and the state the life cycle keeps."""

    FOLDER: ClassVar[str]  # the index's folder in the state folder
    WRITER_TIMEOUT: ClassVar[float] = 30.0  # seconds to wait for another process's writer
    BATCH: ClassVar[int | None] = None  # notes per commit (None: one commit per write)
    DISK_ERRORS: ClassVar[tuple[type[BaseException], ...]] = (OSError,)
    BUSY: ClassVar[tuple[type[BaseException], ...]] = ()  # another process is writing

    def __init__(self, store: Store, counter: TokenCounter, notify: Notify = _quiet,
                 observer: Observer | None = None) -> None:
        self.store = store
        self.counter = counter
        self.notify = notify
        self.observer = observer  # told of every note the index read, after its commit
        self.dir = store.config.state_dir / self.FOLDER
        self.lock_path = self.dir.with_name(f"{self.FOLDER}.lock")  # held by a rebuild
        self._ix: H | None = None
        self._lock = threading.RLock()  # one writer at a time inside this process
        self._cleaned = False  # leftovers of killed builds removed (at the first open)
        self._builds = 0  # complete builds this process made (rebuilds)
        self._heartbeat: Callable[[], None] = no_beat  # the build lock's, during a rebuild
        self.build_procs: int | None = None  # processes for rebuilds; None: the backend's
        self.last_build_procs = 1  # processes the last rebuild was started with
        self._projects: tuple[Mapping[str, StoredNote], dict[str, str]] | None = None

    # -- what a backend supplies ---------------------------------------------------------
    @abstractmethod
    def version(self) -> dict[str, Any]:
        """What ``version.json`` must hold for the index to be used as it is."""

    @abstractmethod
    def _present(self) -> bool:
        """The index's files are in :attr:`dir` (not whether they can be read)."""

    @abstractmethod
    def _probe(self) -> H:
        """Open the index in :attr:`dir` and read a little of it; returns it open (what
        :meth:`open` then uses: the files are opened once). Raises if it cannot be read."""

    @abstractmethod
    def _unreadable(self, exc: BaseException) -> bool:
        """Whether ``exc``, raised opening or reading the index, means its files are
        damaged (then it is rebuilt), rather than a failure to pass on."""

    @abstractmethod
    def _open_files(self, folder: Path) -> H: ...

    @abstractmethod
    def _create_files(self, folder: Path) -> H:
        """A new, empty index in ``folder`` (which may not exist yet)."""

    @abstractmethod
    def close(self) -> None:
        """Close the index's files and forget what was cached of them."""

    @abstractmethod
    def _acquire(self) -> Searcher:
        """A searcher over the index as it is now (opened or built first if need be)."""

    def _release(self) -> None:
        """The searcher :meth:`_acquire` gave is no longer used."""

    @abstractmethod
    def _stored_notes(self) -> Mapping[str, StoredNote]:
        """What the index holds of each note, by note id (cached as the backend sees fit)."""

    @abstractmethod
    def _writer(self, ix: H, folder: Path, building: bool,
                procs: int) -> AbstractContextManager[NoteWriter]:
        """A writer for ``ix`` (in ``folder``); leaving it by an exception gives up what was
        not committed and releases every lock. ``building``: a new, empty index."""

    @abstractmethod
    def tidy(self) -> int:
        """Merge what quick commits left to merge; how many parts were merged."""

    @abstractmethod
    def stem_terms(self, text: str) -> frozenset[str]:
        """The distinct terms of ``text`` as the stemmed fields have them."""

    def stemming(self) -> str:
        return f"{self.FOLDER}-{self.version()['analyzer']}"

    def _build_procs(self, notes: int) -> int:
        """Processes to build a new index of ``notes`` notes with (1: this one alone)."""
        return 1

    def _check_build(self, ix: H, procs: int) -> None:
        """Raise ParallelBuildFailed if a build with ``procs`` processes came out short."""

    def _build_failed(self, exc: BaseException) -> None:
        """Clean up after a build that failed with ``exc`` (before its folder is removed)."""

