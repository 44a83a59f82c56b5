"""The transcript adapter: real Claude Code files parse; built ones give the expected pairs."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from shared_data import TRANSCRIPTS, shared_file

from memory import Notes, load_config
from memory.bench.mining import MiningCounts, Vocabulary, content_lines, transcripts_to_bench
from memory.bench.questions import read_questions
from memory.bench.transcripts import (
    mapped_path,
    prompt_text,
    read_transcript,
    transcript_files,
)
from memory.fronts import render
from memory.state.store import Store

NOTES = {
    "infra/redis": """---
title: Redis cache
---
# Redis cache

## Current state
- Redis runs on port 6380 in production.

## History
### 2026-01-10 · Eviction policy
Switched eviction to allkeys-lru after the memory alarm.

### 2026-02-01 · Upgrade
Upgraded Redis to 7.2 on the staging cluster.
""",
    "howto/deploy": """---
title: Deploy to production
---
# Deploy to production

## Current state
- Deploys go through the canary pipeline.

## History
### 2026-03-05 · Rollback procedure
Rollback uses deployctl revert with the previous tag.
""",
    "team/people": """---
title: People
---
# People

## Current state
- Marco took over the Redis upgrade.
""",
}
EVICTION = "Switched eviction to allkeys-lru after the memory alarm."


def test_every_shared_transcript_parses(tmp_path: Path) -> None:
    shared_file(TRANSCRIPTS)
    files = transcript_files([TRANSCRIPTS])
    assert len(files) == 4
    records = {}
    for path in files:
        transcript = read_transcript(path, tmp_path)
        lines = sum(1 for line in path.read_text().splitlines() if line.strip())
        assert (transcript.records, transcript.bad_lines) == (lines, 0), path.name
        assert transcript.turns, path.name
        records[path.name] = transcript.records
    assert records["sample_main_transcript.jsonl"] == 63
    assert records["fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"] == 438
    main = read_transcript(TRANSCRIPTS / "fasthooks" / "sample_main_transcript.jsonl", tmp_path)
    assert main.turns[0].prompt == "can you run a command ls -la"
    assert main.turns[0].reply  # the agent's text after the tool call


# -- transcripts in the real format, built here ---------------------------------------------

class Session:
    """Writes records as Claude Code 2.x does: one record per content block, tool results as
    user records with ``toolUseResult``, a parent chain of uuids."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.ids = itertools.count(1)
        self.parent: str | None = None

    def _envelope(self, kind: str, sidechain: bool = False) -> dict[str, Any]:
        uuid = f"00000000-0000-0000-0000-{next(self.ids):012d}"
        record = {"parentUuid": self.parent, "isSidechain": sidechain, "userType": "external",
                  "cwd": "/work/app", "sessionId": "s-1", "version": "2.0.76", "gitBranch": "",
                  "type": kind, "uuid": uuid, "timestamp": "2026-07-01T10:00:00.000Z"}
        self.parent = uuid
        return record

    def user(self, text: str, sidechain: bool = False) -> None:
        record = self._envelope("user", sidechain)
        record["message"] = {"role": "user", "content": text}
        self.records.append(record)

    def assistant(self, message_id: str, *blocks: dict[str, Any], sidechain: bool = False) -> None:
        for block in blocks:  # one record per block, sharing message.id
            record = self._envelope("assistant", sidechain)
            record["requestId"] = f"req_{message_id}"
            record["message"] = {"model": "claude-x", "id": message_id, "type": "message",
                                 "role": "assistant", "content": [block], "stop_reason": None,
                                 "usage": {"input_tokens": 1, "output_tokens": 1}}
            self.records.append(record)

    def tool(self, message_id: str, tool_id: str, name: str, data: dict[str, Any],
             result: Any, extra: dict[str, Any] | None = None, sidechain: bool = False) -> None:
        self.assistant(message_id, {"type": "thinking", "thinking": "…", "signature": "x"},
                       {"type": "tool_use", "id": tool_id, "name": name, "input": data},
                       sidechain=sidechain)
        record = self._envelope("user", sidechain)
        record["message"] = {"role": "user", "content": [
            {"tool_use_id": tool_id, "type": "tool_result", "content": result}]}
        if extra is not None:
            record["toolUseResult"] = extra
        self.records.append(record)

    def reply(self, message_id: str, text: str, sidechain: bool = False) -> None:
        self.assistant(message_id, {"type": "text", "text": text}, sidechain=sidechain)

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records))
        return path


@pytest.fixture
def notes_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    for note_id, text in NOTES.items():
        path = folder / f"{note_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder


@pytest.fixture
def shown(notes_dir: Path, tmp_path: Path) -> Iterator[Notes]:
    """The real store, to render tool answers exactly as our tools print them."""
    notes = Notes(load_config(notes_dir, tmp_path / "state"), notify=lambda _: None)
    yield notes
    notes.close()


def mine(tmp_path: Path, notes_dir: Path, *sessions: Session) -> tuple[list[tuple[str, tuple[
        str, ...], str | None]], MiningCounts]:
    folder = tmp_path / "transcripts"
    folder.mkdir(exist_ok=True)
    for number, session in enumerate(sessions):
        session.write(folder / f"session-{number}.jsonl")
    out = tmp_path / "bench"
    counts = transcripts_to_bench([folder], notes_dir, out, force=True)
    pairs = [(q.question, q.answer_lines, q.note)
             for q in read_questions(out / "questions.jsonl")]
    return pairs, counts


def read_eviction(session: Session, shown: Notes, sidechain: bool = False) -> None:
    text = render.section_text(shown.read_section("infra/redis", "2026-01-10"))
    session.tool("msg_e", "toolu_e", "mcp__notes__read_section",
                 {"note": "infra/redis", "section": "2026-01-10"},
                 [{"type": "text", "text": text}], sidechain=sidechain)


def test_a_read_then_recalled_line_is_a_pair(tmp_path: Path, notes_dir: Path,
                                             shown: Notes) -> None:
    session = Session()
    session.user("Why is the cache behaving differently lately?")
    read_eviction(session, shown)
    session.reply("msg_b", "We switched the eviction policy to allkeys-lru when the memory "
                  "alarm fired, so keys now get dropped sooner.")
    pairs, counts = mine(tmp_path, notes_dir, session)
    assert pairs == [("Why is the cache behaving differently lately?", (EVICTION,),
                      "infra/redis")]
    assert counts.turns == 1 and counts.turns_reading_memory == 1 and counts.stale_lines == 0
    assert sorted(p.relative_to(tmp_path / "bench" / "notes").as_posix()
                  for p in (tmp_path / "bench" / "notes").rglob("*.md")) == \
        sorted(f"{n}.md" for n in NOTES)
    question = next(read_questions(tmp_path / "bench" / "questions.jsonl"))
    assert question.date == "2026-07-01T10:00:00.000Z" and question.context == ()


def test_an_echo_yields_nothing(tmp_path: Path, notes_dir: Path, shown: Notes) -> None:
    session = Session()
    session.user("Did we switch eviction to allkeys-lru after the memory alarm?")
    read_eviction(session, shown)
    session.reply("msg_b", "Yes: eviction was switched to allkeys-lru after the memory alarm.")
    pairs, counts = mine(tmp_path, notes_dir, session)
    assert pairs == [] and counts.echo_lines == 1


def test_an_echo_of_the_messages_before_yields_nothing(tmp_path: Path, notes_dir: Path,
                                                       shown: Notes) -> None:
    session = Session()
    session.user("The memory alarm fired again and eviction looks odd.")
    session.reply("msg_0", "I can check the allkeys-lru setting.")
    session.user("Go on, please.")
    read_eviction(session, shown)
    session.reply("msg_b", "Eviction was switched to allkeys-lru after the memory alarm.")
    pairs, _ = mine(tmp_path, notes_dir, session)
    assert pairs == []


def test_a_memory_writing_turn_yields_nothing(tmp_path: Path, notes_dir: Path,
                                              shown: Notes) -> None:
    session = Session()
    session.user("Why is the cache behaving differently lately?")
    read_eviction(session, shown)
    session.tool("msg_c", "toolu_2", "mcp__notes__append_history",
                 {"note": "infra/redis", "title": "Checked", "text": "ok"}, "wrote …")
    session.reply("msg_b", "We switched the eviction policy to allkeys-lru when the memory "
                  "alarm fired; I logged it.")
    pairs, counts = mine(tmp_path, notes_dir, session)
    assert pairs == [] and counts.turns_writing_memory == 1


def test_the_cli_and_file_reads_count_too(tmp_path: Path, notes_dir: Path,
                                          shown: Notes) -> None:
    cli = Session()
    cli.user("Anything new with the cache servers?")
    output = render.section_text(shown.read_section("infra/redis", "2026-02-01"))
    cli.tool("msg_a", "toolu_1", "Bash",
             {"command": f"cd /work/app && .venv/bin/notes --notes {notes_dir} read infra/redis "
                         "2026-02-01", "description": "read the entry"},
             output, {"stdout": output, "stderr": "", "interrupted": False, "isImage": False})
    cli.reply("msg_b", "Redis was upgraded to 7.2 on the staging cluster.")
    files = Session()
    files.user("How do we undo a bad release?")
    raw = NOTES["howto/deploy"]
    numbered = "".join(f"{n:6d}→{line}\n" for n, line in enumerate(raw.splitlines(), 1))
    path = str(notes_dir / "howto" / "deploy.md")
    files.tool("msg_a", "toolu_1", "Read", {"file_path": path},
               numbered + "\n<system-reminder>\nbe careful\n</system-reminder>\n",
               {"type": "text", "file": {"filePath": path, "content": raw, "numLines": 12,
                                         "startLine": 1, "totalLines": 12}})
    files.reply("msg_b", "Run deployctl revert with the previous tag.")
    pairs, _ = mine(tmp_path, notes_dir, cli, files)
    assert pairs == [
        ("Anything new with the cache servers?",
         ("Upgraded Redis to 7.2 on the staging cluster.",), "infra/redis"),
        ("How do we undo a bad release?",
         ("Rollback uses deployctl revert with the previous tag.",), "howto/deploy")]


def test_sessions_from_another_machine_with_a_path_map(tmp_path: Path, notes_dir: Path) -> None:
    """The sessions read /home/kim/app/… (their machine); --path-map maps it onto the notes
    folder here, for reads and for the writes that drop a turn alike; only whole folders
    match (/home/kim/app2 is another project)."""
    raw = NOTES["howto/deploy"]
    away = Session()
    away.user("How do we undo a bad release?")
    away.tool("msg_a", "toolu_1", "Read", {"file_path": "/home/kim/app/howto/deploy.md"}, raw,
              {"type": "text", "file": {"filePath": "/home/kim/app/howto/deploy.md",
                                        "content": raw}})
    away.reply("msg_b", "Run deployctl revert with the previous tag.")
    away.user("What did the drill notes say about rollback?")
    away.tool("msg_c", "toolu_2", "Read", {"file_path": "/home/kim/app2/howto/deploy.md"}, raw,
              {"type": "text", "file": {"filePath": "/home/kim/app2/howto/deploy.md",
                                        "content": raw}})
    away.reply("msg_d", "Run deployctl revert with the previous tag.")
    away.user("Undo the release, and note it.")
    away.tool("msg_e", "toolu_3", "Read", {"file_path": "/home/kim/app/howto/deploy.md"}, raw,
              {"type": "text", "file": {"filePath": "/home/kim/app/howto/deploy.md",
                                        "content": raw}})
    away.tool("msg_f", "toolu_4", "Edit", {"file_path": "/home/kim/app/howto/deploy.md",
                                           "old_string": "a", "new_string": "b"}, "ok")
    away.reply("msg_g", "Ran deployctl revert with the previous tag; noted it.")
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    away.write(transcripts / "away.jsonl")
    plain = notes_cli("bench", "from-transcripts", str(transcripts), "--notes", str(notes_dir),
                      "--out", str(tmp_path / "plain"))
    assert plain.returncode == 0, plain.stderr
    assert "3 user turns: 0 read memory, 0 dropped" in plain.stdout  # not its notes here
    mapped = notes_cli("bench", "from-transcripts", str(transcripts), "--notes",
                       str(notes_dir), "--out", str(tmp_path / "mapped"), "--path-map",
                       f"/home/kim/app/={notes_dir}")
    assert mapped.returncode == 0, mapped.stderr
    assert "3 user turns: 2 read memory, 1 dropped for writing memory" in mapped.stdout
    assert [(q.question, q.answer_lines, q.note) for q in read_questions(
        tmp_path / "mapped" / "questions.jsonl")] == [
        ("How do we undo a bad release?",
         ("Rollback uses deployctl revert with the previous tag.",), "howto/deploy")]
    wrong = notes_cli("bench", "from-transcripts", str(transcripts), "--notes", str(notes_dir),
                      "--out", str(tmp_path / "wrong"), "--path-map", "/home/kim/app")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert "--path-map '/home/kim/app': give OLD=NEW" in wrong.stderr
    assert mapped_path("/home/kim/app", (("/home/kim/app", "/x"),)) == "/x"


def notes_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(Path(sys.executable).parent / "notes"), *args],
                          capture_output=True, text=True, timeout=120)


def test_sidechains_and_stale_lines(tmp_path: Path, notes_dir: Path, shown: Notes) -> None:
    session = Session()
    session.user("Why is the cache behaving differently lately?")
    stale = "Rehearsed the failover drill twice; promotion took ninety seconds."
    session.tool("msg_a", "toolu_1", "mcp__notes__read_section",
                 {"note": "infra/redis", "section": "2026-01-10"},
                 f"[infra/redis#2026-01-10-drill · entry · 2026-01-10 · 20 tokens]\n{stale}")
    session.user("Look into the cache", sidechain=True)
    read_eviction(session, shown, sidechain=True)  # a sub-agent's reads are its own
    session.reply("msg_s", "Switched eviction to allkeys-lru after the memory alarm.",
                  sidechain=True)
    session.reply("msg_b", "We rehearsed the failover drill; promotion took ninety seconds. "
                  "Eviction switched to allkeys-lru after the memory alarm too.")
    pairs, counts = mine(tmp_path, notes_dir, session)
    assert pairs == [] and counts.stale_lines == 1 and counts.stale == [stale]


def test_rare_words_and_header_lines(notes_dir: Path) -> None:
    vocabulary = Vocabulary(Store(load_config(notes_dir)))
    assert vocabulary.notes == 3 and vocabulary.limit == 1
    # "redis" is in two notes of three, "with" is a stop word, "tag" is too short
    assert vocabulary.rare("Rollback uses deployctl revert with the previous tag on Redis") == \
        {"rollback", "uses", "deployctl", "revert", "previous"}
    assert content_lines(NOTES["infra/redis"]) == [
        "- Redis runs on port 6380 in production.", EVICTION,
        "Upgraded Redis to 7.2 on the staging cluster."]
    assert prompt_text("<command-name>/review</command-name><command-args>the PR"
                       "</command-args>") == "/review the PR"
    assert prompt_text("<local-command-stdout>done</local-command-stdout>") is None
