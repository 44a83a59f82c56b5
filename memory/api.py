"""The use cases, called alike by the CLI and the MCP server.

``Notes(config)`` composes the store, the token counter, the index and the ladder. Writes are
made under the note's lock, atomically, and re-indexed at once.
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory.config import Config
from memory.errors import (
    EmptyInput,
    NoteBusy,
    NoteExists,
    NoteFormatError,
    NoteNotFound,
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
from memory.state.safe_files import (
    FileChanged,
    Snapshot,
    create_new,
    open_for_writing_elsewhere,
    settled,
)
from memory.state.store import (
    CachingStore,
    LoadedNote,
    NoteFile,
    Store,
    missing_note_message,
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
    from memory.state.integrity import HistoryGuard, Repair
    from memory.state.ledger import Ledger
    from memory.state.usage import CallsRead
    from memory.state.usage_rows import Call
    from memory.state.watch import Watcher

PRIOR_WINDOW_S = 30 * 60  # how far back the session prior looks
DEFAULT_RECALL_BUDGET = 1500
_UNSAFE_TO_WRITE = {"binary", "not-utf8", "too-large", "front-matter-unclosed",
                    "unclosed-block", "too-many-lines", "too-many-sections", "too-many-blocks"}
WRITE_ATTEMPTS = 5  # reads of a note that an editor keeps saving while a tool writes it
EDITOR_WAIT_S = 2.0  # how long a write waits for an editor that holds the note open
MID_SAVE_WAIT_S = 3.0  # ... and for a file that looks half saved and is still changing


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


def _written_stat(path: Path) -> os.stat_result | None:
    """The stat of a note just written (None if it cannot be read: the index reads it)."""
    try:
        return path.stat()
    except OSError:
        return None


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
    def create_note(self, note: str, title: str, tags: list[str] | None = None,
                    aliases: list[str] | None = None, project: str | None = None
                    ) -> WriteResult:
        """A new note with an empty state and history, of ``project`` (None: of no
        project)."""
        from memory.model.edit import new_note_text

        note_id = validate_note_id(note)
        text = new_note_text(title, tags or [], aliases, project)
        with self.store.locked(note_id) as path:
            if path.exists() or not create_new(path, text):
                raise NoteExists(f"note {excerpt(note_id)} already exists; use `notes state` "
                                 "or `notes log` to change it, or pick another id")
            written = _written_stat(path)
        _, warnings = self._after_write(note_id, path, text, written)
        return WriteResult(note_id, "state", self.counter.count(text), path, created=True,
                           warnings=warnings)

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
        from memory.model.edit import with_state

        note_id, path, loaded, warnings = self._change(note,
                                                       lambda n: with_state(n, new_body(n)))
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
        from memory.model.edit import with_entry

        note_id, path, loaded, warnings = self._change(
            note, lambda n: with_entry(n, title, body, date))
        entry = loaded.note.entries[-1]
        return WriteResult(note_id, entry.id, self.counter.count(entry.text), path,
                           warnings=warnings)

    def _change(self, note: str, edit: Callable[[Note], str], merge: bool = True
                ) -> tuple[str, Path, LoadedNote, tuple[str, ...]]:
        """The one write path of an existing note. Under the note's lock: read it (waiting
        for an editor mid-save), put back the recorded entries an editor's stale save
        dropped (``merge``: a three-way merge with the ledger as the base), compute the new
        text, and replace the file only if nobody changed it meanwhile (an editor's save
        between the read and the rename makes it read again). Returns the note as written,
        parsed once (:meth:`_after_write`)."""
        note_id = self.store.note_id_of(note)
        put_back: list[str] = []
        with self.store.locked(note_id) as path:
            for attempt in range(WRITE_ATTEMPTS):
                loaded, snap = self._load_for_write(note_id, path)
                base, put_back = self.history.merge(loaded) if merge else (loaded.note, [])
                text = edit(base)
                try:
                    self.store.replace_if_unchanged(path, text, snap)
                    break
                except FileChanged:
                    time.sleep(0.05 * (attempt + 1))
            else:
                raise NoteBusy(f"{path.name} kept changing while the store tried to write it "
                               "(another program is saving it); nothing was written: retry "
                               "in a moment")
            written = _written_stat(path)
        loaded, warnings = self._after_write(note_id, path, text, written)
        if put_back:
            warnings = (f"put back {len(put_back)} history entr"
                        f"{'y' if len(put_back) == 1 else 'ies'} that a save of {path.name} "
                        f"had dropped: {', '.join(put_back[:5])}", *warnings)
        return note_id, path, loaded, warnings

    def _load_for_write(self, note_id: str, path: Path) -> tuple[LoadedNote, Snapshot]:
        """The note as it is to be written over: when it looks half saved (it lost its
        header or a section, or its last heading is cut) and is still changing, wait for it
        to settle, up to ``MID_SAVE_WAIT_S``; a file that settles so is a person's edit."""
        if not path.is_file():
            raise NoteNotFound(missing_note_message(note_id, self.store.note_ids())
                               + "; or create it with `notes new`")
        deadline = time.monotonic() + MID_SAVE_WAIT_S
        while True:
            self._wait_until_closed(path)
            loaded, snap = self.store.snapshot(note_id, path)
            signs = self.history.mid_save(loaded)
            if not signs or settled(path, snap.size):
                break
            if time.monotonic() >= deadline:
                raise NoteBusy(f"{path.name} is being saved by another program (it lost "
                               f"{', '.join(signs[:2])} and is still changing); nothing was "
                               "written: retry in a few seconds")
            time.sleep(0.1)
        self.history.refuse_empty(loaded)
        blocking = [p for p in loaded.problems if p.code in _UNSAFE_TO_WRITE]
        if blocking:
            first = blocking[0]
            raise NoteFormatError(f"{path.name}:{first.line}: {first.message}; fix the file "
                                  "before writing to it through the tools")
        return loaded, snap

    @staticmethod
    def _wait_until_closed(path: Path) -> None:
        """An editor that holds the note open for writing is mid-save: wait a little for it,
        then refuse rather than write over a half-written file."""
        deadline = time.monotonic() + EDITOR_WAIT_S
        while open_for_writing_elsewhere(path):
            if time.monotonic() >= deadline:
                raise NoteBusy(f"{path.name} is open for writing by another program (an "
                               "editor saving it?); nothing was written: retry once it is "
                               "saved and closed")
            time.sleep(0.05)

    def _after_write(self, note_id: str, path: Path, text: str,
                     written: os.stat_result | None) -> tuple[LoadedNote, tuple[str, ...]]:
        """The one after-write path: parse the written text once, record it in the ledger
        and hand it to the index, which re-indexes it without reading the file again.
        ``written`` is the file's stat taken under the note's lock right after the write;
        when the file is not what was written any more (another size: an editor saved
        since), or the text is past the size the index reads of a note, the index reads the
        file instead. The note is written whatever happens here: a failure is a warning
        that the index will catch up."""
        raw = text.encode("utf-8")
        loaded = self.store.load_bytes(note_id, path, raw, len(raw))
        self.history.observe([loaded], written=True)
        try:
            if written is None or written.st_size != len(raw) or \
                    len(raw) > self.config.max_note_bytes:
                self.index.update_notes([note_id])
            else:
                self.index.index_written([WrittenNote(
                    NoteFile(note_id, path, written.st_mtime_ns, written.st_size), loaded)])
        except Exception as exc:  # the note is safe on disk; the index is derived
            why = str(exc) if isinstance(exc, NotesError) else \
                f"{type(exc).__name__}: {str(exc)[:200]}"
            message = (f"the note is written, but the index could not be updated ({why}); "
                       "searches will catch up once the index can be written")
            self.index.notify(f"notes: {message}")
            return loaded, (message,)
        return loaded, ()

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
        with self.store.locked(note_id) as path:
            if path.exists() or not create_new(path, text):
                raise NoteExists(f"note {excerpt(note_id)} already exists; pick another id")
            written = _written_stat(path)
        _, warnings = self._after_write(note_id, path, text, written)
        return WriteResult(note_id, "note", self.counter.count(text), path, created=True,
                           warnings=warnings)

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
        ``<state>/taken-out/``) through the one write path (:meth:`_change`, without its
        merge), which re-indexes what it writes."""
        def rewrite(note_id: str, edit: Callable[[Note], str]) -> None:
            self._change(note_id, edit, merge=False)

        try:
            repairs = self.history.restore(rewrite, note and self.store.note_id_of(note),
                                           self.config.state_dir / "taken-out")
        except sqlite3.Error as exc:
            raise self._ledger_error("restore the history", exc) from exc
        self._reindex_quietly(sorted({r.note for r in repairs if r.action == "recreated"}))
        return repairs

    def accept_history(self, note: str | None = None) -> list[Repair]:
        """Take the notes as they are now as what the store knows of them."""
        try:
            return self.history.accept(note)
        except sqlite3.Error as exc:
            raise self._ledger_error("accept the history", exc) from exc

    def _ledger_error(self, doing: str, exc: sqlite3.Error) -> StorageError:
        return StorageError(f"cannot {doing}: the history ledger {self.ledger.path} cannot be "
                            f"used ({exc}): {self.ledger.why_unwritable()}")

    def _reindex_quietly(self, note_ids: list[str]) -> None:
        if note_ids:
            try:
                self.index.update_notes(note_ids)
            except Exception as exc:  # derived data: the next search catches up
                self.index.notify(f"notes: the index will catch up later ({exc})")

    # -- what the services use: status, delete and move, promotion, watch ------------------
    def note_id_of(self, note: str) -> str:
        """The note a name means: the id itself, or for a symbolic link of the store to
        another note, that note's id."""
        return self.store.note_id_of(note)

    def note_path(self, note_id: str) -> Path:
        """The file of a note id (refusing an id that is malformed or leaves the store)."""
        return self.store.path_for(note_id)

    def locked(self, note_id: str) -> AbstractContextManager[Path]:
        """Hold the note's write lock (across processes) in the block; its file's path."""
        return self.store.locked(note_id)

    def inner_links(self) -> list[tuple[Path, Path]]:
        """Note files that are symbolic links to another file of the store, and that file."""
        return self.store.inner_links()

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

    def replay_clock(self, clock: Callable[[], float]) -> None:
        """Log calls at the times ``clock`` gives (a bench replaying old sessions)."""
        if self._usage is None:
            raise NotesError("the usage log is off (NOTES_USAGE_LOG=0), so there is no clock "
                             "to replay sessions with; turn it on")
        self._usage.clock = clock

    def record_note(self, note_id: str) -> None:
        """The note as it is on disk now is what the history ledger knows of it (a note
        put back from the trash)."""
        self.history.observe([self.store.load(note_id)], written=True)

    def forget_note(self, note_id: str) -> None:
        """The history ledger forgets a note gone from the store; raises sqlite3.Error."""
        self.ledger.forget(note_id)

    def follow_rename(self, old: str, new: str) -> None:
        """The history ledger and the usage log follow a note renamed on disk: the
        ledger's failure raises sqlite3.Error, the usage log's is a notice."""
        self.ledger.rename(old, new)
        if self._usage is not None:
            try:
                self._usage.rename(old, new)
            except (sqlite3.Error, OSError) as exc:
                self.notify(f"notes: the usage log still names {old} ({exc})")

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
