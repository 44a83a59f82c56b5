"""Writes that must not destroy what they did not mean to touch (issue 13, items 1-5).

Each test is a repro found by outside testing: it failed on the code before the fix.
"""

from __future__ import annotations

import contextlib
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError

from conftest import RunCli
from memory import InvalidArgument, Notes, load_config
from memory.errors import NoteBusy, NoteFormatError, NoteLostContent
from memory.fronts.mcp.server import create_server
from memory.model.note import parse_note
from reliability import Figures
from stand_ins import stand_in


def _made(run_cli: RunCli, note: str = "a") -> None:
    assert run_cli("new", note, "--title", "A").returncode == 0
    assert run_cli("log", note, "--title", "first", "--date", "2026-11-01",
                   input="the first entry\n").returncode == 0
    assert run_cli("state", note, input="- the state line\n").returncode == 0


# -- item 1: a note half-written by an editor ------------------------------------------
EDITOR = """
path = sys.argv[1]
with open(path, "r+b") as handle:
    buffer = handle.read()
    handle.seek(0)
    handle.truncate()
    handle.flush()
    print("truncated", flush=True)
    stop.wait()
    handle.write(buffer + b"### 2026-11-02 \\xc2\\xb7 by the editor\\nwritten by hand\\n")
"""


def test_log_refuses_a_note_an_editor_has_truncated_and_is_writing(
        run_cli: RunCli, store_dir: Path, figures: Figures) -> None:
    """Writes onto a note an editor has truncated and is still writing back"""
    _made(run_cli)
    path = store_dir / "a.md"
    before = path.read_bytes()
    with stand_in(EDITOR, str(path), ready="truncated"):  # until the log is done
        result = run_cli("log", "a", "--title", "during", input="x\n")
    assert result.returncode == 1, result.stdout
    assert result.stderr.startswith("Error: ") and "nothing was written" in result.stderr
    after = path.read_bytes()
    assert after.startswith(before)  # the editor's save landed on the live file, whole
    assert b"during" not in after and b"by the editor" in after
    assert run_cli("check").returncode == 0  # header, state and history all there
    figures.add("`notes log` during the editor's save", "refused, exit 1, nothing written")
    figures.add("the editor's save afterwards", "whole, on the live file; `notes check` clean")


REWRITER = r"""
path, text = sys.argv[1], sys.argv[2]
print("changing", flush=True)
n = 0
while not stop.is_set():
    with open(path, "w") as handle:
        handle.write(text + " " * (n % 2))
    n += 1
    stop.wait(0.1)
"""


def test_a_write_waits_for_a_note_that_lost_its_header_state_or_entries_while_it_changes(
        run_cli: RunCli, run_cli_process: RunCli, store_dir: Path, figures: Figures) -> None:
    """Writes onto a note that lost its header, state or history and is still being saved"""
    for note in "abcd":
        _made(run_cli, note)
    whole = (store_dir / "a.md").read_text()
    history_at = whole.index("## History")
    cases = {  # the four damages, each on a note of its own, all at once (each waits ~3 s)
        "a": ("", "empty"),
        "b": (whole[history_at:], "front matter"),              # header and state gone
        "c": (whole[:history_at], "History"),                    # the history section gone
        "d": (whole[:whole.index("-11-01 ·")], "heading"),   # cut inside the last heading
    }
    with contextlib.ExitStack() as rewriters:  # each rewrites its note until the logs end
        for note, (damaged, _) in cases.items():
            path = store_dir / f"{note}.md"
            assert path.read_text() == whole  # the notes are alike but for their file name
            rewriters.enter_context(stand_in(REWRITER, str(path), damaged, ready="changing"))
        with ThreadPoolExecutor(len(cases)) as pool:
            results = dict(zip(cases, pool.map(
                lambda note: run_cli_process("log", note, "--title", "more", input="more\n"),
                cases), strict=True))
    for note, (_, lost) in cases.items():
        result = results[note]
        assert result.returncode == 1, (lost, result.stdout)
        assert lost in result.stderr and "nothing was written" in result.stderr
        assert "is being saved" in result.stderr
        assert "more" not in (store_dir / f"{note}.md").read_text()
    path = store_dir / "a.md"
    path.write_text(whole)
    assert run_cli("log", "a", "--title", "more", input="more\n").returncode == 0
    figures.add("damaged files still changing (empty, no header, no history, a cut heading)",
                4)
    figures.add("`notes log` waited, then refused with one line, file untouched", "4 / 4")


def test_a_deliberate_removal_never_blocks_and_check_accept_records_it(
        run_cli: RunCli, store_dir: Path) -> None:
    _made(run_cli)
    path = store_dir / "a.md"
    text = path.read_text()
    path.write_text(text.replace("## Current state\n- the state line\n\n", ""))
    then = time.time() - 30
    os.utime(path, (then, then))  # saved a while ago: a person's edit, not a save under way
    assert run_cli("log", "a", "--title", "more", input="more\n").returncode == 0
    checked = run_cli("check")
    assert checked.returncode == 1 and "lost its 'Current state' section" in checked.stdout
    assert run_cli("check", "--accept", "--note", "a").returncode == 0
    assert run_cli("check").returncode == 0


def test_a_rename_save_between_read_and_rename_is_never_overwritten(notes: Notes,
                                                                   figures: Figures) -> None:
    """Editors saving by rename while a tool writes the same note

    The editor saves while the tool computes its change: the tool sees the file changed just
    before its own rename, reads it again and writes on top of it."""
    notes.create_note("b", "B")
    notes.append_history("b", "first", "one", "2026-11-01")
    path = notes.store.path_for("b")
    saved = {"done": False}
    original = notes.commits.replace_if_unchanged

    def editor_saves_first(target: Path, text: str, expected: object) -> None:
        if not saved["done"]:
            saved["done"] = True
            tmp = target.with_name(".b.md.swp")
            tmp.write_text(target.read_text().replace(
                "## Current state\n", "## Current state\nA line the editor added.\n"))
            tmp.replace(target)
        original(target, text, expected)  # type: ignore[arg-type]

    notes.commits.replace_if_unchanged = editor_saves_first  # type: ignore[method-assign]
    notes.append_history("b", "second", "two", "2026-11-02")
    text = path.read_text()
    assert "A line the editor added." in text and "### 2026-11-02 · second" in text
    figures.add("editor's save between the tool's read and its rename", "kept; the tool read "
                "again and wrote on top of it")


def test_a_note_open_for_writing_is_waited_for_then_refused(notes: Notes) -> None:
    notes.create_note("c", "C")
    path = notes.store.path_for("c")
    holder = "handle = open(sys.argv[1], 'a')\nprint('open', flush=True)\nstop.wait()\n"
    with stand_in(holder, str(path), ready="open"):
        with pytest.raises(NoteBusy, match="open for writing"):
            notes.append_history("c", "x", "y")
    notes.append_history("c", "x", "y")


# -- item 2: a state that would swallow the rest of the note ---------------------------
@pytest.mark.parametrize("opener", ["<script>", "<pre>", "<style>", "<!-- note", "```",
                                    "<textarea>", "<?php", "<![CDATA["])
def test_a_state_body_that_would_swallow_the_history_is_refused(
        notes: Notes, opener: str, figures: Figures) -> None:
    """Bodies opening a block that never ends (state and entry)"""
    path = notes.store.path_for("d")
    path.write_text("---\ntitle: D\n---\n# D\n\n## History\n### 2026-11-01 · one\nbody\n")
    before = path.read_text()
    with pytest.raises(InvalidArgument, match="close it"):
        notes.write_state("d", f"{opener}\nline\n")
    assert path.read_text() == before
    notes.write_state("d", "- fine")  # the state-less path still works, history intact
    assert parse_note(path.read_text()).entries[0].text.startswith("### 2026-11-01 · one")
    with pytest.raises(InvalidArgument):
        notes.append_history("d", "two", f"{opener}\nunclosed")
    figures.add(f"`{opener}` in a state (note without a state) / in an entry",
                "refused / refused; history intact")


def test_a_hand_made_unclosed_fence_in_the_state_blocks_writes(notes: Notes) -> None:
    path = notes.store.path_for("e")
    path.write_text("---\ntitle: E\n---\n# E\n\n## Current state\n```\nhand made\n\n"
                    "## History\n### 2026-11-01 · one\nbody\n")
    before = path.read_text()
    with pytest.raises(NoteFormatError, match=r"e\.md:7: .*never closed"):
        notes.write_state("e", "- new")
    with pytest.raises(NoteFormatError, match="never closed"):
        notes.append_history("e", "two", "body")
    assert path.read_text() == before
    problems = [p.code for p in notes.check() if p.path == "e.md"]
    assert "unclosed-block" in problems


# -- item 3: empty input never replaces a state ------------------------------------------
def test_empty_stdin_is_refused_with_exit_2(run_cli: RunCli, store_dir: Path,
                                            figures: Figures) -> None:
    """Empty input to `notes state` and `notes log`"""
    _made(run_cli)
    before = (store_dir / "a.md").read_bytes()
    for args in (["state", "a"], ["log", "a", "--title", "x"]):
        for empty in ("", "  \n\t\n"):
            result = run_cli(*args, input=empty)
            assert result.returncode == 2, result.stdout
            assert "empty" in result.stderr and "--allow-empty" in result.stderr
    assert (store_dir / "a.md").read_bytes() == before
    cleared = run_cli("state", "a", "--allow-empty", input="")
    assert cleared.returncode == 0, cleared.stderr
    assert "the state line" not in (store_dir / "a.md").read_text()
    titled = run_cli("log", "a", "--title", "title only", "--allow-empty", input="")
    assert titled.returncode == 0 and "title only" in (store_dir / "a.md").read_text()
    figures.add("empty or blank stdin to `state` and `log` (4 cases)", "4 refused, exit 2")
    figures.add("with `--allow-empty`", "state cleared; title-only entry written")


async def test_mcp_refuses_empty_text(store_dir: Path) -> None:
    async with Client(create_server(load_config(store_dir))) as client:
        before = (store_dir / "infra/redis.md").read_bytes()
        for tool, args in (("write_state", {"text": "  "}),
                           ("append_history", {"title": "t", "text": "\n"})):
            with pytest.raises(ToolError, match="empty"):
                await client.call_tool(tool, {"note": "infra/redis", **args})
        assert (store_dir / "infra/redis.md").read_bytes() == before


# -- item 4: promote --apply under the note's lock -------------------------------------
def test_promote_apply_holds_the_lock_from_read_to_write(notes: Notes,
                                                        figures: Figures) -> None:
    """`notes promote --apply` against a state written meanwhile

    Another process writes the state while promote computes its line: before the fix,
    promote wrote its stale copy over it."""
    import threading

    from memory.services import promote_apply

    entry = parse_note(notes.store.path_for("infra/redis").read_text()).entries[0]
    real = promote_apply.with_promoted
    writers: list[threading.Thread] = []

    def slow_line(*args: object) -> str:
        if writers:
            return real(*args)  # type: ignore[arg-type]

        def other_writer() -> None:
            other = Notes(load_config(notes.config.notes_dir), notify=lambda _: None)
            other.write_state("infra/redis", "- written meanwhile by another writer")
            other.close()

        writers.append(threading.Thread(target=other_writer))
        writers[0].start()
        time.sleep(1.0)  # the other writer finishes now unless promote holds the lock
        return real(*args)  # type: ignore[arg-type]

    promote_apply.with_promoted = slow_line  # type: ignore[assignment]
    try:
        promote_apply.apply_promotion(notes, "infra/redis", entry.id, line="promoted line")
    finally:
        promote_apply.with_promoted = real
    writers[0].join(timeout=30)
    state = parse_note(notes.store.path_for("infra/redis").read_text()).state
    assert state is not None and "written meanwhile" in state.text
    figures.add("a state written by another process while promote computes", "kept (the "
                "line is inserted into the note as read again under the lock)")


def test_promote_apply_keeps_a_state_written_between_its_read_and_write(notes: Notes) -> None:
    from memory.services import promote_apply

    entry = parse_note(notes.store.path_for("infra/redis").read_text()).entries[0]
    original = notes.commits.replace_if_unchanged
    done = {"written": False}

    def rename_save_in_between(target: Path, text: str, expected: object) -> None:
        if not done["written"]:
            done["written"] = True  # an editor rewrites the state by hand (rename-save)
            current = target.read_text()
            state = parse_note(current).state
            assert state is not None
            lines = current.splitlines(keepends=True)
            lines.insert(state.start + 1, "- added by hand meanwhile\n")
            tmp = target.with_name(".redis.tmp-editor")
            tmp.write_text("".join(lines))
            tmp.replace(target)
        original(target, text, expected)  # type: ignore[arg-type]

    notes.commits.replace_if_unchanged = rename_save_in_between  # type: ignore[method-assign]
    promote_apply.apply_promotion(notes, "infra/redis", entry.id, line="promoted line")
    state = parse_note(notes.store.path_for("infra/redis").read_text()).state
    assert state is not None
    assert "added by hand meanwhile" in state.text and "promoted line" in state.text


# -- item 5: an unclosed <pre> in an entry ---------------------------------------------
def test_an_unclosed_pre_entry_is_refused_at_its_first_write(notes: Notes) -> None:
    notes.create_note("f", "F")
    with pytest.raises(InvalidArgument, match="<pre>"):
        notes.append_history("f", "bad", "<pre>\nnot closed")
    notes.append_history("f", "good", "fine")  # the note is not stuck


def test_a_note_stuck_by_a_hand_made_unclosed_entry_names_that_entry(notes: Notes) -> None:
    path = notes.store.path_for("g")
    path.write_text("---\ntitle: G\n---\n# G\n\n## Current state\n- s\n\n## History\n"
                    "### 2026-11-01 · stuck one\n<pre>\nnever closed\n")
    with pytest.raises(NoteFormatError, match="2026-11-01-stuck-one"):
        notes.append_history("g", "next", "fine")


def test_lost_content_error_is_a_note_format_error() -> None:
    assert issubclass(NoteLostContent, NoteFormatError)


def test_a_save_landing_between_the_check_and_the_exchange_is_put_back(
        notes: Notes, figures: Figures) -> None:
    """Editors saving by rename while a tool writes the same note

    The last window: the editor's rename lands after the tool's final check. The tool
    exchanges its file in, finds the one it took out is not the one it read, swaps the
    editor's save back and writes again on top of it."""
    from memory.state import safe_files

    notes.create_note("h", "H")
    notes.append_history("h", "first", "one", "2026-11-01")
    path = notes.store.path_for("h")
    real = safe_files.exchange
    landed = {"n": 0}

    def editor_saves_just_before(first: Path, second: Path) -> bool:
        if landed["n"] == 0 and second == path:
            landed["n"] += 1
            tmp = path.with_name(".h.md.swp")
            tmp.write_text(path.read_text().replace(
                "## Current state\n", "## Current state\nSaved at the last moment.\n"))
            tmp.replace(path)
        return real(first, second)

    safe_files.exchange = editor_saves_just_before  # type: ignore[assignment]
    try:
        notes.append_history("h", "second", "two", "2026-11-02")
    finally:
        safe_files.exchange = real
    text = path.read_text()
    assert landed["n"] == 1
    figures.add("editor's save between the tool's last check and its exchange", "swapped back "
                "and kept; the tool wrote on top of it")
    assert "Saved at the last moment." in text and "### 2026-11-02 · second" in text
    assert not list(path.parent.glob(".h.md.*"))
