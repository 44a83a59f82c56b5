"""Nothing lost, nobody locked out (issue #33): history under odd headings, half-written
entries, setext headings, CRLF notes, the merge that replaced the lockout, and links.

Each test here failed on 194e523 (the commit the issue was filed against)."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from conftest import RunCli
from memory import Notes, load_config
from memory.errors import NoteBusy, NoteFormatError
from memory.model.note import parse_note
from stand_ins import stand_in


def _aged(path: Path, seconds: float = 30.0) -> None:
    """Make the file look saved ``seconds`` ago (a person's edit, not a save under way)."""
    then = time.time() - seconds
    os.utime(path, (then, then))


def _write(path: Path, text: str | bytes, aged: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    if aged:
        _aged(path)


def _recorded(store: Path, note: str) -> list[tuple[str, str]]:
    db = sqlite3.connect(store / ".notes" / "ledger.sqlite")
    try:
        return [(str(e), str(t)) for e, t in db.execute(
            "SELECT entry, text FROM entries WHERE note = ? ORDER BY seq", (note,))]
    finally:
        db.close()


NOTE = """---
title: A
---
# A

## Current state
- old state

## History

### 2026-11-01 · First
one

### 2026-11-02 · Second
two
"""


# -- item 1: history under an H1, or indented into the state ------------------------------
def test_an_h1_history_is_the_history_and_a_state_write_keeps_it(run_cli: RunCli,
                                                                  empty_store: Path) -> None:
    path = empty_store / "a.md"
    _write(path, NOTE.replace("## History", "# History"))
    assert run_cli("--notes", str(empty_store), "check").returncode == 0
    assert run_cli("--notes", str(empty_store), "state", "a", input="- NEW\n").returncode == 0
    note = parse_note(path.read_text())
    assert [e.title for e in note.entries] == ["First", "Second"]
    assert note.state is not None and note.state.body.strip() == "- NEW"
    assert [e for e, _ in _recorded(empty_store, "a")] == ["2026-11-01-first",
                                                            "2026-11-02-second"]


@pytest.mark.parametrize("shape", [
    "- old state\n  ## History\n\n  ### 2026-11-01 · First\n  one\n",
    "- old state\n  ## History\n\n### 2026-11-01 · First\none\n",
    "- old state\n\n### 2026-11-01 · First\none\n",
])
def test_history_inside_the_state_is_reported_and_a_state_write_refused(
        run_cli: RunCli, empty_store: Path, shape: str) -> None:
    path = empty_store / "a.md"
    text = "---\ntitle: A\n---\n# A\n\n## Current state\n" + shape
    _write(path, text)
    checked = run_cli("--notes", str(empty_store), "check")
    assert checked.returncode == 1 and "history-in-state" in checked.stdout
    line = next(n for n, x in enumerate(text.splitlines(), 1) if "2026-11-01" in x
                or "## History" in x)
    assert f"a.md:{line}:" in checked.stdout
    state = run_cli("--notes", str(empty_store), "state", "a", input="- NEW\n")
    assert state.returncode == 1 and f"line {line}:" in state.stderr
    assert "nothing was written" in state.stderr and "Traceback" not in state.stderr
    assert path.read_text() == text


# -- item 2: never record a half-written entry ---------------------------------------------
PART_WRITER = r"""
path, first, rest, keep_open = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode(), sys.argv[4]
handle = open(path, "r+b")
handle.truncate(0)
handle.write(first)
handle.flush()
if keep_open != "1":
    handle.close()
print("first part", flush=True)
stop.wait()
if keep_open != "1":
    handle = open(path, "ab")
handle.write(rest)
handle.close()
"""


@pytest.mark.parametrize("keep_open", ["1", "0"])
@pytest.mark.parametrize("cut", ["### 2026-12", "### 2026-12-05 · later\nfirst li"])
def test_a_two_part_save_is_never_recorded_half_written(
        run_cli: RunCli, empty_store: Path, cut: str, keep_open: str) -> None:
    path = empty_store / "a.md"
    _write(path, NOTE)
    assert run_cli("--notes", str(empty_store), "check").returncode == 0
    finished = NOTE + "\n### 2026-12-05 · later\nfirst line\nsecond line\n"
    first = NOTE + "\n" + cut
    with stand_in(PART_WRITER, str(path), first, finished[len(first):], keep_open,
                  ready="first part"):
        # read at once, in this process: a file closed between its parts looks mid-save
        # only while it changed less than SETTLE_S ago (a CLI on a loaded machine may be later)
        reader = Notes(load_config(empty_store), notify=lambda _: None)
        try:
            reader.suggest("later")
            reader.check()
        finally:
            reader.close()
    assert path.read_text() == finished
    assert [e for e, _ in _recorded(empty_store, "a")] == ["2026-11-01-first",
                                                            "2026-11-02-second"]
    _aged(path)
    assert run_cli("--notes", str(empty_store), "check").returncode == 0
    assert run_cli("--notes", str(empty_store), "log", "a", "--title", "next",
                   input="more\n").returncode == 0
    assert "2026-12-05-later" in [e for e, _ in _recorded(empty_store, "a")]
    restored = run_cli("--notes", str(empty_store), "check", "--restore")
    assert restored.returncode == 0 and "restored" not in restored.stdout
    assert path.read_text().startswith(finished)


def test_restore_of_an_entry_recorded_without_its_last_newline_is_byte_exact(
        run_cli: RunCli, empty_store: Path) -> None:
    path = empty_store / "a.md"
    original = NOTE + "\n### 2026-12-05 · later\nno newline at the end"
    _write(path, original)
    assert run_cli("--notes", str(empty_store), "check").returncode == 0
    assert ("2026-12-05-later", "### 2026-12-05 · later\nno newline at the end") in \
        _recorded(empty_store, "a")
    _write(path, original.replace("no newline", "edited, no newline") + "\n\n### 2026-12-06"
           " · after\nand more\n")
    assert run_cli("--notes", str(empty_store), "check", "--restore").returncode == 0
    after = path.read_text()
    assert "### 2026-### " not in after and "edited" not in after
    assert after.startswith(original + "\n")
    assert run_cli("--notes", str(empty_store), "check").returncode == 0
    again = run_cli("--notes", str(empty_store), "check", "--restore")
    assert again.returncode == 0 and "restored" not in again.stdout


# -- item 3: setext headings ---------------------------------------------------------------
SETEXT = """---
title: S
---
S
=

Current state
-------------
- a

History
-------

### 2026-11-01 · x
body
"""


def test_a_setext_state_heading_is_kept_by_every_write(run_cli: RunCli,
                                                       empty_store: Path) -> None:
    path = empty_store / "s.md"
    _write(path, SETEXT)
    store = ("--notes", str(empty_store))
    wrote = run_cli(*store, "state", "s", input="- NEW\n")
    assert wrote.returncode == 0 and "(0 tokens)" not in wrote.stdout
    assert "Current state\n-------------\n- NEW\n" in path.read_text()
    assert run_cli(*store, "log", "s", "--title", "y", "--date", "2026-11-02",
                   input="more\n").returncode == 0
    assert run_cli(*store, "state", "s", input="- NEWER\n").returncode == 0
    note = parse_note(path.read_text())
    assert note.state is not None and note.state.body.strip() == "- NEWER"
    assert [e.title for e in note.entries] == ["x", "y"]
    assert run_cli(*store, "check").returncode == 0


# -- item 4: line endings are not content ---------------------------------------------------
def test_a_recorded_note_converted_to_crlf_is_the_same_note(run_cli: RunCli,
                                                            empty_store: Path) -> None:
    path = empty_store / "a.md"
    _write(path, NOTE)
    store = ("--notes", str(empty_store))
    assert run_cli(*store, "check").returncode == 0
    _write(path, NOTE.replace("\n", "\r\n"))
    for args in (("check",), ("check", "--accept"), ("check", "--restore"), ("status",),
                 ("suggest", "second")):
        result = run_cli(*store, *args)
        assert result.returncode == 0 and "Traceback" not in result.stderr, (args, result)
    assert path.read_bytes() == NOTE.replace("\n", "\r\n").encode()
    assert run_cli(*store, "log", "a", "--title", "third", input="three\n").returncode == 0
    raw = path.read_bytes()
    assert b"three\r\n" in raw and raw.count(b"\n") == raw.count(b"\r\n")
    assert run_cli(*store, "check").returncode == 0


def test_a_crlf_note_restored_keeps_its_line_endings(run_cli: RunCli,
                                                     empty_store: Path) -> None:
    path = empty_store / "a.md"
    _write(path, NOTE)
    store = ("--notes", str(empty_store))
    assert run_cli(*store, "check").returncode == 0
    crlf = NOTE.replace("\n", "\r\n")
    _write(path, crlf.replace("two", "two, edited"))
    assert run_cli(*store, "check", "--restore").returncode == 0
    assert path.read_bytes() == crlf.encode()


# -- item 5: a merge, not a lockout ---------------------------------------------------------
def test_a_stale_editor_save_is_merged_by_the_next_tool_write(run_cli: RunCli,
                                                              empty_store: Path) -> None:
    path = empty_store / "a.md"
    _write(path, NOTE)
    store = ("--notes", str(empty_store))
    stale = path.read_text()  # an editor's buffer, read now
    for n in (3, 4):
        assert run_cli(*store, "log", "a", "--title", f"tool {n}", "--date", f"2026-11-0{n}",
                       input=f"by the tool {n}\n").returncode == 0
    _write(path, stale + "\n### 2026-11-05 · by hand\nwritten in the editor\n", aged=False)
    wrote = run_cli(*store, "log", "a", "--title", "tool 6", "--date", "2026-11-06",
                    input="by the tool 6\n")
    assert wrote.returncode == 0, wrote.stderr
    assert "warning: put back 2 history entries" in wrote.stdout
    titles = [e.title for e in parse_note(path.read_text()).entries]
    assert titles == ["First", "Second", "tool 3", "tool 4", "by hand", "tool 6"]
    assert run_cli(*store, "check").returncode == 0


def test_a_hand_fix_of_an_old_entry_is_kept_and_never_blocks(run_cli: RunCli,
                                                              empty_store: Path) -> None:
    path = empty_store / "a.md"
    _write(path, NOTE)
    store = ("--notes", str(empty_store))
    assert run_cli(*store, "check").returncode == 0
    _write(path, NOTE.replace("one\n", "one, typo fixed\n"), aged=False)
    assert run_cli(*store, "log", "a", "--title", "next", input="x\n").returncode == 0
    assert run_cli(*store, "state", "a", input="- fine\n").returncode == 0
    assert "one, typo fixed" in path.read_text()
    checked = run_cli(*store, "check")
    assert checked.returncode == 0  # a warning, not an error
    assert "warning" in checked.stdout and "history-changed" in checked.stdout
    assert "'one'" in checked.stdout and "'one, typo fixed'" in checked.stdout
    assert run_cli(*store, "check", "--restore", "--note", "a").returncode == 0
    assert "typo fixed" not in path.read_text() and "- fine" in path.read_text()
    assert "history-changed" not in run_cli(*store, "check").stdout


KEEP_CHANGING = r"""
path, text, last = sys.argv[1], sys.argv[2], sys.argv[3:]
print("changing", flush=True)
n = 0
while not stop.is_set():
    with open(path, "w") as handle:
        handle.write(text[: len(text) - (n % 3)])
    n += 1
    stop.wait(0.1)
if last:  # the save's end
    with open(path, "w") as handle:
        handle.write(last[0])
"""


def test_a_write_waits_for_a_file_mid_save_then_says_so(notes: Notes) -> None:
    notes.create_note("m", "M")
    notes.append_history("m", "first", "one", "2026-11-01")
    path = notes.store.path_for("m")
    whole = path.read_text()
    damaged = whole[whole.index("## History"):]  # header and state gone
    with stand_in(KEEP_CHANGING, str(path), damaged, ready="changing"):
        started = time.monotonic()
        with pytest.raises(NoteBusy, match=r"m\.md is being saved.*nothing was written"):
            notes.append_history("m", "during", "x")
        assert time.monotonic() - started > 2.0  # it waited for the save to end
    assert "during" not in path.read_text()


def test_a_half_saved_file_finished_within_the_wait_is_written_on(notes: Notes) -> None:
    notes.create_note("m", "M")
    notes.append_history("m", "first", "one", "2026-11-01")
    path = notes.store.path_for("m")
    whole = path.read_text()
    with stand_in(KEEP_CHANGING, str(path), whole[:whole.index("## History")], whole,
                  ready="changing") as editor:
        assert editor.stdin is not None
        finish = threading.Timer(0.5, editor.stdin.close)  # the save ends during the wait
        finish.start()
        try:
            notes.append_history("m", "after", "y", "2026-11-02")
        finally:
            finish.join()
    assert [e.title for e in parse_note(path.read_text()).entries] == ["first", "after"]


def test_a_damaged_file_that_stays_so_is_a_persons_edit(notes: Notes) -> None:
    notes.create_note("m", "M")
    notes.append_history("m", "first", "one", "2026-11-01")
    path = notes.store.path_for("m")
    whole = path.read_text()
    _write(path, whole[whole.index("## History"):])
    written = notes.append_history("m", "after", "y", "2026-11-02")
    assert [e.title for e in parse_note(path.read_text()).entries] == ["first", "after"]
    assert not written.warnings
    lost = [p for p in notes.check() if p.code == "note-lost-content"]
    assert lost and "put it back by hand" in lost[0].message
    _write(path, "")
    with pytest.raises(Exception, match=r"m\.md is empty; nothing was written"):
        notes.append_history("m", "more", "z")


# -- item 7: a link is one note with two names ---------------------------------------------
def test_a_link_inside_the_store_is_written_through(run_cli: RunCli, store_dir: Path) -> None:
    link = store_dir / "alias-redis.md"
    link.symlink_to("infra/redis.md")
    store = ("--notes", str(store_dir))
    wrote = run_cli(*store, "log", "alias-redis", "--title", "through the link",
                    input="written once\n")
    assert wrote.returncode == 0, wrote.stderr
    assert link.is_symlink() and "through the link" in (store_dir / "infra/redis.md").read_text()
    assert "infra/redis#" in wrote.stdout
    checked = run_cli(*store, "check")
    assert "alias-redis.md:1: warning" in checked.stdout and "link-inside" in checked.stdout
    shown = run_cli(*store, "suggest", "redis", "--limit", "10").stdout
    assert "alias-redis" not in shown and "infra/redis" in shown
    assert "through the link" in run_cli(*store, "read", "alias-redis").stdout
    (store_dir / "dangling.md").symlink_to("infra/nothing-here.txt")
    refused = run_cli(*store, "log", "dangling", "--title", "x", input="y\n")
    assert refused.returncode == 1 and "not a note" in refused.stderr


# -- item 8 (restore's part): an editor holding the note open --------------------------------
HOLDER = r"""
handle = open(sys.argv[1], "r+b")
print("open", flush=True)
stop.wait()
handle.close()
"""


def test_restore_while_an_editor_holds_the_note_open_says_so(run_cli: RunCli,
                                                              store_dir: Path) -> None:
    store = ("--notes", str(store_dir))
    assert run_cli(*store, "check").returncode == 0
    path = store_dir / "infra/redis.md"
    _write(path, path.read_text().replace("## History\n", "## History\n\n### 2020-01-01 · "
                                          "inserted\nby hand\n", 1))
    with stand_in(HOLDER, str(path), ready="open"):
        result = run_cli(*store, "check", "--restore", "--note", "infra/redis")
    assert result.returncode == 1 and result.stderr.startswith("Error: ")
    assert "Traceback" not in result.stderr and "nothing was written" in result.stderr
    assert not (store_dir / ".notes" / "taken-out").exists()
    again = run_cli(*store, "check", "--restore", "--note", "infra/redis")
    assert again.returncode == 0 and "taken out" in again.stdout
    assert "inserted" not in path.read_text()


def test_restore_refuses_a_note_it_cannot_write_over(empty_store: Path) -> None:
    path = empty_store / "a.md"
    _write(path, NOTE)
    notes = Notes(load_config(empty_store), notify=lambda _: None)
    try:
        assert notes.check() == []
        # a fence opened in the state hides the history that a restore would put back
        damaged = NOTE.replace("- old state\n", "- old state\n```\n").replace("two\n", "")
        _write(path, damaged)
        with pytest.raises(NoteFormatError, match="a.md:8: a code fence .* never closed"):
            notes.restore_history("a")
        assert path.read_text() == damaged
    finally:
        notes.close()


def test_a_restore_that_would_not_read_back_as_recorded_is_refused() -> None:
    from memory.state.history_merge import restore_problem, restored
    from memory.state.ledger import NoteRecord, Recorded

    # an entry recorded with a line that now reads as a heading of its own
    odd = Recorded("a", "2026-11-02-second", 2, "", "### 2026-11-02 · Second\n## two\n", "",
                   "2026-11-02", 0.0)
    first = Recorded("a", "2026-11-01-first", 1, "", "### 2026-11-01 · First\none\n", "\n",
                     "2026-11-01", 0.0)
    record = NoteRecord("a", [first, odd])
    text, _ = restored(record, parse_note(NOTE))
    assert "entry 2026-11-02-second would still be" in restore_problem(record, parse_note(text))


def test_a_last_entry_left_unrecorded_mid_save_is_recorded_once_quiet(
        empty_store: Path) -> None:
    """What a watcher does: it re-indexes a save 0.3 s after it, too soon to record the last
    entry; once the notes are quiet it records it."""
    path = empty_store / "a.md"
    _write(path, NOTE)
    notes = Notes(load_config(empty_store), notify=lambda _: None)
    try:
        notes.refresh_index()
        _write(path, NOTE + "\n### 2026-11-03 · by hand\nthird\n", aged=False)
        notes.refresh_index()
        assert "2026-11-03-by-hand" not in [e for e, _ in _recorded(empty_store, "a")]
        _aged(path)
        notes.when_idle()
        assert [e for e, _ in _recorded(empty_store, "a")][-1] == "2026-11-03-by-hand"
    finally:
        notes.close()
