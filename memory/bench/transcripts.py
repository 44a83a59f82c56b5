"""Reading Claude Code session transcripts (JSONL) into turns with the memory read in each.

A turn starts at a typed user message and holds the agent's reply text, the memory it read
(our MCP tools, ``notes read`` in a Bash call, or ``Read`` of a file under the notes folder)
and whether it wrote memory. Records that are not user or assistant messages are skipped, as
are sub-agent (sidechain) records when the file has a main conversation; records are taken in
file order (a ``/rewind`` branch is read as if it followed on). One API message split across
several records (shared ``message.id``) is one message. Sessions that ran on another machine
(another home folder) have their file paths mapped onto the notes folder first
(``--path-map OLD=NEW``).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import InvalidArgument

MEMORY_READ_TOOLS = frozenset({"suggest", "section_map", "read_section"})
MEMORY_WRITE_TOOLS = frozenset({"create_note", "write_state", "append_history"})
FILE_WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
CLI_WRITES = frozenset({"log", "state", "new"})
CLI_VALUE_OPTIONS = frozenset({"--notes", "--state-dir"})
BEFORE = 3  # messages before the user's, for the echo rule and the question's context
_CAT_N = re.compile(r"^ *\d+(?:→|\t)", re.MULTILINE)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_READ_HEADER = re.compile(r"^\[[^\]\n]* · [^\]\n]*tokens\]$")
_SHELL_SPLIT = re.compile(r"&&|\|\||[;|&\n()]")
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)


@dataclass
class MemoryRead:
    route: str  # mcp, cli or file
    note: str | None
    text: str  # the note lines as read, wrappers removed


@dataclass
class Turn:
    number: int
    prompt: str
    timestamp: str | None
    before: tuple[str, ...]
    reply: list[str] = field(default_factory=list)
    reads: list[MemoryRead] = field(default_factory=list)
    wrote_memory: bool = False
    memory_calls: int = 0


@dataclass
class Transcript:
    path: Path
    records: int = 0
    bad_lines: int = 0
    turns: list[Turn] = field(default_factory=list)


@dataclass
class _Call:
    turn: Turn
    name: str
    input: dict[str, Any]


def iter_records(path: Path, bad: list[int]) -> Iterator[dict[str, Any]]:
    """The JSON records of a transcript; lines that are not JSON objects are counted in
    ``bad`` and skipped (a file being written may end with half a line)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            try:
                record = json.loads(raw)
            except ValueError:
                record = None
            if isinstance(record, dict):
                yield record
            else:
                bad.append(1)


PathMap = tuple[tuple[str, str], ...]  # (old prefix, new prefix) of the files the agent read


def read_transcript(path: Path, notes_dir: Path, path_map: PathMap = ()) -> Transcript:
    """Parse one transcript into turns, given the notes folder the agent's memory lives in
    and, when the sessions ran elsewhere, how their paths map onto this machine's
    (:func:`mapped_path`)."""
    bad: list[int] = []
    records = list(iter_records(path, bad))
    main = any(r.get("type") in ("user", "assistant") and not r.get("isSidechain")
               for r in records)
    reader = _TurnReader(notes_dir, path_map)
    for record in records:
        if main and record.get("isSidechain"):
            continue
        reader.feed(record)
    return Transcript(path, len(records) + len(bad), len(bad), reader.turns)


def transcript_files(paths: list[Path]) -> list[Path]:
    """The ``.jsonl`` files among ``paths`` (folders are searched recursively)."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        elif path.is_file():
            found.append(path)
    return found


class _TurnReader:
    """Feeds records in order, keeping the turn being built and the tool calls in flight."""

    def __init__(self, notes_dir: Path, path_map: PathMap = ()) -> None:
        self.path_map = path_map
        self.notes_dir = notes_dir.resolve()
        self.raw_notes_dir = os.path.abspath(notes_dir)
        self.turns: list[Turn] = []
        self.messages: list[str] = []  # text messages so far, oldest first
        self.calls: dict[str, _Call] = {}
        self.seen: set[str] = set()
        self.last_message_id: str | None = None

    def feed(self, record: dict[str, Any]) -> None:
        kind, uuid = record.get("type"), record.get("uuid")
        if kind not in ("user", "assistant") or (uuid and uuid in self.seen):
            return
        if uuid:
            self.seen.add(str(uuid))
        message = record.get("message")
        if not isinstance(message, dict):
            return
        if kind == "user":
            self._user(record, message.get("content"))
        else:
            self._assistant(message)

    # -- user records: prompts and tool results ----------------------------------------------
    def _user(self, record: dict[str, Any], content: Any) -> None:
        self.last_message_id = None
        blocks = content if isinstance(content, list) else []
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self._result(block, record.get("toolUseResult"))
        if record.get("isMeta") or record.get("isCompactSummary"):
            return
        text = content if isinstance(content, str) else "\n".join(
            str(b.get("text") or "") for b in blocks
            if isinstance(b, dict) and b.get("type") == "text")
        prompt = prompt_text(text)
        if prompt:
            self._start_turn(prompt, record.get("timestamp"))

    def _start_turn(self, prompt: str, timestamp: Any) -> None:
        before = tuple(self.messages[-BEFORE:])
        self.turns.append(Turn(len(self.turns) + 1, prompt.strip(),
                               str(timestamp) if timestamp else None, before))
        self.messages.append(prompt.strip())

    def _result(self, block: dict[str, Any], extra: Any) -> None:
        call = self.calls.pop(str(block.get("tool_use_id")), None)
        if call is None or block.get("is_error"):
            return
        read = self._memory_read(call, _result_text(block.get("content")), extra)
        if read is not None and read.text.strip():
            call.turn.reads.append(read)

    # -- assistant records: reply text and tool calls ------------------------------------------
    def _assistant(self, message: dict[str, Any]) -> None:
        turn = self.turns[-1] if self.turns else None
        message_id = str(message.get("id") or "")
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and str(block.get("text") or "").strip():
                self._reply_text(str(block["text"]), message_id, turn)
            elif block.get("type") == "tool_use" and turn is not None:
                self._tool_use(block, turn)

    def _reply_text(self, text: str, message_id: str, turn: Turn | None) -> None:
        if turn is not None:
            turn.reply.append(text)
        if message_id and message_id == self.last_message_id and self.messages:
            self.messages[-1] += "\n" + text
        else:
            self.messages.append(text)
        self.last_message_id = message_id or None

    def _tool_use(self, block: dict[str, Any], turn: Turn) -> None:
        name = str(block.get("name") or "")
        data = block.get("input")
        if not isinstance(data, dict):
            data = {}
        base = name.split("__")[-1]
        if base in MEMORY_WRITE_TOOLS or _cli_command(data, name)[0] in CLI_WRITES or (
                name in FILE_WRITE_TOOLS and self._note_of(data) is not None):
            turn.wrote_memory = True
        if base in MEMORY_READ_TOOLS or _cli_command(data, name)[0] == "read" or (
                name == "Read" and self._note_of(data) is not None):
            turn.memory_calls += 1
        self.calls[str(block.get("id"))] = _Call(turn, name, data)

    def _memory_read(self, call: _Call, text: str, extra: Any) -> MemoryRead | None:
        base = call.name.split("__")[-1]
        if base == "read_section":
            return MemoryRead("mcp", _str(call.input.get("note")), _drop_read_header(text))
        if base in MEMORY_READ_TOOLS:
            return None  # suggest and section_map show note ids and titles, not note lines
        command, args = _cli_command(call.input, call.name)
        if command == "read":
            stdout = extra.get("stdout") if isinstance(extra, dict) else None
            body = stdout if isinstance(stdout, str) else text
            return MemoryRead("cli", args[0] if args else None, _drop_read_header(body))
        if call.name == "Read":
            note = self._note_of(call.input)
            if note is not None:
                return MemoryRead("file", note, _file_text(text, extra))
        return None

    def _note_of(self, data: dict[str, Any]) -> str | None:
        """The note id of a file path under the notes folder, else None."""
        raw = data.get("file_path") or data.get("notebook_path")
        if not isinstance(raw, str) or not raw.endswith(".md"):
            return None
        raw = mapped_path(raw, self.path_map)
        for root, path in ((self.raw_notes_dir, os.path.abspath(raw)),
                           (str(self.notes_dir), os.path.realpath(raw))):
            relative = os.path.relpath(path, root)
            if not relative.startswith(("..", "/")) and not any(
                    part.startswith(".") for part in Path(relative).parts):
                return Path(relative).with_suffix("").as_posix()
        return None


def mapped_path(path: str, path_map: PathMap) -> str:
    """``path`` with the first matching old prefix replaced by its new one: a prefix matches
    the path itself or a folder of it (``/home/a/vsla`` matches ``/home/a/vsla/STATUS.md``,
    not ``/home/a/vsla2/x.md``)."""
    for old, new in path_map:
        stem = old.rstrip("/") or "/"
        if path == stem or path.startswith(stem.rstrip("/") + "/"):
            return new.rstrip("/") + path[len(stem.rstrip("/")):]
    return path


def parse_path_map(values: list[str] | tuple[str, ...]) -> PathMap:
    """``OLD=NEW`` pairs (each side a path; the first ``=`` splits them)."""
    pairs = []
    for value in values:
        old, equals, new = value.partition("=")
        if not equals or not old.strip() or not new.strip():
            raise InvalidArgument(f"--path-map {value!r}: give OLD=NEW, e.g. --path-map "
                                  "/home/me/project=/tmp/bench-notes/project")
        pairs.append((old.strip(), new.strip()))
    return tuple(pairs)


def prompt_text(text: str) -> str | None:
    """What the user asked: the text itself, a slash command with its arguments, or None for
    other wrappers (local command output, caveats)."""
    stripped = text.strip()
    if not stripped.startswith("<"):
        return stripped or None
    name = _COMMAND_NAME.search(stripped)
    if name is None:
        return None
    args = _COMMAND_ARGS.search(stripped)
    return f"{name[1].strip()} {args[1].strip() if args else ''}".strip() or None


def _cli_command(data: dict[str, Any], name: str) -> tuple[str | None, list[str]]:
    """The ``notes`` sub-command of a Bash call and its arguments, if it runs one."""
    command = data.get("command")
    if name != "Bash" or not isinstance(command, str):
        return None, []
    for segment in _SHELL_SPLIT.split(command):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        found = _notes_subcommand(words)
        if found[0] is not None:
            return found
    return None, []


def _notes_subcommand(words: list[str]) -> tuple[str | None, list[str]]:
    for index, word in enumerate(words):
        if os.path.basename(word) != "notes":
            continue
        rest = words[index + 1:]
        while rest and rest[0].startswith("-"):
            option = rest.pop(0)
            if option in CLI_VALUE_OPTIONS and rest:
                rest.pop(0)
        if rest:
            args = [w for w in rest[1:] if not w.startswith("-")]
            return rest[0], args
    return None, []


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text") or "") for b in content
                         if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _file_text(text: str, extra: Any) -> str:
    """A Read result's file text: the raw content when the record has it, else the shown
    text without its ``cat -n`` prefixes and system reminders."""
    file = extra.get("file") if isinstance(extra, dict) else None
    if isinstance(file, dict) and isinstance(file.get("content"), str):
        return str(file["content"])
    return _CAT_N.sub("", _REMINDER.sub("", text))


def _drop_read_header(text: str) -> str:
    """``notes read``/``read_section`` output without its ``[note#section · …]`` line."""
    lines = text.split("\n")
    if lines and _READ_HEADER.match(lines[0].strip()):
        lines = lines[1:]
    return "\n".join(lines)


def _str(value: Any) -> str | None:
    return str(value) if isinstance(value, str) and value else None
