"""The use cases, called alike by the CLI and the MCP server.

``Notes(config)`` composes the store, the token counter, the index and the ladder. Writes are
made under the note's lock, atomically, and re-indexed at once.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import sys
from pathlib import Path
from typing import cast

from . import render
from .backends.base import SearchIndex, make_index
from .check import FileProblem, check_store
from .config import Config
from .edit import new_note_text, with_entry, with_state
from .errors import NoteExists, NoteFormatError, NoteNotFound
from .index import NoteIndex, Notify, Progress, RefreshReport
from .integrity import HistoryGuard
from .ladder import Ladder, SectionMap, SectionText, Suggestions
from .ledger import Ledger
from .note import parse_note
from .recall import Recalled, recall
from .results import NoteSummary, WriteResult
from .store import LoadedNote, Store, missing_note_message, validate_note_id
from .tokens import CHARS_PER_TOKEN, TokenCounter
from .usage import UsageLog

PRIOR_WINDOW_S = 30 * 60  # how far back the session prior looks
DEFAULT_RECALL_BUDGET = 1500
_UNSAFE_TO_WRITE = {"binary", "not-utf8", "too-large", "front-matter-unclosed"}


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


class Notes:
    """One store, ready to serve the ladder and the writes.

    ``front`` names the front end in the usage log (``cli``, ``mcp``, ``hook``, ``lib``);
    every ladder call is logged with a session: the one passed to the call, else the
    configured ``NOTES_SESSION``, else one per parent process (a terminal's shell).
    """

    def __init__(self, config: Config, notify: Notify = _stderr, front: str = "lib") -> None:
        self.config = config
        self.front = front
        self.store = Store(config)
        self.counter = TokenCounter(config.state_dir / "tokens.sqlite")
        self.ledger = Ledger(config.state_dir / "ledger.sqlite")
        self.index: SearchIndex = make_index(self.store, self.counter, notify, self._observe)
        # HistoryGuard only calls refresh() and update_notes(), which every backend has
        self.history = HistoryGuard(self.store, self.ledger, cast(NoteIndex, self.index),
                                    notify)
        self.ladder = Ladder(self.store, self.index, self.counter)
        self.usage = UsageLog(config.state_dir / "usage.sqlite", config.usage_retention_days,
                              notify) if config.usage_log else None
        self.default_session = config.session or f"{front}-{os.getppid()}"

    def _observe(self, loaded: list[LoadedNote]) -> None:
        self.history.observe(loaded)

    # -- reading -----------------------------------------------------------------------
    def suggest(self, query: str, limit: int = 5, context: str | None = None,
                session: str | None = None) -> Suggestions:
        result = self.ladder.suggest(query, limit, context, prior=self.session_prior(session))
        self._log(session, "suggest", query=query, tokens=render.suggestions(result),
                  ranked=tuple(h.note for h in result.hits))
        return result

    def session_prior(self, session: str | None = None) -> dict[str, float]:
        """Notes this session read in the last ``PRIOR_WINDOW_S`` seconds: 1 for the
        latest, 1/2 for the one before, and so on (nothing when usage logging is off)."""
        if self.usage is None:
            return {}
        try:
            recent = self.usage.recent_notes(session or self.default_session,
                                             self.usage.clock() - PRIOR_WINDOW_S)
        except sqlite3.Error:
            return {}  # the prior is a hint: a log it cannot read changes nothing
        return {note: 1 / rank for rank, note in enumerate(recent, start=1)}

    def section_map(self, note: str, query: str | None = None,
                    session: str | None = None, today: dt.date | None = None) -> SectionMap:
        result = self.ladder.section_map(note, query, today)
        self._log(session, "section_map", query=query or "", note=result.note,
                  tokens=render.section_map(result))
        return result

    def read_section(self, note: str, section: str | None = None,
                     session: str | None = None) -> SectionText:
        if section is None:
            result = self.ladder.read_note(note)
        else:
            result = self.ladder.read_section(note, section)
        # a block range counts as a read of its section (for the promoter)
        self._log(session, "read_section", note=result.note,
                  section=result.section.partition(":b")[0], tokens=result.tokens)
        return result

    def recall(self, query: str, budget: int = DEFAULT_RECALL_BUDGET,
               context: str | None = None, session: str | None = None,
               today: dt.date | None = None) -> Recalled:
        """The best evidence within ``budget`` tokens (:mod:`memory.recall`); every section
        it shows counts as read by this session."""
        result = recall(self.ladder, query, budget, context, today,
                        prior=self.session_prior(session))
        self._log(session, "recall", query=query, tokens=result.tokens,
                  ranked=tuple(dict.fromkeys(g.note for g in result.groups)))
        for group in result.groups:
            self._log(session, "read_section", query=query, note=group.note,
                      section=group.ref.partition(":")[0], tokens=group.tokens)
        return result

    def _log(self, session: str | None, rung: str, query: str = "", note: str = "",
             section: str = "", tokens: int | str = 0, ranked: tuple[str, ...] = ()) -> None:
        if self.usage is None:
            return
        if isinstance(tokens, int):
            exact: int | None = tokens
            count = tokens
        else:
            exact = self.counter.peek(tokens)
            count = exact if exact is not None else round(len(tokens) / CHARS_PER_TOKEN)
        self.usage.record(session or self.default_session, self.front, rung, query, note,
                          section, count, ranked, exact is not None)

    def list_notes(self) -> list[NoteSummary]:
        self.index.refresh()

        def collect(searcher: object) -> list[NoteSummary]:
            docs = searcher.documents(kind="note")  # type: ignore[attr-defined]
            return [NoteSummary(d["note_id"], d.get("title") or "", d.get("tokens") or 0,
                                d.get("entries") or 0, d.get("date")) for d in docs]

        return sorted(self.index.run_search(collect), key=lambda n: n.note)

    # -- writing -----------------------------------------------------------------------
    def create_note(self, note: str, title: str, tags: list[str] | None = None,
                    aliases: list[str] | None = None) -> WriteResult:
        note_id = validate_note_id(note)
        text = new_note_text(title, tags or [], aliases)
        with self.store.locked(note_id) as path:
            if path.exists():
                raise NoteExists(f"note {note_id!r} already exists; use `notes state` or "
                                 "`notes log` to change it, or pick another id")
            self.store.write_atomic(path, text)
        self._after_write(note_id, path)
        return WriteResult(note_id, "state", self.counter.count(text), path, created=True)

    def write_state(self, note: str, body: str) -> WriteResult:
        """Replace the state section's body whole (its heading is kept)."""
        with self.store.locked(note) as path:
            loaded = self._load_for_write(note, path)
            text = with_state(loaded.note, body)
            self.store.write_atomic(path, text)
        self._after_write(loaded.note_id, path)
        state = parse_note(text).state
        return WriteResult(loaded.note_id, "state", self.counter.count(state.text if state
                                                                         else ""), path)

    def append_history(self, note: str, title: str, body: str,
                       date: str | None = None) -> WriteResult:
        """Add a dated entry at the end of the history; older entries are not touched."""
        with self.store.locked(note) as path:
            loaded = self._load_for_write(note, path)
            text = with_entry(loaded.note, title, body, date)
            self.store.write_atomic(path, text)
        self._after_write(loaded.note_id, path)
        entry = parse_note(text).entries[-1]
        return WriteResult(loaded.note_id, entry.id, self.counter.count(entry.text), path)

    def _after_write(self, note_id: str, path: Path) -> None:
        """Record the new entries in the ledger and re-index the note, at once."""
        self.history.observe([self.store.load_path(note_id, path)])
        self.index.update_notes([note_id])

    def _load_for_write(self, note: str, path: Path) -> LoadedNote:
        if not path.is_file():
            raise NoteNotFound(missing_note_message(note, self.store.note_ids())
                               + "; or create it with `notes new`")
        loaded = self.store.load_path(validate_note_id(note), path)
        blocking = [p for p in loaded.problems if p.code in _UNSAFE_TO_WRITE]
        if blocking:
            first = blocking[0]
            raise NoteFormatError(f"{path}:{first.line}: {first.message}; fix the file before "
                                  "writing to it through the tools")
        return loaded

    def create_note_from_text(self, note: str, text: str) -> WriteResult:
        """Create a note whose whole text is given (`notes init`'s starter, `notes import`);
        refused if the id exists. The caller composes ``text`` in the note format."""
        note_id = validate_note_id(note)
        with self.store.locked(note_id) as path:
            if path.exists():
                raise NoteExists(f"note {note_id!r} already exists; pick another id")
            self.store.write_atomic(path, text)
        self._after_write(note_id, path)
        return WriteResult(note_id, "note", self.counter.count(text), path, created=True)

    # -- maintenance ---------------------------------------------------------------------
    def refresh_index(self, rebuild: bool = False,
                      progress: Progress | None = None) -> RefreshReport:
        if rebuild:
            return self.index.rebuild(progress=progress)
        self.index.open()
        return self.index.refresh(progress=progress)

    def tidy_index(self) -> int:
        """Merge the small index segments that quick commits left; how many were merged."""
        return self.index.tidy()

    def check(self) -> list[FileProblem]:
        """Format problems of every note, then history entries changed since recorded."""
        return check_store(self.store, self.counter) + self.history.problems()

    def close(self) -> None:
        self.counter.flush()
        self.index.close()
        if self.usage is not None:
            self.usage.close()
        self.ledger.close()
