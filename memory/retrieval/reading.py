"""Rung 3, reading: the part of a note that a user or an agent names, with its cost. A
section by id, unique prefix or map position ``#N``; a block range of one (``id:b3-5``);
or the history entries of a date or range (``2026-11``, ``2026-11-01..2026-11-15``).
A name that matches nothing is an error that lists the note's sections and their tokens.

Imported by the rungs that read (not by a process that only suggests, the prompt hook).
"""

from __future__ import annotations

import re

from memory.errors import AmbiguousSection, InvalidArgument, SectionNotFound
from memory.model.note import Section
from memory.model.text import excerpt, split_lines
from memory.model.timeexpr import dated_inside, parse_date_ref
from memory.retrieval.ladder import SectionText
from memory.retrieval.zoom import BlockRange, block_text, own_blocks, parse_block_ref
from memory.state.store import LoadedNote
from memory.state.tokens import TokenCounter


def read_section(loaded: LoadedNote, section: str, counter: TokenCounter) -> SectionText:
    """What ``section`` names in ``loaded`` (see the module's doc)."""
    key = (section or "").strip()
    blocks = parse_block_ref(key)
    if blocks is not None and loaded.note.section(key) is None:
        return _read_blocks(loaded, blocks, counter)
    entries = _dated_entries(loaded, key)
    if entries is not None and len(entries) != 1:
        return _read_entries(loaded, key, entries, counter)
    found = entries[0] if entries else resolve_section(loaded, key, counter)
    return SectionText(loaded.note_id, found.id, found.kind, found.title, found.date,
                       counter.count(found.text), found.text)


def resolve_section(loaded: LoadedNote, wanted: str, counter: TokenCounter) -> Section:
    """Find a section by exact id, ``#N`` map position, or unique prefix of id or date."""
    sections = list(loaded.note.sections)
    key = (wanted or "").strip()
    if not key:
        raise InvalidArgument("the section is empty; " + _section_list(loaded, counter))
    exact = next((s for s in sections if s.id == key), None)
    if exact is None and key == "state":
        exact = loaded.note.lead  # plain Markdown: its top part stands in for the state
    if exact is not None:
        return exact
    position = re.fullmatch(r"#?(\d+)", key)
    if position and key.startswith("#"):
        number = int(position[1]) if len(position[1]) <= 9 else 0
        if 1 <= number <= len(sections):
            return sections[number - 1]
        raise SectionNotFound(f"no section {excerpt(key, 20)} in {loaded.note_id!r} (it has "
                              f"{len(sections)}); " + _section_list(loaded, counter))
    matches = [s for s in sections if s.id.startswith(key.casefold())]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AmbiguousSection(f"section {excerpt(key)} matches {len(matches)} sections in "
                               f"{loaded.note_id!r}: {', '.join(s.id for s in matches[:10])}; "
                               "give more of the id")
    raise SectionNotFound(f"no section {excerpt(key)} in {loaded.note_id!r}; "
                          + _section_list(loaded, counter))


def _read_blocks(loaded: LoadedNote, wanted: BlockRange, counter: TokenCounter
                 ) -> SectionText:
    found = resolve_section(loaded, wanted.section, counter)
    blocks = own_blocks(found, loaded.note.sections)
    text = block_text(found, split_lines(loaded.note.text), wanted, blocks)
    ref = BlockRange(found.id, wanted.first, wanted.last).ref
    return SectionText(loaded.note_id, ref, "blocks", found.title, found.date,
                       counter.count(text), text)


def _dated_entries(loaded: LoadedNote, key: str) -> list[Section] | None:
    """History entries inside a date reference; None when ``key`` is not one (or names a
    section exactly)."""
    wanted = parse_date_ref(key)
    if wanted is None or loaded.note.section(key) is not None:
        return None
    return [e for e in loaded.note.entries if dated_inside(e.date, (wanted,))]


def _read_entries(loaded: LoadedNote, key: str, entries: list[Section],
                  counter: TokenCounter) -> SectionText:
    if not entries:
        dated = sorted(e.date for e in loaded.note.entries if e.date)
        span = f"its entries run from {dated[0]} to {dated[-1]}" if dated else \
            "it has no dated entries"
        raise SectionNotFound(f"no history entry of {loaded.note_id!r} falls in {key}; "
                              f"{span}")
    text = "".join(e.text if e.text.endswith("\n") else e.text + "\n" for e in entries)
    return SectionText(loaded.note_id, key, "entries", f"{len(entries)} entries",
                       key, counter.count(text), text)


def _section_list(loaded: LoadedNote, counter: TokenCounter, limit: int = 20) -> str:
    sections = loaded.note.sections
    shown = ", ".join(f"{s.id} ({counter.count(s.text)} tokens)" for s in sections[:limit])
    more = f", … {len(sections) - limit} more (run `notes map {loaded.note_id}`)" \
        if len(sections) > limit else ""
    return f"sections are: {shown}{more}"
