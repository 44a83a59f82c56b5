"""Pure text edits of a note: a new note, a new state, a new history entry.

Each returns the note's new text (``with_*``) or the new note parsed (``state_replaced``,
``entry_added``: the parse that verified it, which a write hands on to the ledger and the
index), splicing lines so that nothing outside the changed part moves: past history entries
stay byte-identical.
"""

from __future__ import annotations

import datetime as dt
import re

import yaml
from markdown_it import MarkdownIt

from memory.errors import InvalidArgument
from memory.model.note import Note
from memory.model.text import excerpt, split_lines

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?: (\d{2}):(\d{2}))?$")
_MD = MarkdownIt("commonmark")


def new_note_text(title: str, tags: list[str], aliases: list[str] | None = None,
                  project: str | None = None) -> str:
    title = _single_line(title, "title")
    meta: dict[str, object] = {"title": title, "tags": tags}
    if aliases:
        meta["aliases"] = aliases
    if project:
        meta["project"] = project
    front = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, default_flow_style=None,
                           width=1000)
    return f"---\n{front}---\n# {title}\n\n## Current state\n\n## History\n"


def with_state(note: Note, body: str) -> str:
    """The note's text with its state section's body replaced (:func:`state_replaced`)."""
    return state_replaced(note, body).text


def state_replaced(note: Note, body: str) -> Note:
    """The note with its state section's body replaced (heading kept, both lines of a
    setext one), parsed once (to verify it; a write hands that parse on). Refused when the
    state holds what looks like history (a dated heading, a history heading indented into a
    list): a new state would take it away."""
    refuse_control_characters(body, "the state")
    _refuse_headings(body, max_level=2, what="the state")
    _refuse_history_in_state(note)
    nl = newline_of(note.text)
    lines = split_lines(note.text)
    clean = _lines(body.strip("\n").rstrip(), nl)
    state = note.state
    if state is None:
        at = next((s.start for s in note.sections if s.kind != "header"), len(lines))
        if at == len(lines) and lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += nl
        follows = at < len(lines)
        block = f"## Current state{nl}" + (f"{clean}{nl}" if clean else "") + (nl if follows
                                                                                else "")
        text = _splice(lines, at, at, block)
    else:
        follows = state.end < len(lines)
        heading = state.heading if state.heading.endswith(("\n", "\r")) \
            else state.heading + nl
        block = heading + (f"{clean}{nl}" if clean else "") + (nl if follows else "")
        text = _splice(lines, state.start, state.end, block)
    return _verify_rest_unchanged(note, text)


def _refuse_history_in_state(note: Note) -> None:
    inside = [p for p in note.problems if p.code == "history-in-state"]
    if inside:
        first = inside[0]
        raise InvalidArgument(f"line {first.line}: {first.message}; nothing was written")


def _verify_rest_unchanged(before: Note, text: str) -> Note:
    """A new state must leave every section after it exactly as it was, and the state must
    still be a state (its heading kept as a heading). Returns ``text`` parsed."""
    after = before.reparsed(text)
    keep = [(s.id, s.text.rstrip()) for s in before.sections if s.kind not in ("state", "sub")
            and s.kind != "header"]
    now = [(s.id, s.text.rstrip()) for s in after.sections if s.kind not in ("state", "sub")
           and s.kind != "header"]
    if keep != now or after.state is None:
        raise InvalidArgument("this state would change the rest of the note (an unclosed "
                              "code fence or HTML comment?); close it and retry")
    return after


def with_entry(note: Note, title: str, body: str, date: str | None = None) -> str:
    """The note's text with a dated entry appended at the end of its history."""
    return entry_added(note, title, body, date).text


def entry_added(note: Note, title: str, body: str, date: str | None = None) -> Note:
    """The note with a dated entry appended at the end of its history, parsed once (to
    verify it; a write hands that parse on)."""
    title = _single_line(title, "title")
    stamp = check_date(date) if date else dt.date.today().isoformat()
    refuse_control_characters(body, "the entry's body")
    _refuse_headings(body, max_level=3, what="an entry's body")
    nl = newline_of(note.text)
    clean = _lines(body.strip("\n").rstrip(), nl)
    entry = f"### {stamp} · {title}{nl}" + (f"{clean}{nl}" if clean else "")
    lines = split_lines(note.text)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += nl
    history = note.history
    if history is None:
        sep = nl if lines and lines[-1].strip() else ""
        text = "".join(lines) + f"{sep}## History{nl}{entry}"
    else:
        at = history.end
        before = lines[at - 1] if at > 0 else "\n"
        sep = "" if not before.strip() or at - 1 == history.start else nl
        trailer = nl if at < len(lines) else ""
        text = _splice(lines, at, at, f"{sep}{entry}{trailer}")
    return _verify_entry_added(note, text, title)


def _verify_entry_added(before: Note, text: str, title: str) -> Note:
    """The new text must hold every old entry unchanged plus exactly the new one, last.
    Returns ``text`` parsed."""
    after = before.reparsed(text)
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
    return after


def check_date(value: str) -> str:
    value = value.strip()
    matched = _DATE.match(value)
    if not matched:
        raise InvalidArgument(f"date {excerpt(value)} is not ISO; write YYYY-MM-DD or "
                              "'YYYY-MM-DD HH:MM'")
    try:
        dt.date.fromisoformat(value[:10])
    except ValueError:
        raise InvalidArgument(f"date {excerpt(value)} does not exist; check the day and month") \
            from None
    hours, minutes = matched.groups()
    if hours is not None and (int(hours) > 23 or int(minutes) > 59):
        raise InvalidArgument(f"time {hours}:{minutes} in date {excerpt(value)} does not exist; "
                              "write hours 00-23 and minutes 00-59 (HH:MM)")
    return value


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
_NOT_UTF8 = re.compile(r"[\ud800-\udfff]")  # bytes that were not UTF-8 (surrogateescape)


def refuse_control_characters(value: str, what: str) -> None:
    """NUL and other control bytes would turn a note into 'binary'; bytes that are not
    UTF-8 could not be written at all. Refuse both up front."""
    broken = _NOT_UTF8.search(value)
    if broken:
        raise InvalidArgument(f"{what} holds bytes that are not UTF-8 text (at position "
                              f"{broken.start()}); re-encode it as UTF-8 and retry")
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


_SENTINEL = "notes-sentinel-heading"


def _refuse_swallowing(body: str, level: int, what: str) -> None:
    """Refuse a body holding a block that never ends (a code fence, ``<pre>``, ``<script>``,
    ``<style>``, ``<textarea>``, an HTML comment, ``<?…?>``, ``<![CDATA[``…): in the note it
    would hide every line written after it, headings included. Tested the way markdown-it
    will read the note: a heading right after the body must still be a heading."""
    probe = body.rstrip("\n") + f"\n\n{'#' * level} {_SENTINEL}\n"
    tokens = _MD.parse(probe)
    for index, token in enumerate(tokens[:-1]):
        if token.type == "heading_open" and token.tag == f"h{level}" and token.level == 0 \
                and tokens[index + 1].content.strip() == _SENTINEL:
            return
    last_line = probe.count("\n") - 1
    culprit = next((t for t in tokens if t.map and t.map[0] <= last_line < t.map[1]
                    and t.level == 0 and t.nesting >= 0), None)
    if culprit is not None and culprit.type == "fence":
        opened = f"an unclosed code fence ({culprit.markup})"
    elif culprit is not None and culprit.type == "html_block":
        opened = f"an unclosed HTML block ({excerpt(culprit.content.split(chr(10))[0], 30)})"
    else:
        opened = "a block that never ends"
    raise InvalidArgument(f"{what} has {opened}, which would hide everything written after "
                          "it; close it and retry")


def _refuse_headings(body: str, max_level: int, what: str) -> None:
    _refuse_swallowing(body, max_level, what)
    for token in _MD.parse(body):
        if token.type == "heading_open" and int(token.tag[1]) <= max_level:
            raise InvalidArgument(f"{what} may not contain '{'#' * int(token.tag[1])}' headings "
                                  f"(they would break the note's sections); use "
                                  f"'{'#' * (max_level + 1)}' or plain text")


def _splice(lines: list[str], start: int, end: int, block: str) -> str:
    return "".join(lines[:start]) + block + "".join(lines[end:])


def newline_of(text: str) -> str:
    """The note's own line ending, that of its first line: a CRLF note stays CRLF, and a
    CR-only one (old Mac) stays CR-only."""
    first = split_lines(text)[:1]
    if first and first[0].endswith("\r\n"):
        return "\r\n"
    return "\r" if first and first[0].endswith("\r") else "\n"


def _lines(text: str, nl: str) -> str:
    """``text`` with its line ends made ``nl``."""
    flat = text.replace("\r\n", "\n").replace("\r", "\n")
    return flat if nl == "\n" else flat.replace("\n", nl)
