"""The use cases, called alike by the CLI and the MCP server.

``Notes(config)`` composes the store, the token counter, the index and the ladder. Writes go
through the one write path (:mod:`memory.state.commit`): under the note's lock, atomically,
recorded in the history ledger and re-indexed at once.
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.config import Config
from memory.errors import (
    EmptyInput,
    NoteExists,
    NotesError,
    StorageError,
)
from memory.index import (
    Notify,
    Progress,
    RefreshReport,
    ScopedIndex,
    SearchIndex,
    StoredPart,
    WrittenNote,
    make_index,
    parse_query,
)
from memory.model.results import NoteSummary, WriteResult
from memory.model.text import excerpt, split_lines
from memory.retrieval import answers
from memory.retrieval.ladder import Ladder, SectionMap, SectionText, Suggestions
from memory.retrieval.levers import Levers, store_levers
from memory.state.store import (
    CachingStore,
    LoadedNote,
    NoteFile,
    Store,
    validate_note_id,
)
from memory.state.tokens import CHARS_PER_TOKEN, TokenCounter
from memory.state.usage import UsageLog

if TYPE_CHECKING:  # the writes' and the check's modules are imported when first used
    from memory.model.note import Note, Section
    from memory.retrieval.dense import DenseReader
    from memory.retrieval.recall import Recalled
    from memory.retrieval.semantic import Built
    from memory.state.check import FileProblem
    from memory.state.commit import Committer
    from memory.state.integrity import HistoryGuard, Repair
    from memory.state.ledger import Ledger
    from memory.state.usage import CallsRead
    from memory.state.usage_rows import Call
    from memory.state.watch import Watcher

PRIOR_WINDOW_S = 30 * 60  # how far back the session prior looks
DEFAULT_RECALL_BUDGET = 1500


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


class Notes:
    """One store, ready to serve the ladder and the writes.

    ``front`` names the front end in the usage log (``cli``, ``mcp``, ``hook``, ``lib``);
    every ladder call is logged with a session: the one passed to the call, else the
    configured ``NOTES_SESSION``, else one per parent process (a terminal's shell).

    ``steady=True`` is a store whose notes do not change while it is open (a bench): each
    note is parsed once, the index is refreshed before the first search only, the history
    is not watched, and :meth:`leave_out` narrows every search. ``levers`` replaces the
    configured ones and ``vectors`` is where the semantic lever keeps its vectors.

    ``project`` (set with :meth:`in_project`): the ladder's calls see the notes of that
    project and the notes of no project only (docs/projects.md); None, every note.
    """

    def __init__(self, config: Config, notify: Notify = _stderr, front: str = "lib", *,
                 steady: bool = False, levers: Levers | None = None,
                 vectors: Path | None = None) -> None:
        if levers is None:
            levers = store_levers(config.levers, config.semantic)  # a bad one: nothing opened
        self.config = config
        self.front = front
        self.store = CachingStore(config) if steady else Store(config)
        self.counter = TokenCounter(config.state_dir / "tokens.sqlite", report=notify)
        self._guard = _Guard(self.store, config.state_dir / "ledger.sqlite", notify)
        self.index: SearchIndex = make_index(self.store, self.counter, notify,
                                             None if steady else self._observe)
        # the ladder searches through the scope: a project's (set per call, within) and a
        # steady store's notes left out (leave_out)
        self._scope = ScopedIndex(self.index)
        self._steady = steady
        self._ladder = Ladder(self.store, self._scope, self.counter, levers, steady=steady,
                              vectors=vectors)
        self.project: str | None = None
        self._usage = UsageLog.for_config(config, notify) if config.usage_log else None
        self.default_session = config.session or f"{front}-{os.getppid()}"

    def with_front(self, front: str, default_session: str) -> Notes:
        """This store as another front end uses it (the prompt hook answered by the MCP
        server): the same index, caches and logs, only the usage log's front and default
        session differ. Close the original, not the view."""
        view = copy.copy(self)
        view.front, view.default_session = front, default_session
        return view

    def in_project(self, project: str | None) -> Notes:
        """This store as seen from inside ``project`` (its notes and the notes of no
        project; None: every note); a view, as :meth:`with_front`."""
        view = copy.copy(self)
        view.project = project
        return view

    def scoped(self) -> AbstractContextManager[None]:
        """Inside the block, searches through :attr:`ladder` see only :attr:`project`'s
        notes and the notes of no project (the calls below set it themselves)."""
        return self._scope.within(self.project)

    @property
    def history(self) -> HistoryGuard:
        """The history ledger's guard, opened on first use (a read that indexes nothing
        never needs it), and shared with the views of :meth:`with_front`."""
        return self._guard.get()

    @property
    def ledger(self) -> Ledger:
        return self.history.ledger

    def _observe(self, loaded: list[LoadedNote]) -> None:
        self.history.observe(loaded)
        if self.front != "hook":  # the hook never re-ranks by lines, and the next suggest
            self._ladder.indexed(loaded)  # makes them: a cold hook keeps its time for the prompt

    # -- reading -----------------------------------------------------------------------
    def suggest(self, query: str, limit: int = 5, context: str | None = None,
                session: str | None = None, today: dt.date | None = None,
                by_blocks: bool = True) -> Suggestions:
        with self.scoped():
            result = self._ladder.suggest(query, limit, context,
                                          prior=self.session_prior(session), today=today,
                                          by_blocks=by_blocks)
        self._log(session, "suggest", query=query, tokens=answers.suggestions(result),
                  ranked=tuple(h.note for h in result.hits))
        return result

    def session_prior(self, session: str | None = None) -> dict[str, float]:
        """Notes this session read in the last ``PRIOR_WINDOW_S`` seconds: 1 for the
        latest, 1/2 for the one before, and so on (nothing when usage logging is off)."""
        if self._usage is None:
            return {}
        try:
            recent = self._usage.recent_notes(session or self.default_session,
                                              self._usage.clock() - PRIOR_WINDOW_S)
        except sqlite3.Error:
            return {}  # the prior is a hint: a log it cannot read changes nothing
        return {note: 1 / rank for rank, note in enumerate(recent, start=1)}

    def section_map(self, note: str, query: str | None = None,
                    session: str | None = None, today: dt.date | None = None,
                    context: str | None = None) -> SectionMap:
        with self.scoped():
            result = self._ladder.section_map(note, query, today, context)
        self._log(session, "section_map", query=query or "", note=result.note,
                  tokens=answers.section_map(result))
        return result

    def read_section(self, note: str, section: str | None = None,
                     session: str | None = None) -> SectionText:
        if section is None:
            result = self._ladder.read_note(note)
        else:
            result = self._ladder.read_section(note, section)
        # a block range counts as a read of its section (for the promoter)
        self._log(session, "read_section", note=result.note,
                  section=result.section.partition(":b")[0], tokens=result.tokens)
        return result

    def recall(self, query: str, budget: int = DEFAULT_RECALL_BUDGET,
               context: str | None = None, session: str | None = None,
               today: dt.date | None = None) -> Recalled:
        """The best evidence within ``budget`` tokens (:mod:`memory.retrieval.recall`); every
        section it shows counts as read by this session."""
        with self.scoped():
            result = self._ladder.recall(query, budget, context, today,
                                         prior=self.session_prior(session))
        self._log(session, "recall", query=query, tokens=result.tokens,
                  ranked=tuple(dict.fromkeys(g.note for g in result.groups)))
        for group in result.groups:
            self._log(session, "read_section", query=query, note=group.note,
                      section=group.ref.partition(":")[0], tokens=group.tokens)
        return result

    def recall_at(self, query: str, budgets: Iterable[int], context: str | None = None,
                  today: dt.date | None = None, hierarchy: bool = True
                  ) -> dict[int, Recalled]:
        """``recall`` at each of ``budgets`` from one search, without a session prior and
        not logged (a bench's budgets); ``hierarchy=False`` ranks blocks by their own score
        alone (:func:`memory.retrieval.recall.gather`)."""
        gathered = self._ladder.gather(query, context, today, hierarchy=hierarchy)
        return {b: self._ladder.fill(gathered, b) for b in budgets}

    def search_paragraphs(self, query: str, limit: int, context: str | None = None
                          ) -> list[tuple[StoredPart, float]]:
        """The ``limit`` best paragraphs of the store and their scores, ``context`` blended
        in as for ``suggest``."""
        with self.scoped():
            hits, _ = self._ladder.search(parse_query(query, context), "paragraph", limit)
        return [(h.doc, h.score) for h in hits]

    def block_lines(self, note: str, span: tuple[int, int]) -> str | None:
        """Lines ``span`` (``start``, ``end``: a stored block's ``lines``) of the note's file
        as it is, unparsed (a cold hook that shows one block loads no parser), within what
        is indexed of it (``max_note_bytes``); None when the file went away or is now
        shorter than the block."""
        try:
            raw = self.store.read_head(note)
        except (OSError, NotesError):
            return None
        lines = split_lines(raw.decode("utf-8", errors="replace"))
        start, end = span
        return "".join(lines[start:end]) if end <= len(lines) else None

    def leave_out(self, note_ids: Iterable[str]) -> None:
        """Leave these notes out of every search from now on (a bench's question asked
        before they were written); none: search the whole store again."""
        self._scope.exclude = note_ids

    def left_out(self) -> frozenset[str]:
        return self._scope.exclude

    def note_ids(self) -> list[str]:
        return self.store.note_ids()

    def has_note(self, note: str) -> bool:
        return self.store.exists(note)

    def load_note(self, note: str) -> LoadedNote:
        """The note parsed, as the rungs read it."""
        return self.store.load(note)

    def find_section(self, loaded: LoadedNote, wanted: str) -> Section:
        """A section of ``loaded`` as a user names it (exact id, ``#N``, a unique prefix of
        an id or a date), or an error listing the note's sections."""
        from memory.retrieval.reading import resolve_section

        return resolve_section(loaded, wanted, self.counter)

    def count_tokens(self, text: str, remember: bool = True) -> int:
        """cl100k tokens of ``text``; ``remember=False`` keeps it out of the token cache (a
        measure's one-off texts)."""
        return self.counter.count(text, remember)

    def freshen(self) -> None:
        """Bring the index up to date now (else the first search does); an index that
        cannot be written still serves what it holds."""
        self._ladder.freshen()

    def keep_token_ranks(self) -> None:
        """When this process loaded the token encoding, keep the ranks of what it counted,
        so that the next cold process (a prompt hook) counts them without loading it."""
        if self.counter.encoding_loaded():
            self.counter.save_ranks()

    def notify(self, message: str) -> None:
        """Tell the user ``message`` as this store tells its notices (stderr, the server's
        log, or nothing for a hook)."""
        self.index.notify(message)

    def dense_reader(self) -> DenseReader:
        """The semantic lever's vectors block by block (ConfigError without the extra)."""
        return self._ladder.dense()

    def query_vector(self, query: str) -> object:
        """The semantic lever's vector of ``query`` (ConfigError without the extra)."""
        return self._ladder.router().query_vector(query)

    def _log(self, session: str | None, rung: str, query: str = "", note: str = "",
             section: str = "", tokens: int | str = 0, ranked: tuple[str, ...] = ()) -> None:
        if self._usage is None:
            return
        if isinstance(tokens, int):
            exact: int | None = tokens
            count = tokens
        else:
            exact = self.counter.peek(tokens)
            count = exact if exact is not None else round(len(tokens) / CHARS_PER_TOKEN)
        self._usage.record(session or self.default_session, self.front, rung, query, note,
                          section, count, ranked, exact is not None)

    def list_notes(self, project: str | None = None) -> list[NoteSummary]:
        """Every note this view sees; ``project``: only that project's (``""``: only the
        notes of no project)."""
        self._ladder.freshen()
        with self.scoped():
            stored = self._scope.run_search(lambda searcher: searcher.stored_notes())
        return sorted((NoteSummary(n.note_id, n.title, n.tokens, n.entries, n.date, n.project)
                       for n in stored if project is None or n.project == project),
                      key=lambda n: n.note)

    # -- writing -----------------------------------------------------------------------
    @cached_property
    def commits(self) -> Committer:
        """The one write path of this store (:mod:`memory.state.commit`): every change of a
        note, here and in the services (import, promotion, delete, move), goes through it."""
        from memory.state.commit import Committer

        return Committer(self.store, lambda: self.history, _WriteIndex(self))

    def create_note(self, note: str, title: str, tags: list[str] | None = None,
                    aliases: list[str] | None = None, project: str | None = None
                    ) -> WriteResult:
        """A new note with an empty state and history, of ``project`` (None: of no
        project)."""
        from memory.model.edit import new_note_text

        note_id = validate_note_id(note)
        text = new_note_text(title, tags or [], aliases, project)
        done = self.commits.create(note_id, text)
        if done is None:
            raise NoteExists(f"note {excerpt(note_id)} already exists; use `notes state` "
                             "or `notes log` to change it, or pick another id")
        return WriteResult(note_id, "state", self.counter.count(text), done.path,
                           created=True, warnings=done.warnings)

    def write_state(self, note: str, body: str, allow_empty: bool = False) -> WriteResult:
        """Replace the state section's body whole (its heading is kept). An empty body is
        refused unless ``allow_empty`` (it would erase the state)."""
        if not body.strip() and not allow_empty:
            raise EmptyInput("the new state is empty, so it would erase the state; give the "
                             "state's text (to clear it on purpose: `notes state NOTE "
                             "--allow-empty`)")
        return self.update_state(note, lambda _: body)

    def update_state(self, note: str, new_body: Callable[[Note], str]) -> WriteResult:
        """Replace the state with ``new_body(note)``, computed from the note as it is under
        the lock (a read-modify-write such as a promotion)."""
        from memory.model.edit import state_replaced

        note_id, path, loaded, warnings = self._change(
            note, lambda n: state_replaced(n, new_body(n)))
        state = loaded.note.state
        return WriteResult(note_id, "state", self.counter.count(state.text if state else ""),
                           path, warnings=warnings)

    def append_history(self, note: str, title: str, body: str, date: str | None = None,
                       allow_empty: bool = False) -> WriteResult:
        """Add a dated entry at the end of the history; older entries are not touched. An
        empty body is refused unless ``allow_empty`` (a title-only entry)."""
        if not body.strip() and not allow_empty:
            raise EmptyInput("the entry's text is empty; give what happened (for a title-only "
                             "entry on purpose: `notes log NOTE --title … --allow-empty`)")
        from memory.model.edit import entry_added

        note_id, path, loaded, warnings = self._change(
            note, lambda n: entry_added(n, title, body, date))
        entry = loaded.note.entries[-1]
        return WriteResult(note_id, entry.id, self.counter.count(entry.text), path,
                           warnings=warnings)

    def _change(self, note: str, edit: Callable[[Note], Note | str], merge: bool = True
                ) -> tuple[str, Path, LoadedNote, tuple[str, ...]]:
        """A change of an existing note through the one write path
        (:meth:`Committer.commit`: locked, merged with the ledger unless not ``merge``,
        compare-and-swap, recorded, re-indexed); the note as written, parsed once."""
        done = self.commits.commit(note, edit, merge)
        return done.note_id, done.path, done.loaded, done.warnings

    def rewrite_note(self, note: str, edit: Callable[[Note], str]) -> WriteResult:
        """Replace the note's text with ``edit(note)``, computed from the note as it is under
        the lock, through the one write path (an import merging a changed source in)."""
        note_id, path, loaded, warnings = self._change(note, edit)
        return WriteResult(note_id, "note", self.counter.count(loaded.note.text), path,
                           warnings=warnings)

    def create_note_from_text(self, note: str, text: str) -> WriteResult:
        """Create a note whose whole text is given (`notes init`'s starter, `notes import`);
        refused if the id exists. The caller composes ``text`` in the note format."""
        note_id = validate_note_id(note)
        done = self.commits.create(note_id, text)
        if done is None:
            raise NoteExists(f"note {excerpt(note_id)} already exists; pick another id")
        return WriteResult(note_id, "note", self.counter.count(text), done.path, created=True,
                           warnings=done.warnings)

    # -- maintenance ---------------------------------------------------------------------
    def refresh_index(self, rebuild: bool = False,
                      progress: Progress | None = None) -> RefreshReport:
        if rebuild:
            report = self.index.rebuild(progress=progress)
        else:
            self.index.open()
            report = self.index.refresh(progress=progress)
        self.counter.save_ranks()  # what a cold hook counts its lines with (token_ranks)
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

    def close(self) -> None:
        self.counter.flush()
        self._ladder.close()
        self.index.close()
        if self._usage is not None:
            self._usage.close()
        self._guard.close()


class _WriteIndex:
    """The index step of the one write path (:class:`memory.state.commit.Indexer`): a note
    just written is re-indexed from its parse, without reading the file again, unless the
    file is not what was written any more (another size: an editor saved since) or is past
    the size the index reads of a note, when the index reads the file instead. The note is
    written whatever happens here: a failure is a warning that the index will catch up."""

    def __init__(self, notes: Notes) -> None:
        self.index, self.limit = notes.index, notes.config.max_note_bytes

    def written(self, loaded: LoadedNote, stat: os.stat_result | None) -> tuple[str, ...]:
        if stat is None or stat.st_size != loaded.size or stat.st_size > self.limit:
            return self.changed([loaded.note_id])
        return self._quietly(lambda: self.index.index_written([WrittenNote(
            NoteFile(loaded.note_id, loaded.path, stat.st_mtime_ns, stat.st_size), loaded)]))

    def changed(self, note_ids: list[str]) -> tuple[str, ...]:
        return self._quietly(lambda: self.index.update_notes(note_ids))

    def _quietly(self, update: Callable[[], None]) -> tuple[str, ...]:
        try:
            update()
        except Exception as exc:  # the note is safe on disk; the index is derived
            why = str(exc) if isinstance(exc, NotesError) else \
                f"{type(exc).__name__}: {str(exc)[:200]}"
            message = (f"the note is written, but the index could not be updated ({why}); "
                       "searches will catch up once the index can be written")
            self.index.notify(f"notes: {message}")
            return (message,)
        return ()


class _Guard:
    """The history guard and its ledger, made when first asked for."""

    def __init__(self, store: Store, ledger_path: Path, notify: Notify) -> None:
        self._store, self._path, self._notify = store, ledger_path, notify
        self._guard: HistoryGuard | None = None
        self._lock = threading.Lock()

    def get(self) -> HistoryGuard:
        with self._lock:
            if self._guard is None:
                from memory.state.integrity import HistoryGuard
                from memory.state.ledger import Ledger

                self._guard = HistoryGuard(self._store, Ledger(self._path), self._notify)
            return self._guard

    def close(self) -> None:
        with self._lock:
            if self._guard is not None:
                self._guard.ledger.close()
