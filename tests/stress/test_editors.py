"""Mixed writers on the same notes: the CLI, an MCP server, and two editors that take no lock
of ours (one saves by rename, one truncates the file and writes it back slowly).

Every write a tool reported done, and every save an editor made, must be in the notes at the
end, once; header and state intact; `notes check` clean. A tool write refused because an
editor was mid-save ("nothing was written") is retried, as an agent would, and must not leave
a duplicate. The editors are careful ones: the renaming editor checks, just before its rename,
that the file is still the one it read (as vim does when it warns "file changed since
reading") and starts again if not; the truncating one truncates right after reading. What the
store cannot protect is an editor saving a buffer read before a tool's write without looking:
that overwrites the tool's entry, which `notes check` then reports and `--restore` puts back.

Duration per scenario: NOTES_STRESS_SECONDS (default 4; docs/reliability.md was made with 60).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memory import Notes, load_config
from memory.model.note import parse_note
from stress.helpers import NOTES_BIN, SECONDS, Figures, stdio_session, text_of

REFUSED = "nothing was written"

EDITOR = r'''
import fcntl, os, random, sys, time
folder, names, mode, seconds, seed, out = sys.argv[1:7]
between_editors = open(out + ".lock-shared", "a+b")  # one person edits at a time
names = names.split(",")
rng = random.Random(int(seed))
deadline = time.monotonic() + float(seconds)
done = open(out, "w")
n = 0
while time.monotonic() < deadline:
    path = os.path.join(folder, rng.choice(names) + ".md")
    tag = f"{mode}-{n}"
    entry = f"\n### 2026-11-30 \u00b7 {tag}\nsaved by the {mode} editor\n".encode()
    fcntl.flock(between_editors, fcntl.LOCK_EX)  # the editors never race each other
    if mode == "rename":
        with open(path, "rb") as handle:
            before = os.fstat(handle.fileno())
            data = handle.read()
        tmp = os.path.join(folder, f".{os.path.basename(path)}.swp")
        with open(tmp, "wb") as handle:
            handle.write(data.rstrip(b"\n") + b"\n" + entry)
        now = os.stat(path)
        if (now.st_ino, now.st_size, now.st_mtime_ns) != (before.st_ino, before.st_size,
                                                          before.st_mtime_ns):
            os.unlink(tmp)
            fcntl.flock(between_editors, fcntl.LOCK_UN)
            continue  # the file changed since it was read: read it again
        os.replace(tmp, path)
    else:
        with open(path, "r+b") as handle:
            data = handle.read()
            handle.seek(0)
            handle.truncate()
            handle.flush()
            time.sleep(rng.uniform(0.05, 0.4))  # the file is empty meanwhile
            handle.write(data.rstrip(b"\n") + b"\n" + entry)
    fcntl.flock(between_editors, fcntl.LOCK_UN)
    done.write(tag + "\n")
    done.flush()
    n += 1
    time.sleep(rng.uniform(0.05, 0.3))
'''


def _cli_writer(store: Path, names: list[str], written: list[str], refused: list[str],
                errors: list[str]) -> None:
    env = {**os.environ, "NOTES_DIR": str(store)}
    deadline, n = time.monotonic() + SECONDS, 0
    while time.monotonic() < deadline:
        name = names[n % len(names)]
        tag = f"cli-{n}"
        if n % 4 == 3:
            args, body = ["state", name], f"- state set by {tag}\n"
        else:
            args, body = ["log", name, "--title", tag, "--date", "2026-11-30"], f"by {tag}\n"
        result = subprocess.run([str(NOTES_BIN), *args], input=body, capture_output=True,
                                text=True, env=env, timeout=120)
        if result.returncode == 0:
            written.append(tag if args[0] == "log" else f"state:{tag}")
            n += 1
        elif REFUSED in result.stderr:
            refused.append(tag)  # retried with the same tag: a duplicate would show
        else:
            errors.append(result.stderr)
            n += 1


async def _mcp_writer(store: Path, names: list[str], log: Path, written: list[str],
                      refused: list[str], errors: list[str]) -> None:
    with open(log, "w") as errlog:
        async with stdio_session(store, errlog) as session:
            deadline, n = time.monotonic() + SECONDS, 0
            while time.monotonic() < deadline:
                tag = f"mcp-{n}"
                result = await session.call_tool("append_history", {
                    "note": names[n % len(names)], "title": tag, "text": f"by {tag}",
                    "date": "2026-11-30"})
                if not result.is_error:
                    written.append(tag)
                    n += 1
                elif REFUSED in text_of(result):
                    refused.append(tag)
                    await asyncio.sleep(0.05)
                else:
                    errors.append(text_of(result))
                    n += 1


def _editor(store: Path, names: list[str], mode: str, out: Path) -> subprocess.Popen[bytes]:
    shared = out.with_name("editors")  # both editors take the same lock: see EDITOR
    return subprocess.Popen([sys.executable, "-c", EDITOR.replace(
        'out + ".lock-shared"', repr(str(shared) + ".lock")), str(store), ",".join(names),
        mode, str(SECONDS), str(len(names)), str(out)])


@pytest.mark.slow(12)
@pytest.mark.parametrize("count", [1, 10])
def test_cli_mcp_and_editors_write_the_same_notes(store_dir: Path, tmp_path: Path,
                                                  figures: Figures, count: int) -> None:
    """Mixed writers: the CLI, an MCP server and two editors (rename, truncate) on the same
    notes"""
    names = [f"mixed/note-{n}" for n in range(count)]
    notes = Notes(load_config(store_dir), notify=lambda _: None)
    for name in names:
        notes.create_note(name, name.split("/")[1].title(), ["mixed"])
        notes.write_state(name, "- the first state")
    written: list[str] = []
    refused: list[str] = []
    errors: list[str] = []
    started = time.monotonic()
    editors = {mode: (_editor(store_dir / "mixed", [n.split("/")[1] for n in names], mode,
                              tmp_path / f"{mode}.txt")) for mode in ("rename", "truncate")}
    cli = threading.Thread(target=_cli_writer, args=(store_dir, names, written, refused,
                                                     errors))
    cli.start()
    asyncio.run(_mcp_writer(store_dir, names, tmp_path / "mcp.log", written, refused, errors))
    cli.join()
    for editor in editors.values():
        assert editor.wait(timeout=120) == 0
    elapsed = time.monotonic() - started
    assert errors == []
    saved = [line for mode in editors for line in (tmp_path / f"{mode}.txt").read_text()
             .split()]
    titles: list[str] = []
    states: list[str] = []
    for name in names:
        note = parse_note(notes.store.path_for(name).read_text())
        assert not [p for p in note.problems if p.severity == "error"], (name, note.problems)
        assert note.front_matter and note.meta.get("title") == name.split("/")[1].title()
        assert note.state is not None
        states.append(note.state.text.split("\n", 1)[1].strip())
        titles += [e.title for e in note.entries]
    expected = [t for t in written if not t.startswith("state:")] + saved
    lost = sorted(set(expected) - set(titles))
    duplicated = sorted({t for t in titles if titles.count(t) > 1})
    valid_states = {"- the first state"} | {f"- state set by {t[6:]}" for t in written
                                            if t.startswith("state:")}
    assert lost == [] and duplicated == []
    assert all(state in valid_states for state in states), states
    assert notes.check() == []
    notes.close()
    figures.add(f"notes / seconds of writing ({count} note{'s' if count > 1 else ''})",
                f"{count} / {elapsed:.0f} s")
    figures.add("tool entries and states written / editor saves",
                f"{len(written)} / {len(saved)}")
    figures.add("tool writes refused while an editor was mid-save (retried)", len(refused))
    figures.add("entries lost / duplicated", f"{len(lost)} / {len(duplicated)}")
    figures.add("notes with header and state intact", f"{count} / {count}")
