"""Blocks as ``recall`` ranks them: each note read once per gathering (:class:`Read`), and
a search hit made a :class:`memory.retrieval.filling.Unit` with its text, tokens and the
short name of its section. Shared by ``recall``'s own ranking and the levers that add or
score blocks (:mod:`memory.retrieval.stages`).

What a :class:`Read` works out (the note's lines, its sections' short names and blocks, its
blocks' texts and tokens) depends on the parsed note alone, so the reader keeps the last
notes' reads (:class:`Reads`) for the next gatherings: the store gives back the same parsed
note for the same bytes, and a note whose file changed is parsed anew, which is read anew.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple

from memory.errors import NotesError
from memory.index import SearchHit, StoredPart
from memory.index.words import query_words
from memory.model.text import split_lines, without_kept_headings
from memory.retrieval.filling import Unit
from memory.retrieval.reading import Names, short_ref
from memory.retrieval.zoom import own_blocks
from memory.state.store import LoadedNote

if TYPE_CHECKING:
    from memory.model.note import Block
    from memory.retrieval.reader import Reader

POOL = 200  # blocks and sections a gathering considers
READS, READ_CHARS = 256, 16_000_000  # notes' reads a reader keeps, and their characters


class Read(NamedTuple):
    """A note as one gathering reads it: parsed, its lines, its title's words."""

    loaded: LoadedNote
    lines: list[str]
    title_words: frozenset[str]
    sections: dict[str, tuple[str, int]]  # id -> (short name, blocks), as asked for
    names: list[Names]  # the note's ids for short_ref, made when first asked for
    blocks: dict[str, tuple[Block, ...]]  # section id -> its own blocks, as asked for
    texts: dict[tuple[int, int], tuple[str, int]]  # lines -> a block's text and tokens

    def section(self, section: str) -> tuple[str, int]:
        """The section's short name (:func:`short_ref`) and how many blocks it has."""
        if section not in self.sections:
            note = self.loaded.note
            found = note.section(section)
            if not self.names:
                self.names.append(Names(note))
            self.sections[section] = (short_ref(note, found, self.names[0]),
                                      len(self.own_blocks(section))) if found \
                else (section, 0)
        return self.sections[section]

    def own_blocks(self, section: str) -> tuple[Block, ...]:
        """The section's own blocks (:func:`own_blocks`; none for a section not there)."""
        if section not in self.blocks:
            note = self.loaded.note
            found = note.section(section)
            self.blocks[section] = own_blocks(found, note.sections) if found else ()
        return self.blocks[section]

    def text(self, reader: Reader, lines: tuple[int, int]) -> tuple[str, int]:
        """The text of the note's lines ``start``..``end`` as a block shows it, and its
        tokens."""
        if lines not in self.texts:
            start, end = lines
            text = without_kept_headings("".join(self.lines[start:end]))
            self.texts[lines] = (text, reader.count(text, remember=False))
        return self.texts[lines]


class Reads:
    """The last notes' reads (at most ``READS`` notes and ``READ_CHARS`` characters of their
    text), each kept with the parsed note it was made from: a read is taken again only for
    that very note (the store parses a changed file anew)."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, Read] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def of(self, note: str, found: LoadedNote) -> Read:
        with self._lock:
            kept = self._kept.get(note)
            if kept is not None and kept.loaded is found:
                self._kept.move_to_end(note)
                return kept
        read = Read(found, split_lines(found.note.text),
                    frozenset(w for w, _ in query_words(found.note.title)), {}, [], {}, {})
        with self._lock:
            old = self._kept.pop(note, None)
            self._chars -= len(old.loaded.note.text) if old is not None else 0
            self._kept[note] = read
            self._chars += len(found.note.text)
            while len(self._kept) > READS or self._chars > READ_CHARS and len(self._kept) > 1:
                _, dropped = self._kept.popitem(last=False)
                self._chars -= len(dropped.loaded.note.text)
        return read


Seen = dict[str, Read | None]  # note id -> the note read once per gathering (None: unreadable)


def loaded(reader: Reader, note: str, seen: Seen) -> Read | None:
    """The note and its lines, read once per gathering (None: gone or unreadable since it
    was indexed)."""
    if note not in seen:
        try:
            found = reader.load(note)
        except NotesError:
            seen[note] = None
        else:
            seen[note] = reader.reads.of(note, found)
    return seen[note]


def unit(reader: Reader, hit: SearchHit[StoredPart], score: float, read: Read) -> Unit:
    text, tokens = read.text(reader, hit.doc.lines)
    return Unit(hit.doc.note_id, hit.doc.section, hit.doc.block, hit.doc.date,
                hit.doc.lines[0], text, tokens, score, *read.section(hit.doc.section))


def section_blocks(read: Read | None, section: str) -> tuple[Block, ...]:
    return read.own_blocks(section) if read is not None else ()
