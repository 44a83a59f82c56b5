"""Property: any sequence of tool writes and outside edits keeps every entry the tools appended,
in order (hypothesis stateful testing over a real store on disk)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from memory import InvalidArgument, Notes, load_config
from memory.model.note import parse_note

NOTES = ["a", "team/b"]
_text = st.text(st.characters(blacklist_categories=["Cs", "Cc"]), max_size=60)
_title = st.text(st.characters(whitelist_categories=["L", "N", "Zs"]), min_size=1, max_size=20)


class HistoryMachine(RuleBasedStateMachine):
    @initialize()
    def make_store(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="notes-prop-"))
        self.notes = Notes(load_config(self.root), notify=lambda _: None)
        self.appended: dict[str, list[tuple[str, str]]] = {}  # note -> (id, text) in order
        for note in NOTES:
            self.notes.create_note(note, f"Note {note}", ["x"])
            self.appended[note] = []

    def teardown(self) -> None:
        self.notes.close()
        shutil.rmtree(self.root, ignore_errors=True)

    @rule(data=st.data(), title=_title, body=_text)
    def append(self, data: st.DataObject, title: str, body: str) -> None:
        note = data.draw(st.sampled_from(sorted(self.appended)))
        try:
            written = self.notes.append_history(note, title, body, date="2026-11-30")
        except InvalidArgument:
            return
        entry = parse_note(self._path(note).read_text()).section(written.section)
        assert entry is not None
        self.appended[note].append((entry.id, entry.text.rstrip()))

    @rule(data=st.data(), body=_text)
    def write_state(self, data: st.DataObject, body: str) -> None:
        note = data.draw(st.sampled_from(sorted(self.appended)))
        try:
            self.notes.write_state(note, body)
        except InvalidArgument:
            pass

    @rule(data=st.data(), kind=st.sampled_from(["state", "tags", "section", "entry", "crlf"]))
    def outside_edit(self, data: st.DataObject, kind: str) -> None:
        """What a person's editor does without touching past entries."""
        note = data.draw(st.sampled_from(sorted(self.appended)))
        path = self._path(note)
        text = path.read_text()
        if kind == "state":
            text = text.replace("## Current state\n", "## Current state\n- edited by hand\n", 1)
        elif kind == "tags":
            text = text.replace("tags: [x]", "tags: [x, y]", 1)
        elif kind == "section":
            text = text.rstrip("\n") + "\n\n## References\n- a link\n"
        elif kind == "entry" and "## References" not in text:
            text = text.rstrip("\n") + "\n\n### 2026-12-01 · Typed by hand\nhand\n"
        path.write_text(text)

    @invariant()
    def every_appended_entry_is_kept_in_order(self) -> None:
        for note, expected in getattr(self, "appended", {}).items():
            entries = parse_note(self._path(note).read_text()).entries
            found = {e.id: e.text.rstrip() for e in entries}
            order = [e.id for e in entries]
            for entry_id, text in expected:
                assert found.get(entry_id) == text, (note, entry_id)
            positions = [order.index(entry_id) for entry_id, _ in expected]
            assert positions == sorted(positions)

    def _path(self, note: str) -> Path:
        return self.root / f"{note}.md"


HistoryMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=15,
                                           deadline=None)
test_history_is_kept = HistoryMachine.TestCase
test_history_is_kept.pytestmark = [pytest.mark.slow(15)]  # run early: tests/conftest.py
