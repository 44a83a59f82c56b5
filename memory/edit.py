"""Pure text edits of a note: a new note, a new state, a new history entry.

Each returns the note's new text, splicing lines so that nothing outside the changed part
moves: past history entries stay byte-identical.
"""

from __future__ import annotations

import datetime as dt
import re

import yaml
from markdown_it import MarkdownIt

from .errors import InvalidArgument
from .note import Note, parse_note
from .text import split_lines

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?$")
_MD = MarkdownIt("commonmark")


def new_note_text(title: str, tags: list[str], aliases: list[str] | None = None) -> str:
    title = _single_line(title, "title")
    meta: dict[str, object] = {"title": title, "tags": tags}
    if aliases:
        meta["aliases"] = aliases
    front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, default_flow_style=None,
                           width=1000)
    return f"---\n{front}---\n# {title}\n\n## Current state\n\n## History\n"


def with_state(note: Note, body: str) -> str:
    """The note's text with its state section's body replaced (heading kept)."""
    refuse_control_characters(body, "the state")
    _refuse_headings(body, max_level=2, what="the state")
    lines = split_lines(note.text)
    clean = body.strip("\n").rstrip()
    state = note.state
    if state is None:
        at = next((s.start for s in note.sections if s.kind != "header"), len(lines))
        block = f"## Current state\n{clean}\n\n" if clean else "## Current state\n\n"
        return _splice(lines, at, at, block)
    follows = state.end < len(lines)
    heading = lines[state.start] if lines[state.start].endswith("\n") else lines[state.start] + "\n"
    block = heading + (f"{clean}\n" if clean else "") + ("\n" if follows else "")
    text = _splice(lines, state.start, state.end, block)
    _verify_rest_unchanged(note, text)
    return text


def _verify_rest_unchanged(before: Note, text: str) -> None:
    """A new state must leave every section after it exactly as it was."""
    after = parse_note(text)
    keep = [(s.id, s.text.rstrip()) for s in before.sections if s.kind not in ("state", "sub")
            and s.kind != "header"]
    now = [(s.id, s.text.rstrip()) for s in after.sections if s.kind not in ("state", "sub")
           and s.kind != "header"]
    if keep != now:
        raise InvalidArgument("this state would change the rest of the note (an unclosed "
                              "code fence or HTML comment?); close it and retry")


def with_entry(note: Note, title: str, body: str, date: str | None = None) -> str:
    """The note's text with a dated entry appended at the end of its history."""
    title = _single_line(title, "title")
    stamp = check_date(date) if date else dt.date.today().isoformat()
    refuse_control_characters(body, "the entry's body")
    _refuse_headings(body, max_level=3, what="an entry's body")
    clean = body.strip("\n").rstrip()
    entry = f"### {stamp} · {title}\n" + (f"{clean}\n" if clean else "")
    lines = split_lines(note.text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    history = note.history
    if history is None:
        sep = "\n" if lines and lines[-1].strip() else ""
        text = "".join(lines) + f"{sep}## History\n{entry}"
    else:
        at = history.end
        before = lines[at - 1] if at > 0 else "\n"
        sep = "" if not before.strip() or at - 1 == history.start else "\n"
        trailer = "\n" if at < len(lines) else ""
        text = _splice(lines, at, at, f"{sep}{entry}{trailer}")
    _verify_entry_added(note, text, title)
    return text


def _verify_entry_added(before: Note, text: str, title: str) -> None:
    """The new text must hold every old entry unchanged plus exactly the new one, last."""
    after = parse_note(text)
    old = [(e.id, e.text.rstrip()) for e in before.entries]
    new = [(e.id, e.text.rstrip()) for e in after.entries]
    others_before = [(s.id, s.text.rstrip()) for s in before.sections if s.parent is None
                     and s.kind != "history"]
    others_after = [(s.id, s.text.rstrip()) for s in after.sections if s.parent is None
                    and s.kind != "history"]
    if new[:-1] != old or len(new) != len(old) + 1 or after.entries[-1].title != title \
            or others_after != others_before:
        raise InvalidArgument("this entry would change the note's structure (an unclosed "
                              "code fence or HTML comment in the body?); close it and retry")


def check_date(value: str) -> str:
    value = value.strip()
    if not _DATE.match(value):
        raise InvalidArgument(f"date {value!r} is not ISO; write YYYY-MM-DD or "
                              "'YYYY-MM-DD HH:MM'")
    try:
        dt.date.fromisoformat(value[:10])
    except ValueError:
        raise InvalidArgument(f"date {value!r} does not exist; check the day and month") \
            from None
    return value


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")


def refuse_control_characters(value: str, what: str) -> None:
    """NUL and other control bytes would turn a note into 'binary'; refuse them up front."""
    bad = _CONTROL.search(value)
    if bad:
        raise InvalidArgument(f"{what} holds a control character (U+{ord(bad.group()):04X}) "
                              f"at position {bad.start()}; remove it and retry")


def _single_line(value: str, what: str) -> str:
    refuse_control_characters(value, f"the {what}")
    clean = " ".join(value.split())
    if not clean:
        raise InvalidArgument(f"the {what} is empty; give a short {what}")
    return clean


def _refuse_unclosed(body: str, what: str) -> None:
    """An unclosed code fence or HTML comment would swallow everything written after it."""
    lines = body.split("\n")
    for token in _MD.parse(body):
        if token.type == "fence" and token.map is not None:
            last = lines[token.map[1] - 1].strip() if token.map[1] - 1 < len(lines) else ""
            closed = token.map[1] - token.map[0] >= 2 and last.startswith(token.markup) \
                and not last.strip(token.markup[0])
            if not closed:
                raise InvalidArgument(f"{what} has an unclosed code fence "
                                      f"({token.markup}); close it and retry")
    if body.count("<!--") > body.count("-->"):
        raise InvalidArgument(f"{what} has an unclosed HTML comment; close it and retry")


def _refuse_headings(body: str, max_level: int, what: str) -> None:
    _refuse_unclosed(body, what)
    for token in _MD.parse(body):
        if token.type == "heading_open" and int(token.tag[1]) <= max_level:
            raise InvalidArgument(f"{what} may not contain '{'#' * int(token.tag[1])}' headings "
                                  f"(they would break the note's sections); use "
                                  f"'{'#' * (max_level + 1)}' or plain text")


def _splice(lines: list[str], start: int, end: int, block: str) -> str:
    return "".join(lines[:start]) + block + "".join(lines[end:])
