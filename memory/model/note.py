"""The note model: parse a note's text into sections and render it back, byte for byte.

Pure functions, no I/O. A note keeps its exact text; sections are line ranges over it, so
rendering an unchanged note gives back the same bytes, and edits (a new state, a new history
entry) splice lines without touching anything else.

Layout of a note (see docs/note-format.md)::

    ---                      front matter (YAML)
    title: …
    ---
    # Title                  the header: front matter, H1 and anything before the first H2
    ## Current state         the first H2: the state (H3s inside are sub-sections)
    ## History               H3 entries "YYYY-MM-DD[ HH:MM] · Title", oldest first
    ## Anything else         plain sections
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Literal

from memory.config import DEFAULT_HISTORY_HEADINGS, DEFAULT_STATE_HEADINGS
from memory.model.front_matter import Problem, front_matter
from memory.model.text import KEPT_HEADING, fold, slugify, split_lines, without_kept_headings

if TYPE_CHECKING:  # imported when a note is first parsed, not by the index's readers
    from markdown_it import MarkdownIt

SectionKind = Literal["header", "state", "sub", "history", "entry", "section"]

ENTRY_HEADING = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})(?:[ T](?P<time>\d{2}:\d{2}))?"
    r"\s*(?:[·•\-—–:|]\s*)?(?P<title>.*)$"
)
# A note is split into sections and blocks over at most MAX_LINES lines of its body, and into
# at most MAX_SECTIONS H2/H3 headings and MAX_BLOCKS blocks; from the first line past any of
# them, the rest of the note is plain text of the section it falls in, read but not indexed
# (docs/note-format.md, limits). Parsing costs ~50 us a line, indexing ~0.5 ms a block.
MAX_LINES = 20_000
MAX_SECTIONS = 2_000
MAX_BLOCKS = 5_000


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    """Block structure only: headings (their text is the inline token's ``content``) and
    blocks. Inline parsing (emphasis, links, code spans) is never read, so it is off: a
    quarter of the parse time of a note."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").disable("inline")

_LIST_OPENERS = ("bullet_list_open", "ordered_list_open", "heading_open")


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


@dataclass(frozen=True)
class Note:
    """A parsed note. ``text`` is the exact source; ``render()`` returns it unchanged."""

    text: str
    meta: dict[str, Any]
    title: str
    sections: tuple[Section, ...]
    problems: tuple[Problem, ...] = ()
    body_start: int = 0  # 0-based line where the body (after front matter) starts
    front_matter: bool = False
    bounded_at: int | None = None  # 0-based line from which the note is plain text (bounds)
    # the section names it was parsed with (state, history): an edit parses its result alike
    names: tuple[tuple[str, ...], tuple[str, ...]] = (DEFAULT_STATE_HEADINGS,
                                                      DEFAULT_HISTORY_HEADINGS)
    fallback: str = ""  # the title it was parsed with for a note that names none

    def render(self) -> str:
        return self.text

    def reparsed(self, text: str) -> Note:
        """``text`` parsed as this note was (its fallback title and section names): as the
        store would parse it, so that a write's parse is the one the index gets."""
        return parse_note(text, self.fallback, state_headings=self.names[0],
                          history_headings=self.names[1])

    @property
    def tags(self) -> list[str]:
        return _string_list(self.meta.get("tags"))

    @property
    def aliases(self) -> list[str]:
        return _string_list(self.meta.get("aliases"))

    def section(self, section_id: str) -> Section | None:
        return self._by_id.get(section_id)

    @cached_property
    def _by_id(self) -> dict[str, Section]:
        return {s.id: s for s in self.sections}

    @property
    def state(self) -> Section | None:
        return next((s for s in self.sections if s.kind == "state"), None)

    @property
    def lead(self) -> Section | None:
        """What is read as the state: the state, or in a note without one (plain Markdown)
        its header, the top part, standing in. Writes use :attr:`state`."""
        if self.state is not None:
            return self.state
        return next((s for s in self.sections if s.kind == "header"), None)

    @property
    def history(self) -> Section | None:
        return next((s for s in self.sections if s.kind == "history"), None)

    @property
    def entries(self) -> list[Section]:
        return [s for s in self.sections if s.kind == "entry"]

    def top_level(self) -> list[Section]:
        """Sections that partition the file: header, state, history, other sections."""
        return [s for s in self.sections if s.parent is None]


@dataclass
class _Heading:
    level: int
    line: int  # 0-based, within the whole text
    title: str
    lines: int = 1  # 2 for a setext heading (its title line and its underline)


@dataclass
class _Draft:
    problems: list[Problem] = field(default_factory=list)


def parse_note(
    text: str,
    fallback_title: str = "",
    state_headings: tuple[str, ...] = DEFAULT_STATE_HEADINGS,
    history_headings: tuple[str, ...] = DEFAULT_HISTORY_HEADINGS,
) -> Note:
    """Parse a note. Never raises on malformed input: problems are collected instead."""
    draft = _Draft()
    lines = split_lines(text)
    meta, body_start, has_fm = front_matter(lines, draft.problems)
    parsed_end = min(len(lines), body_start + MAX_LINES)
    nested: list[_Heading] = []
    headings, blocks, unclosed = _scan_body(lines, body_start, parsed_end, nested)
    cut = _structure_cut(headings, blocks, parsed_end < len(lines), parsed_end, draft)
    if cut < len(lines):
        headings = [h for h in headings if h.line < cut]
        nested = [h for h in nested if h.line < cut]
        blocks = [b for b in blocks if b.start < cut]
        unclosed = None  # past the cut the text is not split: nothing to hide
    title = _note_title(meta, headings, fallback_title)
    sections = _build_sections(lines, headings, blocks, body_start, state_headings,
                               history_headings, draft, cut)
    draft.problems.extend(_history_in_state(sections, nested, history_headings))
    if unclosed is not None:
        draft.problems.append(_unclosed_problem(unclosed, sections))
    return Note(text=text, meta=meta, title=title, sections=tuple(sections),
                problems=tuple(draft.problems), body_start=body_start, front_matter=has_fm,
                bounded_at=cut if cut < len(lines) else None,
                names=(state_headings, history_headings), fallback=fallback_title)


def _scan_body(lines: list[str], body_start: int, stop: int, nested: list[_Heading]
               ) -> tuple[list[_Heading], list[Block], tuple[int, str] | None]:
    """Headings (H1–H3) and top-level blocks of the body up to line ``stop`` (exclusive),
    with whole-text line numbers, and the block that runs to the end of the file unclosed,
    if one does (line, what). Headings inside a list item or a quote go to ``nested``."""
    body = "".join(lines[body_start:stop])
    tokens = _markdown().parse(body)
    headings: list[_Heading] = []
    blocks: list[Block] = []
    unclosed: tuple[int, str] | None = None
    for i, tok in enumerate(tokens):
        if tok.map is None:
            continue
        start, end = tok.map[0] + body_start, tok.map[1] + body_start
        if end == len(lines) and tok.level == 0 and _never_closed(tok, lines[start:end]):
            unclosed = (start, "a code fence" if tok.type == "fence" else "an HTML block "
                        f"({lines[start].strip()[:20]})")
        if tok.type == "heading_open" and tok.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            if tok.level == 0 and tok.tag in ("h1", "h2", "h3"):
                headings.append(_Heading(int(tok.tag[1]), start, title, end - start))
            elif tok.level > 0:
                nested.append(_Heading(int(tok.tag[1]), start, title, end - start))
        elif _is_block(tok.type, tok.level, tok.nesting) and not _kept_heading(tok, lines[start]):
            while end > start + 1 and not lines[end - 1].strip():
                end -= 1
            blocks.append(Block(start, end, "".join(lines[start:end])))
    return headings, blocks, unclosed


_HTML_CLOSERS = ((re.compile(r"^<(script|pre|style|textarea)(?=[\s>]|$)", re.I), None),
                 (re.compile(r"^<!--"), "-->"), (re.compile(r"^<\?"), "?>"),
                 (re.compile(r"^<!\[CDATA\["), "]]>"), (re.compile(r"^<![A-Za-z]"), ">"))


def _never_closed(tok: Any, lines: list[str]) -> bool:
    """A fence or an HTML block (the kinds CommonMark ends only at a closing marker) whose
    closing marker never comes: it runs to the end of the file, hiding what follows."""
    if tok.type == "fence":
        last = lines[-1].strip() if len(lines) >= 2 else ""
        return not (last.startswith(tok.markup) and not last.strip(tok.markup[0]))
    if tok.type != "html_block" or not lines:
        return False
    first = lines[0].lstrip()
    for opener, closer in _HTML_CLOSERS:
        found = opener.match(first)
        if found:
            end = closer or f"</{found.group(1).lower()}>"
            return end not in lines[-1].lower() if closer is None else end not in "".join(
                lines)[found.end():]
    return False


def _unclosed_problem(unclosed: tuple[int, str], sections: list[Section]) -> Problem:
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


def _structure_cut(headings: list[_Heading], blocks: list[Block], cut_lines: bool,
                   parsed_end: int, draft: _Draft) -> int:
    """The 0-based line from which the note is no longer split into sections and blocks
    (MAX_LINES, MAX_SECTIONS, MAX_BLOCKS), reported once; past the end when within them."""
    headed = [h.line for h in headings if h.level in (2, 3)]
    cuts = []
    if cut_lines:
        cuts.append((parsed_end, "too-many-lines", f"more than {MAX_LINES:,} lines"))
    if len(headed) > MAX_SECTIONS:
        cuts.append((headed[MAX_SECTIONS], "too-many-sections",
                     f"more than {MAX_SECTIONS:,} sections (H2 and H3 headings)"))
    if len(blocks) > MAX_BLOCKS:
        cuts.append((blocks[MAX_BLOCKS].start, "too-many-blocks",
                     f"more than {MAX_BLOCKS:,} paragraphs, list items and other blocks"))
    if not cuts:
        return 1 << 62
    line, code, what = min(cuts)
    draft.problems.append(Problem(line + 1, code, f"{what}: from this line on the note is "
                                  "read as plain text of the section it is in, and not "
                                  "indexed; "
                                  "split it into smaller notes"))
    return line


def _kept_heading(tok: Any, first: str) -> bool:
    """The comment that keeps an imported heading as it was: not a block (never indexed,
    recalled or numbered; :func:`memory.model.text.without_kept_headings`)."""
    return tok.type == "html_block" and first.rstrip("\r\n") == KEPT_HEADING


def _is_block(kind: str, level: int, nesting: int) -> bool:
    """Top-level blocks; a list counts by its items, so each state line is its own block."""
    if kind == "list_item_open":
        return level == 1
    return level == 0 and nesting >= 0 and kind not in _LIST_OPENERS


def _note_title(meta: dict[str, Any], headings: list[_Heading], fallback: str) -> str:
    title = meta.get("title")
    if isinstance(title, str | int | float) and str(title).strip():
        return str(title).strip()
    h1 = next((h for h in headings if h.level == 1), None)
    return h1.title if h1 and h1.title else fallback


def _build_sections(
    lines: list[str],
    headings: list[_Heading],
    blocks: list[Block],
    body_start: int,
    state_names: tuple[str, ...],
    history_names: tuple[str, ...],
    draft: _Draft,
    cut: int,
) -> list[Section]:
    builder = _SectionBuilder(lines, blocks, draft)
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
                draft.problems.append(Problem(top.line + 1, "state-not-first",
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
        draft.problems.append(Problem(body_start + 1, "missing-state",
                                      "no state section (plain Markdown): its top part "
                                      "stands in for the state", "warning"))
    return builder.sections


class _SectionBuilder:
    """Collects sections, giving each a unique stable id and its blocks."""

    def __init__(self, lines: list[str], blocks: list[Block], draft: _Draft) -> None:
        self.lines, self.blocks, self.draft = lines, blocks, draft
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

    def add_children(self, headings: list[_Heading], start: int, end: int, parent: str,
                     kind: SectionKind) -> None:
        h3s = [h for h in headings if h.level == 3 and start < h.line < end]
        for index, h3 in enumerate(h3s):
            stop = h3s[index + 1].line if index + 1 < len(h3s) else end
            if kind == "entry":
                base, date, title = self._entry_id(h3)
            else:
                base, date, title = f"{parent}/{slugify(h3.title) or 'part'}", None, h3.title
            self.add(base, kind, title, h3.line, stop, 3, date, parent, h3.lines)

    def _entry_id(self, heading: _Heading) -> tuple[str, str | None, str]:
        match = ENTRY_HEADING.match(heading.title)
        if not match:
            self.draft.problems.append(Problem(heading.line + 1, "entry-without-date",
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


def _history_in_state(sections: list[Section], nested: list[_Heading],
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


def _string_list(value: object) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    return []
