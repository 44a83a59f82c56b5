"""Blocks as ``recall`` ranks them: each note read once per gathering (:class:`Read`), and
a search hit made a :class:`memory.retrieval.filling.Unit` with its text, tokens and the
short name of its section. Shared by ``recall``'s own ranking and the levers that add or
score blocks (:mod:`memory.retrieval.stages`)."""

from __future__ import annotations

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


class Read(NamedTuple):
    """A note as one gathering reads it: parsed, its lines, its title's words."""

    loaded: LoadedNote
    lines: list[str]
    title_words: frozenset[str]
    sections: dict[str, tuple[str, int]]  # id -> (short name, blocks), as asked for
    names: list[Names]  # the note's ids for short_ref, made when first asked for

    def section(self, section: str) -> tuple[str, int]:
        """The section's short name (:func:`short_ref`) and how many blocks it has."""
        if section not in self.sections:
            note = self.loaded.note
            found = note.section(section)
            if not self.names:
                self.names.append(Names(note))
            self.sections[section] = (short_ref(note, found, self.names[0]),
                                      len(own_blocks(found, note.sections))) if found \
                else (section, 0)
        return self.sections[section]


Seen = dict[str, Read | None]  # note id -> the note read once per gathering (None: unreadable)


def loaded(reader: Reader, note: str, seen: Seen) -> Read | None:
    """The note and its lines, read once per gathering (None: gone or unreadable since it
    was indexed)."""
    if note not in seen:
        try:
            found = reader.load(note)
            seen[note] = Read(found, split_lines(found.note.text),
                              frozenset(w for w, _ in query_words(found.note.title)), {}, [])
        except NotesError:
            seen[note] = None
    return seen[note]


def unit(reader: Reader, hit: SearchHit[StoredPart], score: float, read: Read) -> Unit:
    start, end = hit.doc.lines
    text = without_kept_headings("".join(read.lines[start:end]))
    return Unit(hit.doc.note_id, hit.doc.section, hit.doc.block, hit.doc.date, start, text,
                reader.count(text, remember=False), score, *read.section(hit.doc.section))


def section_blocks(read: Read | None, section: str) -> tuple[Block, ...]:
    if read is None:
        return ()
    found = read.loaded.note.section(section)
    return own_blocks(found, read.loaded.note.sections) if found else ()
