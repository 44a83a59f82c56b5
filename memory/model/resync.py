"""A changed source brought into the note it was imported as (docs/import.md, "Importing
again"). Pure text, no I/O.

The note and the source's new version (composed by :mod:`memory.model.compose`) are each
split in two: the **undated part** (everything between the front matter and the history:
the header, the state and any undated section) and the **history**. Then:

- a dated entry of the new version that the note does not hold yet (its lines are not all
  in the note already, and no entry of that day says the same) is appended to the history,
  oldest first, as the import made it; entries the note already holds (imported before, or
  written by notes itself and copied into the source) are never added twice;
- when the undated part changed at the source (against the version imported last, or, with
  no record of it, against the note) and the note does not already say it, the note's
  undated part is replaced by the new one, and the part it replaces is kept as a dated
  ``State before import`` history entry; an undated part changed only on the notes side is
  left as it is;
- nothing is ever taken out of the history: lines removed at the source stay there.

The front matter is the note's own (its title, tags and project stay); where the source came
from is kept in the state folder (:mod:`memory.state.imports`), and :func:`without_provenance`
takes out the keys that older imports wrote into the note. Merging the same version twice
changes nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from memory.model.edit import entry_added, newline_of, with_entry
from memory.model.note import ENTRY_HEADING, Note, Section
from memory.model.text import split_lines

STATE_BEFORE = "State before import"
_HEADING_LINE = re.compile(r"^ {0,3}(#{1,6}(\s|$)|(=+|-+)\s*$)")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+")
_DATE_WORDS = re.compile(r"^[\[*_`(]*\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2})?[\]*_`)]*"
                         r"\s*(?:[:·•\-—–|,]\s*)?")
PROVENANCE_KEYS = ("imported_from", "imported_sha256", "imported_on")  # older imports' keys
_PROVENANCE_LINE = re.compile(r"^(?:imported_from|imported_sha256|imported_on)\s*:")


@dataclass(frozen=True)
class Merged:
    text: str  # the note's new text (the same as the note's when nothing changed)
    entries: int  # dated entries added
    state: bool  # the undated part was replaced (the old one kept as an entry)


def merge_source(note: Note, new: Note, previous: Note | None, stamp: str) -> Merged:
    """``note`` with what ``new`` (the source's new version, composed) brings; ``previous``:
    the version imported last, composed (None when unknown); ``stamp``: the date of the
    ``State before import`` entry (``YYYY-MM-DD HH:MM``)."""
    text, old_body = note.text, None
    if _undated_changed(note, new, previous):
        text, old_body = _with_undated(note, new), _old_body(note)
    current = note.reparsed(text)
    added = 0
    for entry in sorted(new.entries, key=lambda e: e.date or ""):
        if _known(current, entry):
            continue
        current = current.reparsed(_appended(current, entry))
        added += 1
    if old_body is None and not added:
        return Merged(note.text, 0, False)
    if old_body:  # after the source's entries: it is the newest
        current = entry_added(current, STATE_BEFORE, old_body, stamp)
    return Merged(current.text, added, old_body is not None)


# -- the undated part -----------------------------------------------------------------
def _undated(note: Note) -> list[str]:
    lines = split_lines(note.text)
    history = note.history
    return lines[note.body_start:history.start if history is not None else len(lines)]


def _words(lines: list[str]) -> list[str]:
    return [" ".join(line.split()) for line in lines if line.strip()]


def _undated_changed(note: Note, new: Note, previous: Note | None) -> bool:
    wanted = _words(_undated(new))
    if wanted == _words(_undated(note)):
        return False  # the note says it already
    if previous is not None and wanted == _words(_undated(previous)):
        return False  # unchanged at the source: what differs was written on this side
    return True


def _with_undated(note: Note, new: Note) -> str:
    """The note with the new undated part and its own front matter and history."""
    lines = split_lines(note.text)
    nl = newline_of(note.text)
    history = note.history
    head = lines[:note.body_start]
    fresh = [_line_end(line, nl) for line in _undated(new)]
    tail = lines[history.start:] if history is not None else [f"## History{nl}"]
    if fresh and fresh[-1].strip():
        fresh.append(nl)
    return "".join(head + fresh + tail)


def _old_body(note: Note) -> str:
    """The note's undated part as an entry's body: without its H1 and the state's heading;
    fenced when it still holds headings (which would break the history)."""
    lines = _undated(note)
    state = note.state
    drop: set[int] = set()
    if state is not None:
        first = state.start - note.body_start
        drop.update(range(first, first + state.heading_lines))
    h1 = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
    if h1 is not None and (state is None or h1 < state.start - note.body_start):
        drop.add(h1)
    kept = [line.rstrip("\r\n") for i, line in enumerate(lines) if i not in drop]
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    if any(_HEADING_LINE.match(line) for line in kept):
        fence = "`" * max(3, 1 + max((len(m) for line in kept
                                      for m in re.findall(r"`+", line)), default=0))
        kept = [f"{fence}markdown", *kept, fence]
    return "\n".join(kept)


def _line_end(line: str, nl: str) -> str:
    return line if line.endswith(("\n", "\r")) else line + nl


# -- dated entries --------------------------------------------------------------------
def _body_lines(entry: Section) -> list[str]:
    lines = split_lines(entry.text)[entry.heading_lines:]
    return [line for line in _words(lines) if not line.startswith(("<!--", "-->"))]


def _plain(line: str) -> str:
    return _DATE_WORDS.sub("", _LIST_MARK.sub("", line)).casefold()


def _known_text(note: Note, entry: Section) -> bool:
    """Every line of the entry's body is a line of the note already."""
    have = set(_words(split_lines(note.text)))
    body = _body_lines(entry)
    return bool(body) and all(line in have for line in body)


def _known(note: Note, entry: Section) -> bool:
    """The note holds this entry: its lines, or an entry of the same day saying the same
    (without list marks and dates: what notes wrote and the source repeated)."""
    if _known_text(note, entry):
        return True
    said = " ".join(_plain(line) for line in _body_lines(entry)) or _plain(_title(entry))
    if not said:
        return False
    for other in note.entries:
        if other.date and entry.date and other.date[:10] == entry.date[:10]:
            theirs = " ".join(_plain(line) for line in [_title(other), *_body_lines(other)])
            if said in theirs:
                return True
    return False


def _title(entry: Section) -> str:
    matched = ENTRY_HEADING.match(entry.title)
    return (matched["title"] if matched else entry.title).strip()


def _appended(note: Note, entry: Section) -> str:
    """The note with ``entry`` appended (its date and time, title and body as composed)."""
    matched = ENTRY_HEADING.match(entry.title)
    date = entry.date or ""
    if matched and matched["time"]:
        date = f"{matched['date']} {matched['time']}"
    body = "".join(split_lines(entry.text)[entry.heading_lines:])
    title = _title(entry) or "imported"
    return with_entry(note, title, body, date or None)


def provenance(note: Note) -> dict[str, str]:
    """The keys older imports wrote into the note's front matter (empty for a note made
    since: its provenance is in the state folder)."""
    return {k: str(note.meta[k]) for k in PROVENANCE_KEYS if note.meta.get(k) is not None}


def without_provenance(note: Note) -> str:
    """The note's text without the provenance keys an older import wrote into its front
    matter (each key's line and the lines that continue its value), every other byte as it
    was; the text unchanged when it has none, or when what is left would not read as the
    same front matter without them (nothing is taken out then)."""
    if not provenance(note) or not note.front_matter:
        return note.text
    lines = split_lines(note.text)
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") == "---"), None)
    if close is None or lines[0].rstrip("\r\n") != "---":
        return note.text
    kept, dropping = [], False
    for line in lines[1:close]:
        if _PROVENANCE_LINE.match(line):
            dropping = True
        elif dropping and line[:1] not in (" ", "\t"):
            dropping = False
        if not dropping:
            kept.append(line)
    try:
        left = yaml.safe_load("".join(kept)) or {}
    except (yaml.YAMLError, ValueError):
        return note.text
    if not isinstance(left, dict) or {str(k): v for k, v in left.items()} != {
            k: v for k, v in note.meta.items() if k not in PROVENANCE_KEYS}:
        return note.text
    return "".join([lines[0], *kept, *lines[close:]])
