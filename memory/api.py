"""The use cases, called alike by the CLI and the MCP server.

``Notes(config)`` composes the store, the token counter, the index and the ladder; this module
holds its construction, its views and the reads (the ladder's rungs, logged in the usage log).
Its other methods are in two bases, so that each module stays short:

- :class:`memory.api_writes.NotesWrites`: the writes, through the one write path
  (:mod:`memory.state.commit`): under the note's lock, atomically, recorded in the history
  ledger and re-indexed at once;
- :class:`memory.api_upkeep.NotesUpkeep`: the index's upkeep, the check and the history's
  repair, the figures of `notes status`, the usage log read, the watcher.

No module but these three imports the bases (tests/test_import_rules.py): callers use
``Notes``.
"""

from __future__ import annotations

import copy
import datetime as dt
import os
import sqlite3
import sys
from collections.abc import Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from memory.api_upkeep import NotesUpkeep
from memory.api_writes import _Guard
from memory.config import Config
from memory.errors import NotesError
from memory.index import (
    Notify,
    ScopedIndex,
    SearchIndex,
    StoredPart,
    make_index,
    parse_query,
)
from memory.model.text import split_lines
from memory.retrieval import answers
from memory.retrieval.ladder import Ladder, SectionMap, SectionText, Suggestions
from memory.retrieval.levers import Levers, store_levers
from memory.state.store import CachingStore, LoadedNote, Store
from memory.state.tokens import CHARS_PER_TOKEN, TokenCounter
from memory.state.usage import UsageLog

if TYPE_CHECKING:
    from memory.model.note import Section
    from memory.model.results import NoteSummary
    from memory.retrieval.dense import DenseReader
    from memory.retrieval.recall import Recalled

PRIOR_WINDOW_S = 30 * 60  # how far back the session prior looks
DEFAULT_RECALL_BUDGET = 1500


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


class Notes(NotesUpkeep):
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
        """When this process read cl100k's ranks (loaded the token encoding, or read the
        bundled ranks file), keep them in a table, so that the next cold process (a prompt
        hook) counts without reading them again."""
        if self.counter.ranks_read():
            self.counter.save_ranks()

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
        from memory.model.results import NoteSummary  # `notes list`'s only (start-up time)

        self._ladder.freshen()
        with self.scoped():
            stored = self._scope.run_search(lambda searcher: searcher.stored_notes())
        return sorted((NoteSummary(n.note_id, n.title, n.tokens, n.entries, n.date, n.project)
                       for n in stored if project is None or n.project == project),
                      key=lambda n: n.note)

    def close(self) -> None:
        self.counter.flush()
        self._ladder.close()
        self.index.close()
        if self._usage is not None:
            self._usage.close()
        self._guard.close()

