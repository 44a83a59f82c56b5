"""The upkeep of :class:`memory.api.Notes`, and what the services need of it.

:class:`NotesUpkeep` is a base of ``Notes`` (``Notes`` → ``NotesUpkeep`` → ``NotesWrites``):
the index refreshed, embedded, tidied; the check and the history's repair (through the one
write path); the figures of `notes status`; the usage log read and followed; the watcher.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.api_writes import NotesWrites
from memory.errors import NotesError, StorageError
from memory.index import Progress, RefreshReport
from memory.retrieval.ladder import Ladder
from memory.state.usage import UsageLog

if TYPE_CHECKING:  # the check's and the watcher's modules are imported when first used
    from memory.retrieval.semantic import Built
    from memory.state.check import FileProblem
    from memory.state.integrity import Repair
    from memory.state.usage import CallsRead
    from memory.state.usage_rows import Call
    from memory.state.watch import Watcher


class NotesUpkeep(NotesWrites):
    """Index, check and repair, status, the usage log and the watcher of a store. The parts
    are ``Notes``' (set by its ``__init__``)."""

    _ladder: Ladder
    _usage: UsageLog | None

    # -- maintenance ---------------------------------------------------------------------
    def refresh_index(self, rebuild: bool = False, progress: Progress | None = None,
                      keep_ranks: bool = True) -> RefreshReport:
        """Bring the index up to date (``rebuild``: build it anew); ``keep_ranks``: also
        write cl100k's ranks table, what a cold hook counts its lines with (token_ranks),
        which a store no hook reads (a bench's, in a scratch folder) does without."""
        if rebuild:
            report = self.index.rebuild(progress=progress)
        else:
            self.index.open()
            report = self.index.refresh(progress=progress)
        if keep_ranks:
            self.counter.save_ranks()
        return report

    def embed(self, progress: Progress | None = None) -> Built:
        """Embed the lines of every note changed since its last embedding, for the semantic
        lever (:mod:`memory.retrieval.semantic`); ConfigError without the extra."""
        return self._ladder.router().build(progress)

    def tidy_index(self) -> int:
        """Merge the small index segments that quick commits left; how many were merged."""
        return self.index.tidy()

    def when_idle(self) -> int:
        """What a watcher does once the notes are quiet: merge the small index segments
        (how many), and record the last entries left unrecorded while their files were
        being saved."""
        merged = self.tidy_index()
        self.history.record_deferred()
        return merged

    def check(self) -> list[FileProblem]:
        """Format problems of every note, then history entries changed since recorded."""
        from memory.state.check import check_store

        return check_store(self.store, self.counter) + self.history.problems()

    def restore_history(self, note: str | None = None) -> list[Repair]:
        """Put changed history back as recorded (what it takes out is saved under
        ``<state>/taken-out/``) through the one write path (:attr:`commits`, without its
        merge), which records and re-indexes what it writes."""
        try:
            return self.history.restore(self.commits, note and self.store.note_id_of(note),
                                        self.config.state_dir / "taken-out")
        except sqlite3.Error as exc:
            raise self._ledger_error("restore the history", exc) from exc

    def accept_history(self, note: str | None = None) -> list[Repair]:
        """Take the notes as they are now as what the store knows of them."""
        try:
            return self.history.accept(note)
        except sqlite3.Error as exc:
            raise self._ledger_error("accept the history", exc) from exc

    def _ledger_error(self, doing: str, exc: sqlite3.Error) -> StorageError:
        return StorageError(f"cannot {doing}: the history ledger {self.ledger.path} cannot be "
                            f"used ({exc}): {self.ledger.why_unwritable()}")

    # -- what the services use: status, delete and move, promotion, watch ------------------
    def note_id_of(self, note: str) -> str:
        """The note a name means: the id itself, or for a symbolic link of the store to
        another note, that note's id."""
        return self.store.note_id_of(note)

    def note_path(self, note_id: str) -> Path:
        """The file of a note id (refusing an id that is malformed or leaves the store)."""
        return self.store.path_for(note_id)

    def stem_terms(self, text: str) -> frozenset[str]:
        """The distinct terms of ``text`` as the index stems them."""
        return self.index.stem_terms(text)

    def note_projects(self) -> dict[str, str]:
        """The project of every indexed note that names one, by note id."""
        return self.index.note_projects()

    @property
    def index_dir(self) -> Path:
        return self.index.dir

    def index_figures(self) -> dict[str, Any]:
        """For `notes status`: the backend, the index folder, whether it is built, which
        notes changed or went since indexed, how many notes and tokens; nothing refreshed."""
        from memory.index.scan import changed_files

        folder = self.index.dir
        built = folder.is_dir() and any(folder.iterdir())
        figures: dict[str, Any] = {"backend": self.config.backend, "path": str(folder),
                                   "built": built, "stale": [], "removed": []}
        files = self.store.files()
        figures["notes"] = len(files)
        if not built:
            figures["tokens"] = sum(self.counter.count(self.store.load_path(
                f.note_id, f.path).note.text) for f in files)
            return figures
        known = self.index.run_search(
            lambda searcher: {n.note_id: n for n in searcher.stored_notes()})
        changed, removed, _ = changed_files(self.store.root, known)
        figures["stale"] = [f.note_id for f in changed]
        figures["removed"] = removed
        figures["tokens"] = sum(n.tokens for note_id, n in known.items()
                                if note_id not in removed)
        return figures

    def usage_read(self, since: float = 0.0) -> CallsRead | None:
        """The usage log's calls at or after ``since`` (unix time), with the rows skipped;
        None when the log is off. Raises NotesError when it cannot be read at all."""
        return None if self._usage is None else self._usage.read(since)

    def usage_calls(self, since: float = 0.0) -> list[Call]:
        """The usage log's good calls at or after ``since``; none when it is off or cannot
        be read (one notice)."""
        return [] if self._usage is None else list(self._usage.calls(since))

    def usage_count(self) -> int:
        """How many rows the usage log holds (0 when it is off or cannot be read)."""
        return 0 if self._usage is None else self._usage.count()

    def notify(self, message: str) -> None:
        """Tell the user ``message`` as this store tells its notices (stderr, the server's
        log, or nothing for a hook)."""
        self.index.notify(message)

    def usage_renamed(self, old: str, new: str) -> None:
        """The usage log follows a note renamed on disk (a failure is a notice: the log is
        only what was asked)."""
        if self._usage is not None:
            try:
                self._usage.rename(old, new)
            except (sqlite3.Error, OSError) as exc:
                self.notify(f"notes: the usage log still names {old} ({exc})")

    def replay_clock(self, clock: Callable[[], float]) -> None:
        """Log calls at the times ``clock`` gives (a bench replaying old sessions)."""
        if self._usage is None:
            raise NotesError("the usage log is off (NOTES_USAGE_LOG=0), so there is no clock "
                             "to replay sessions with; turn it on")
        self._usage.clock = clock

    def catch_up(self) -> RefreshReport:
        """Re-index the notes changed on disk since the last look (a watcher's event)."""
        return self.index.refresh()

    def watcher(self, changed: Callable[[list[Path]], None], reconcile: Callable[[], None],
                quiet: float | None = None, on_idle: Callable[[], object] | None = None,
                on_error: Callable[[Exception], None] | None = None) -> Watcher:
        """A watcher of this store's notes folder, its state folder left out (not started:
        ``start()``, then ``stop()``): ``changed`` after the notes saved are quiet for
        ``quiet`` seconds, ``reconcile`` every minute, ``on_idle`` once all is quiet."""
        from memory.state.watch import QUIET_SECONDS, Watcher, print_error

        return Watcher(self.config.notes_dir, changed, reconcile,
                       QUIET_SECONDS if quiet is None else quiet, on_idle=on_idle,
                       on_error=on_error or print_error, ignore=self.config.state_dir)
