"""A Markdown file as a note in our format, every line of it kept (docs/import.md).

Pure text, no I/O. The source's front matter is kept and our keys (``title`` when it has
none, ``project``) are added to it; its text becomes the state; history entries come from
what is dated: H2 or H3 sections and top-level list items whose heading or first words are
an ISO date, oldest first. A file already in our format keeps its layout. Where a source
heading would break our sections (a dated H2, a second ``## History``, an undated H3 inside
the history) our own heading takes its place and the source's heading line is kept verbatim
inside an HTML comment just below it, which is neither a block nor read
(:func:`memory.model.text.without_kept_headings`). The result is checked: it parses without
errors and every source line appears in it unchanged; otherwise the whole source goes
verbatim into a fenced block in the state.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import yaml
from markdown_it import MarkdownIt

from memory.config import DEFAULT_HISTORY_HEADINGS, DEFAULT_STATE_HEADINGS
from memory.model.note import ENTRY_HEADING, parse_note
from memory.model.text import KEPT_HEADING, fold, split_lines

# Written by imports before their provenance moved to the state folder: a source whose front
# matter holds them is fenced, so that they are never read as the provenance of its note.
OUR_KEYS = ("imported_from", "imported_sha256", "imported_on")
_MD = MarkdownIt("commonmark").enable("table").disable("inline")
_FM_LINE = re.compile(r"^-{3,}[ \t]*$")
_DATED = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])?\s*[\[*_`(]*\s*(?P<date>\d{4}-\d{2}-\d{2})"
                    r"(?:[ T](?P<time>\d{2}:\d{2}))?[\]*_`)]*\s*(?:[:·•\-—–|,]\s*)?(?P<rest>.*)$")
_WRAP_OPEN = KEPT_HEADING
_WRAP_CLOSE = "-->"
_TITLE_CHARS = 60
_STATES = {fold(n) for n in DEFAULT_STATE_HEADINGS}
_HISTORIES = {fold(n) for n in DEFAULT_HISTORY_HEADINGS}


@dataclass(frozen=True)
class Composed:
    text: str
    title: str
    entries: int  # dated history entries
    layout: str  # "kept" (already a note), "composed", "fenced" (the fallback)


@dataclass(frozen=True)
class _Head:
    level: int
    start: int  # 0-based line within the body
    end: int
    title: str


@dataclass
class _Entry:
    date: str
    time: str | None
    order: int
    lines: list[str]


@dataclass
class _Body:
    lines: list[str]
    heads: list[_Head]
    items: list[tuple[int, int]]  # top-level list items: (start, end) body lines
    nl: str
    entries: list[_Entry] = field(default_factory=list)


def compose_note(source: str, fallback_title: str, imported: dict[str, str]) -> Composed:
    """``source`` (UTF-8 text) as a note; ``imported`` holds the keys to add (``project``);
    ``title`` is added when the source has none."""
    text = source.removeprefix("\ufeff")
    nl = "\r\n" if "\r\n" in text else ("\r" if "\r" in text and "\n" not in text else "\n")
    lines = split_lines(text)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += nl
    meta, fm_lines, body = _split_front_matter(lines)
    title = _title(meta, body, fallback_title)
    for attempt in (_compose, _fenced):
        composed = attempt(lines, meta, fm_lines, body, title, imported, nl)
        if composed is not None and keeps_every_line(text, composed.text):
            return composed
    raise ValueError("the note could not be composed with every source line kept")


def keeps_every_line(source: str, note: str) -> bool:
    """Every line of ``source`` (without its line break) is a line of ``note`` as often."""
    def counted(text: str) -> Counter[str]:
        return Counter(line.rstrip("\r\n") for line in split_lines(text))

    return not counted(source.removeprefix("\ufeff")) - counted(note)


def _split_front_matter(lines: list[str]) -> tuple[dict[str, Any] | None, list[str], list[str]]:
    """(metadata or None when unusable, the front matter lines, the body lines)."""
    if not lines or not _FM_LINE.match(lines[0].rstrip("\r\n")):
        return {}, [], lines
    close = next((i for i in range(1, len(lines)) if _FM_LINE.match(lines[i].rstrip("\r\n"))),
                 None)
    if close is None:
        return {}, [], lines
    try:
        data = yaml.safe_load("".join(lines[1:close]))
    except yaml.YAMLError:
        data = False
    if data is None:
        data = {}
    meta = {str(k): v for k, v in data.items()} if isinstance(data, dict) else None
    return meta, lines[:close + 1], lines[close + 1:]


def _title(meta: dict[str, Any] | None, body: list[str], fallback: str) -> str:
    for key in ("title", "name"):
        value = (meta or {}).get(key)
        if isinstance(value, str | int | float) and str(value).strip():
            return " ".join(str(value).split())
    h1 = next((h for h in _scan(body)[0] if h.level == 1 and h.title), None)
    return " ".join(h1.title.split()) if h1 else fallback


def _scan(lines: list[str]) -> tuple[list[_Head], list[tuple[int, int]]]:
    tokens = _MD.parse("".join(lines))
    heads: list[_Head] = []
    items: list[tuple[int, int]] = []
    for i, tok in enumerate(tokens):
        if tok.map is None:
            continue
        if tok.type == "heading_open" and tok.level == 0:
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            heads.append(_Head(int(tok.tag[1]), tok.map[0], tok.map[1], title))
        elif tok.type == "list_item_open" and tok.level == 1:
            start, end = tok.map
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1
            items.append((start, end))
    return heads, items


# -- the composed layout ---------------------------------------------------------------
def _compose(lines: list[str], meta: dict[str, Any] | None, fm_lines: list[str],
             body_lines: list[str], title: str, imported: dict[str, str],
             nl: str) -> Composed | None:
    front = _front_matter(meta, fm_lines, title, imported, nl)
    if front is None:
        return None
    existing = parse_note("".join(lines))
    if existing.state is not None and not any(p.severity == "error"
                                              for p in existing.problems):
        return _checked(front + "".join(body_lines), title, "kept", len(existing.entries))
    heads, items = _scan(body_lines)
    body = _Body(body_lines, heads, items, nl)
    out = _layout(body, title)
    return _checked(front + "".join(out), title, "composed", len(body.entries))


def _layout(body: _Body, title: str) -> list[str]:
    nl, heads = body.nl, body.heads
    h2s = [h for h in heads if h.level == 2]
    top_end = h2s[0].start if h2s else len(body.lines)
    header, top_start = _h1(body, top_end, title)
    state = next((h for h in h2s if fold(h.title) in _STATES and not _dated(h.title)), None)
    history = next((h for h in h2s if fold(h.title) in _HISTORIES and not _dated(h.title)),
                   None)
    out = list(header)
    if state is None:
        out += _heading(out, "## Current state", nl)
        out += _plain(body, top_start, top_end, history=False)
    else:
        out += body.lines[top_start:top_end]
    others: list[str] = []
    history_part: list[str] = []
    for index, h2 in enumerate(h2s):
        end = h2s[index + 1].start if index + 1 < len(h2s) else len(body.lines)
        if h2 is state:
            out += body.lines[h2.start:h2.end] + _plain(body, h2.end, end, history=False)
        elif h2 is history:
            history_part = body.lines[h2.start:h2.end] + _plain(body, h2.end, end, True)
        elif _dated(h2.title):
            body.entries.append(_entry(body, h2, end, wrap=True))
        elif fold(h2.title) in _STATES | _HISTORIES:
            others += _heading(out + others, f"## {h2.title} (imported)", nl)
            others += _wrapped(body.lines[h2.start:h2.end], nl)
            others += _plain(body, h2.end, end, history=False)
        else:
            others += body.lines[h2.start:h2.end] + _plain(body, h2.end, end, history=False)
    out += others
    if history_part:
        out += _heading(out, "", nl)[:-1] + history_part
    else:
        out += _heading(out, "## History", nl)
    for entry in sorted(body.entries, key=lambda e: (e.date, e.time or "", e.order)):
        if out and out[-1].strip():
            out.append(nl)
        out += entry.lines
    return out


def _h1(body: _Body, top_end: int, title: str) -> tuple[list[str], int]:
    """The header's H1: the source's, when it opens the body, else one made of the title."""
    first = next((i for i in range(top_end) if body.lines[i].strip()), None)
    h1 = next((h for h in body.heads if h.level == 1 and h.start == first), None)
    if h1 is not None:
        return body.lines[:h1.end], h1.end
    return [f"# {title}{body.nl}"], 0


def _plain(body: _Body, start: int, end: int, history: bool) -> list[str]:
    """Lines ``start:end`` with their dated H3 sections and dated list items taken out as
    entries; inside the history an undated H3's heading is wrapped (it would start an
    entry)."""
    taken: set[int] = set()
    replaced: dict[int, list[str]] = {}
    for h3 in (h for h in body.heads if h.level == 3 and start <= h.start < end):
        stop = next((h.start for h in body.heads if h.start > h3.start and h.level <= 3
                     and h.start < end), end)
        if _dated(h3.title):
            body.entries.append(_entry(body, h3, stop, wrap=not _is_entry_heading(h3, body)))
            taken.update(range(h3.start, stop))
        elif history:
            replaced[h3.start] = _wrapped(body.lines[h3.start:h3.end], body.nl)
            taken.update(range(h3.start + 1, h3.end))
    for item_start, item_end in body.items:
        if start <= item_start and item_end <= end and item_start not in taken:
            found = _dated(body.lines[item_start])
            if found:
                date, time, rest = found
                body.entries.append(_Entry(date, time, item_start, [
                    _entry_heading(date, time, rest, body.nl),
                    *body.lines[item_start:item_end]]))
                taken.update(range(item_start, item_end))
    out: list[str] = []
    for i in range(start, end):
        if i in replaced:
            out += replaced[i]
        elif i not in taken:
            out.append(body.lines[i])
    return out


def _entry(body: _Body, head: _Head, stop: int, wrap: bool) -> _Entry:
    """A dated H2 or H3 section as an entry; its inner H2/H3 headings wrapped."""
    found = _dated(head.title)
    assert found is not None
    date, time, rest = found
    lines = ([_entry_heading(date, time, rest, body.nl)]
             + _wrapped(body.lines[head.start:head.end], body.nl)) if wrap \
        else list(body.lines[head.start:head.end])
    inner = {h.start: h for h in body.heads if head.end <= h.start < stop and h.level <= 3}
    i = head.end
    while i < stop:
        if i in inner:
            lines += _wrapped(body.lines[i:inner[i].end], body.nl)
            i = inner[i].end
        else:
            lines.append(body.lines[i])
            i += 1
    return _Entry(date, time, head.start, lines)


def _is_entry_heading(head: _Head, body: _Body) -> bool:
    line = body.lines[head.start]
    return head.end == head.start + 1 and line.startswith("### ") \
        and ENTRY_HEADING.match(head.title) is not None


def _dated(text: str) -> tuple[str, str | None, str] | None:
    """(date, time, rest) when ``text`` (a heading or a list item's first line) starts with
    an ISO date that exists."""
    match = _DATED.match(text.rstrip("\r\n"))
    if not match:
        return None
    try:
        dt.date.fromisoformat(match["date"])
    except ValueError:
        return None
    return match["date"], match["time"], match["rest"]


def _entry_heading(date: str, time: str | None, rest: str, nl: str) -> str:
    words = " ".join(re.sub(r"[*_`#\[\]]+", " ", rest).split())
    if len(words) > _TITLE_CHARS:
        words = words[:_TITLE_CHARS].rsplit(" ", 1)[0] + "…"
    stamp = f"{date} {time}" if time else date
    return f"### {stamp} · {words or 'Entry'}{nl}"


def _heading(before: list[str], heading: str, nl: str) -> list[str]:
    gap = [nl] if before and before[-1].strip() else []
    return [*gap, heading + nl]


def _wrapped(lines: list[str], nl: str) -> list[str]:
    return [_WRAP_OPEN + nl, *lines, _WRAP_CLOSE + nl]


def _front_matter(meta: dict[str, Any] | None, fm_lines: list[str], title: str,
                  imported: dict[str, str], nl: str) -> str | None:
    """The source's front matter with our keys added before its closing line (None when
    that cannot be done safely: the fallback fences the source instead)."""
    ours: dict[str, Any] = dict(imported)
    if meta is None or any(k in (meta or {}) for k in (*OUR_KEYS, *imported)):
        return None
    if "title" not in meta:
        ours = {"title": title, **ours}
    if not ours:
        return "".join(fm_lines)  # a title of its own and no project: as it is
    added = yaml.safe_dump(ours, allow_unicode=True, sort_keys=False, width=1000)
    added = added.replace("\n", nl)
    if not fm_lines:
        return f"---{nl}{added}---{nl}"
    text = "".join(fm_lines[:-1]) + added + fm_lines[-1]
    try:
        merged = yaml.safe_load("".join(split_lines(text)[1:-1]))
    except yaml.YAMLError:
        return None
    if not isinstance(merged, dict) or merged != {**meta, **ours}:
        return None
    return text


def _fenced(lines: list[str], meta: dict[str, Any] | None, fm_lines: list[str],
            body: list[str], title: str, imported: dict[str, str],
            nl: str) -> Composed | None:
    """The fallback: the whole source, verbatim, in a fenced block as the state."""
    ticks = max([3, *(len(run) + 1 for line in lines for run in re.findall(r"`+", line))])
    fence = "`" * ticks
    front = yaml.safe_dump({"title": title, **imported}, allow_unicode=True, sort_keys=False,
                           width=1000).replace("\n", nl)
    text = (f"---{nl}{front}---{nl}# {title}{nl}{nl}## Current state{nl}{fence}markdown{nl}"
            + "".join(lines) + f"{fence}{nl}{nl}## History{nl}")
    return _checked(text, title, "fenced", 0)


def _checked(text: str, title: str, layout: str, entries: int) -> Composed | None:
    """The composed note, if it parses without errors, with a state, the entries made and
    (unless kept as it was) a history where later entries can go."""
    note = parse_note(text)
    if any(p.severity == "error" for p in note.problems) or note.state is None \
            or len(note.entries) != entries or (layout != "kept" and note.history is None):
        return None
    return Composed(text, title, entries, layout)
