"""A note's parts: its blocks and sections, and how its headings make them.

Pure functions, no I/O, and no Markdown parser: :func:`memory.model.note.parse_note` scans the
body (headings and top-level blocks, as markdown-it reads them) and hands them here, where
:func:`build_sections` cuts the note into sections (header, state with its sub-sections,
history with its dated entries, plain sections), each a line range with a unique stable id and
its blocks, and reports what a write would break (a dated entry read as part of the state, a
block that never ends).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

from memory.model.front_matter import Problem
from memory.model.text import fold, slugify, split_lines, without_kept_headings

SectionKind = Literal["header", "state", "sub", "history", "entry", "section"]

ENTRY_HEADING = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})(?:[ T](?P<time>\d{2}:\d{2}))?"
    r"\s*(?:[·•\-—–:|]\s*)?(?P<title>.*)$"
)


@dataclass(frozen=True)
class Block:
    """A top-level block of a section (paragraph, list item, code fence, table…)."""

    start: int  # 0-based first line, inclusive
    end: int  # 0-based last line, exclusive
    text: str


@dataclass(frozen=True)
class Section:
    """One addressable part of a note: a line range with a stable id."""

    id: str
    kind: SectionKind
    title: str
    start: int
    end: int
    text: str
    level: int
    date: str | None = None
    parent: str | None = None
    blocks: tuple[Block, ...] = ()
    heading_lines: int = 1  # lines of its heading: 2 for a setext one (title, underline)

    @property
    def heading(self) -> str:
        """The heading's own lines, exactly (both lines of a setext heading)."""
        return "".join(split_lines(self.text)[:self.heading_lines])

    @property
    def body(self) -> str:
        """The section's text after its heading's lines."""
        return "".join(split_lines(self.text)[self.heading_lines:])

    @property
    def shown(self) -> str:
        """The section's text as it is read and counted: without the comments that keep
        imported headings as they were (:func:`memory.model.text.without_kept_headings`)."""
        return without_kept_headings(self.text)


@dataclass
class Heading:
    """An H1–H3 heading of the body, as the scan found it."""

    level: int
    line: int  # 0-based, within the whole text
    title: str
    lines: int = 1  # 2 for a setext heading (its title line and its underline)


def build_sections(
    lines: list[str],
    headings: list[Heading],
    blocks: list[Block],
    body_start: int,
    state_names: tuple[str, ...],
    history_names: tuple[str, ...],
    problems: list[Problem],
    cut: int,
) -> list[Section]:
    """The sections of a note from its headings and blocks (their problems to ``problems``);
    past line ``cut`` no heading starts one."""
    builder = _SectionBuilder(lines, blocks, problems)
    first_h2 = next((h.line for h in headings if h.level == 2), len(lines))
    # Top-level sections start at every H2 and, after the first H2, at every H1 too: in
    # Markdown an H1 ends the H2 above it, so an H1 '# History' below the state is the
    # history, not part of the state a state write replaces.
    tops = [h for h in headings if h.level == 2 or (h.level == 1 and h.line > first_h2)]
    builder.add("header", "header", "", 0, first_h2, 0)
    states = {fold(n) for n in state_names}
    histories = {fold(n) for n in history_names}
    seen_state = seen_history = False
    for index, top in enumerate(tops):
        end = tops[index + 1].line if index + 1 < len(tops) else len(lines)
        name, level, span = fold(top.title), top.level, top.lines
        if name in states and not seen_state and level == 2:
            seen_state = True
            if index != 0:
                problems.append(Problem(top.line + 1, "state-not-first",
                                        "the state should be the first H2 section; "
                                        "move it above the others", "warning"))
            builder.add("state", "state", top.title, top.line, end, 2, span=span)
            builder.add_children(headings, top.line, min(end, cut), "state", "sub")
        elif name in histories and not seen_history:
            seen_history = True
            builder.add("history", "history", top.title, top.line, end, level, span=span)
            builder.add_children(headings, top.line, min(end, cut), "history", "entry")
        else:
            builder.add(slugify(top.title) or "section", "section", top.title, top.line, end,
                        level, span=span)
    if not seen_state:
        problems.append(Problem(body_start + 1, "missing-state",
                                "no state section (plain Markdown): its top part "
                                "stands in for the state", "warning"))
    return builder.sections


class _SectionBuilder:
    """Collects sections, giving each a unique stable id and its blocks."""

    def __init__(self, lines: list[str], blocks: list[Block], problems: list[Problem]) -> None:
        self.lines, self.blocks, self.problems = lines, blocks, problems
        self._starts = [b.start for b in blocks]  # blocks come in file order
        self.sections: list[Section] = []
        self.used: set[str] = set()
        self._next: dict[str, int] = {}  # per base id, the suffix to try next

    def add(self, base_id: str, kind: SectionKind, title: str, start: int, end: int,
            level: int, date: str | None = None, parent: str | None = None,
            span: int = 1) -> str:
        section_id = self._unique(base_id)
        first = bisect.bisect_left(self._starts, start)
        last = bisect.bisect_left(self._starts, end)
        inside = tuple(b for b in self.blocks[first:last] if b.end <= end)
        text = "".join(self.lines[start:end])
        self.sections.append(Section(section_id, kind, title, start, end, text, level,
                                     date, parent, inside, span if kind != "header" else 1))
        return section_id

    def add_children(self, headings: list[Heading], start: int, end: int, parent: str,
                     kind: SectionKind) -> None:
        h3s = [h for h in headings if h.level == 3 and start < h.line < end]
        for index, h3 in enumerate(h3s):
            stop = h3s[index + 1].line if index + 1 < len(h3s) else end
            if kind == "entry":
                base, date, title = self._entry_id(h3)
            else:
                base, date, title = f"{parent}/{slugify(h3.title) or 'part'}", None, h3.title
            self.add(base, kind, title, h3.line, stop, 3, date, parent, h3.lines)

    def _entry_id(self, heading: Heading) -> tuple[str, str | None, str]:
        match = ENTRY_HEADING.match(heading.title)
        if not match:
            self.problems.append(Problem(heading.line + 1, "entry-without-date",
                                         f"history entry '{heading.title[:60]}' does not "
                                         "start with a date; write '### YYYY-MM-DD · Title'"))
            return slugify(heading.title) or "entry", None, heading.title
        date = match["date"] + (f" {match['time']}" if match["time"] else "")
        title = match["title"].strip()
        slug = slugify(title)
        return (f"{match['date']}-{slug}" if slug else match["date"]), date, title

    def _unique(self, base: str) -> str:
        """``base``, else ``base-2``, ``base-3``…: the first one free. The search for a base
        goes on where it last stopped (the ids below were taken and stay taken), so a note
        of many equal headings costs linear time, not quadratic."""
        candidate, n = base, self._next.get(base, 2)
        while candidate in self.used:
            candidate, n = f"{base}-{n}", n + 1
        self._next[base] = n
        self.used.add(candidate)
        return candidate


def history_in_state(sections: list[Section], nested: list[Heading],
                      history_names: tuple[str, ...]) -> list[Problem]:
    """Dated entries and history headings that a state write would take away: a dated H3
    read as a sub-section of the state (no history heading above it), or a history heading
    or dated heading inside a list item or quote of the state (indented)."""
    state = next((s for s in sections if s.kind == "state"), None)
    if state is None:
        return []
    histories = {fold(n) for n in history_names}
    found = [(s.start, s.title, "") for s in sections if s.parent == "state"
             and ENTRY_HEADING.match(s.title)]
    found += [(h.line, h.title, " inside a list item or quote (indented)") for h in nested
              if state.start < h.line < state.end
              and (ENTRY_HEADING.match(h.title) or fold(h.title) in histories)]
    return [Problem(line + 1, "history-in-state",
                    f"'{title[:60]}'{where} is read as part of the state, so a new state "
                    "would remove it; put the history under its own '## History' heading at "
                    "the start of a line, below the state")
            for line, title, where in sorted(found)]


def unclosed_problem(unclosed: tuple[int, str], sections: list[Section]) -> Problem:
    line, what = unclosed
    inside = [s for s in sections if s.start <= line < max(s.end, s.start + 1)
              and s.kind != "header"]
    where = ""
    if inside:
        section = inside[-1]
        where = {"state": " in the state", "history": " in the history",
                 "entry": f" in history entry {section.id}"}.get(section.kind,
                                                                 f" in section {section.id}")
    return Problem(line + 1, "unclosed-block", f"{what}{where} opened at line {line + 1} is "
                   "never closed, so everything after it is read as part of it; close it")
