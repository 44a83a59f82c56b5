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

This module scans the body (headings and top-level blocks, with markdown-it) within bounds
and makes the :class:`Note`; the sections it is cut into, and the blocks inside them, are
:mod:`memory.model.sections`' (``Section``, ``Block`` and ``ENTRY_HEADING`` are imported
from either).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from memory.config import DEFAULT_HISTORY_HEADINGS, DEFAULT_STATE_HEADINGS
from memory.model.front_matter import Problem, front_matter
from memory.model.sections import (
    ENTRY_HEADING,
    Block,
    Heading,
    Section,
    SectionKind,
    build_sections,
    history_in_state,
    unclosed_problem,
)
from memory.model.text import KEPT_HEADING, split_lines

if TYPE_CHECKING:  # imported when a note is first parsed, not by the index's readers
    from markdown_it import MarkdownIt

__all__ = ["ENTRY_HEADING", "MAX_BLOCKS", "MAX_LINES", "MAX_SECTIONS", "Block", "Note",
           "Section", "SectionKind", "parse_note"]

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
    nested: list[Heading] = []
    headings, blocks, unclosed = _scan_body(lines, body_start, parsed_end, nested)
    cut = _structure_cut(headings, blocks, parsed_end < len(lines), parsed_end, draft)
    if cut < len(lines):
        headings = [h for h in headings if h.line < cut]
        nested = [h for h in nested if h.line < cut]
        blocks = [b for b in blocks if b.start < cut]
        unclosed = None  # past the cut the text is not split: nothing to hide
    title = _note_title(meta, headings, fallback_title)
    sections = build_sections(lines, headings, blocks, body_start, state_headings,
                              history_headings, draft.problems, cut)
    draft.problems.extend(history_in_state(sections, nested, history_headings))
    if unclosed is not None:
        draft.problems.append(unclosed_problem(unclosed, sections))
    return Note(text=text, meta=meta, title=title, sections=tuple(sections),
                problems=tuple(draft.problems), body_start=body_start, front_matter=has_fm,
                bounded_at=cut if cut < len(lines) else None,
                names=(state_headings, history_headings), fallback=fallback_title)


def _scan_body(lines: list[str], body_start: int, stop: int, nested: list[Heading]
               ) -> tuple[list[Heading], list[Block], tuple[int, str] | None]:
    """Headings (H1–H3) and top-level blocks of the body up to line ``stop`` (exclusive),
    with whole-text line numbers, and the block that runs to the end of the file unclosed,
    if one does (line, what). Headings inside a list item or a quote go to ``nested``."""
    body = "".join(lines[body_start:stop])
    tokens = _markdown().parse(body)
    headings: list[Heading] = []
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
                headings.append(Heading(int(tok.tag[1]), start, title, end - start))
            elif tok.level > 0:
                nested.append(Heading(int(tok.tag[1]), start, title, end - start))
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


def _structure_cut(headings: list[Heading], blocks: list[Block], cut_lines: bool,
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


def _note_title(meta: dict[str, Any], headings: list[Heading], fallback: str) -> str:
    title = meta.get("title")
    if isinstance(title, str | int | float) and str(title).strip():
        return str(title).strip()
    h1 = next((h for h in headings if h.level == 1), None)
    return h1.title if h1 and h1.title else fallback



def _string_list(value: object) -> list[str]:
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    return []
