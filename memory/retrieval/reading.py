"""Rung 3, reading: the part of a note that a user or an agent names, with its cost. A
section by id, unique prefix or map position ``#N``; a block range of one (``id:b3-5``);
or the history entries of a date or range (``2026-11``, ``2026-11-01..2026-11-15``).
A day written ``20261103`` (as ``recall``'s labels write it) is ``2026-11-03``.
A name that matches nothing is an error that lists the note's sections and their tokens.
:func:`short_ref` gives the shortest of these names for a section (``recall``'s labels).

Imported by the rungs that read (not by a process that only suggests, the prompt hook).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter

from memory.errors import AmbiguousSection, InvalidArgument, SectionNotFound
from memory.model.note import Note, Section
from memory.model.text import excerpt, split_lines, without_kept_headings
from memory.model.timeexpr import compact_day, dated_inside, expand_day, parse_date_ref
from memory.retrieval.results import SectionText
from memory.retrieval.zoom import BlockRange, block_text, own_blocks, parse_block_ref
from memory.state.store import LoadedNote
from memory.state.tokens import TokenCounter

_POSITION = re.compile(r"#(\d+)")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def read_section(loaded: LoadedNote, section: str, counter: TokenCounter) -> SectionText:
    """What ``section`` names in ``loaded`` (see the module's doc); a reference copied
    whole from a ``recall`` label (``note#ref``) names its ``ref``."""
    key = _typed_or_day(loaded.note,
                        (section or "").strip().removeprefix(f"{loaded.note_id}#"))
    blocks = parse_block_ref(key)
    if blocks is not None and loaded.note.section(key) is None:
        return _read_blocks(loaded, blocks, counter)
    entries = _dated_entries(loaded, key)
    if entries is not None and len(entries) != 1:
        return _read_entries(loaded, key, entries, counter)
    found = entries[0] if entries else resolve_section(loaded, key, counter)
    text = found.shown
    return SectionText(loaded.note_id, found.id, found.kind, found.title, found.date,
                       counter.count(text), text)


def resolve_section(loaded: LoadedNote, wanted: str, counter: TokenCounter) -> Section:
    """Find a section by exact id, ``#N`` map position, or unique prefix of id or date."""
    sections = loaded.note.sections
    key = (wanted or "").strip()
    if not key:
        raise InvalidArgument("the section is empty; " + _section_list(loaded, counter))
    matches = named(loaded.note, key)
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise AmbiguousSection(f"section {excerpt(key)} matches {len(matches)} sections in "
                               f"{loaded.note_id!r}: {', '.join(s.id for s in matches[:10])}; "
                               "give more of the id")
    if _POSITION.fullmatch(key):
        raise SectionNotFound(f"no section {excerpt(key, 20)} in {loaded.note_id!r} (it has "
                              f"{len(sections)}); " + _section_list(loaded, counter))
    raise SectionNotFound(f"no section {excerpt(key)} in {loaded.note_id!r}; "
                          + _section_list(loaded, counter))


def named(note: Note, key: str) -> list[Section]:
    """The sections ``key`` names: the one of that exact id (``state``: the lead, in plain
    Markdown), the one at map position ``#N``, else every section whose id starts with it
    (one: a unique prefix). ``#id`` is ``id``, as ``recall`` shows a note's later sections."""
    exact = note.section(key)
    if exact is None and key == "state":
        exact = note.lead  # plain Markdown: its top part stands in for the state
    if exact is not None:
        return [exact]
    position = _POSITION.fullmatch(key)
    if position:
        number = int(position[1]) if len(position[1]) <= 9 else 0
        return [note.sections[number - 1]] if 1 <= number <= len(note.sections) else []
    if key.startswith("#") and len(key) > 1:
        return named(note, key[1:])
    return [s for s in note.sections if s.id.startswith(key.casefold())]


class Names:
    """A note's section ids in order, so that :func:`short_ref` tells in log time whether a
    prefix names one section (a note of thousands of entries stays cheap to label)."""

    def __init__(self, note: Note) -> None:
        self.note = note
        self.ids = sorted(s.id for s in note.sections)
        self.days = Counter(e.date[:10] for e in note.entries if e.date)

    def starts(self, prefix: str) -> bool:
        """Whether a section's id starts with ``prefix``."""
        first = bisect.bisect_left(self.ids, prefix)
        return first < len(self.ids) and self.ids[first].startswith(prefix)

    def names_only(self, key: str, section: Section) -> bool:
        """Whether ``key`` names ``section`` and nothing else (as :func:`named` finds it),
        read whole (where a date names the history entries of that date) or as ``key:bN``."""
        exact = self.note.section(key) or (self.note.lead if key == "state" else None)
        if exact is not None:
            return exact is section
        first = bisect.bisect_left(self.ids, key)
        if first >= len(self.ids) or self.ids[first] != section.id or (
                first + 1 < len(self.ids) and self.ids[first + 1].startswith(key)):
            return False
        wanted = parse_date_ref(key)
        if wanted is None:
            return True
        if _DAY.fullmatch(key):
            return self.days[key] == 1 and section.kind == "entry" and \
                (section.date or "").startswith(key)
        return [e for e in self.note.entries if dated_inside(e.date, (wanted,))] == [section]


def short_ref(note: Note, section: Section, names: Names | None = None) -> str:
    """The shortest name of ``section`` that :func:`read_section` reads back as it, alone
    and as the base of a block range (``ref:b3``): a prefix of its id cut where a word ends,
    for a history entry never shorter than its day (``2026-06-22`` names the only entry of
    that day and says when it happened), the day written ``20260622`` (3 tokens, not 6;
    read back as ``2026-06-22``) unless a section's id starts with those digits. ``recall``
    labels its blocks with it; ``names``
    (made once per note) saves the work when a note labels many sections."""
    names = names or Names(note)
    day = section.date[:10] if section.date else ""
    floor = len(day) if day and section.id.startswith(day) else 1
    cuts = [i for i, c in enumerate(section.id) if c in "-/" and i >= floor]
    name = next((section.id[:end] for end in [*cuts, len(section.id)]
                 if names.names_only(section.id[:end], section)), section.id)
    compact = compact_day(name)
    return compact if compact == name or not names.starts(compact[:8]) else name


def _typed_or_day(note: Note, key: str) -> str:
    """``key`` with a leading day in the labels' form (``20260622:b3``) written as the note
    writes days (``2026-06-22:b3``), unless a section's own id starts with those digits."""
    day = expand_day(key)
    digits = key.removeprefix("#")[:8]
    if day == key or any(s.id.startswith(digits) for s in note.sections):
        return key
    return day


def _read_blocks(loaded: LoadedNote, wanted: BlockRange, counter: TokenCounter
                 ) -> SectionText:
    found = resolve_section(loaded, wanted.section, counter)
    blocks = own_blocks(found, loaded.note.sections)
    text = without_kept_headings(block_text(found, split_lines(loaded.note.text), wanted,
                                            blocks))
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
    text = "".join(e.shown if e.shown.endswith("\n") else e.shown + "\n" for e in entries)
    return SectionText(loaded.note_id, key, "entries", f"{len(entries)} entries",
                       key, counter.count(text), text)


def _section_list(loaded: LoadedNote, counter: TokenCounter, limit: int = 20) -> str:
    sections = loaded.note.sections
    shown = ", ".join(f"{s.id} ({counter.count(s.shown)} tokens)" for s in sections[:limit])
    more = f", … {len(sections) - limit} more (run `notes map {loaded.note_id}`)" \
        if len(sections) > limit else ""
    return f"sections are: {shown}{more}"
