"""What every index holds: the documents made from one note, and their text fields.

Three document kinds: ``note`` (title, tags and aliases, state, whole body), ``section`` (a
section's title and text) and ``paragraph`` (one top-level block with its section's heading).
Every document carries the note id, so one note's documents are replaced together when its
content hash changes. A backend stores them its own way (Whoosh: one schema for the three
kinds, :mod:`memory.index.whoosh.schema`; tantivy: an index per kind) and gives back what it
stored as :mod:`memory.index.stored` types.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from memory.index.words import base_forms
from memory.model.text import without_kept_headings
from memory.project import note_project
from memory.state.store import LoadedNote
from memory.state.tokens import TokenCounter

if TYPE_CHECKING:
    from memory.model.note import Note, Section

SCHEMA_VERSION = 9  # 9: the comments keeping imported headings are neither text nor blocks;
# 8: a note's project (front matter ``project:``) is stored;
# 7: an H1 below the first H2 starts a section (an H1 History is the
# history), a setext heading is two lines; 6: a note without a state indexes its top part

# Each kind has its own text fields, so BM25's statistics (average field length, document
# frequency) are those of its own kind: a note's body is compared with other notes' bodies,
# not with one-line paragraphs. (field prefix, exact fields with their boosts, stem field)
KIND_FIELDS: dict[str, dict[str, float]] = {
    "note": {"title": 2.0, "keywords": 1.5, "state": 1.2, "body": 1.0},
    "section": {"s_title": 2.0, "s_body": 1.0},
    "paragraph": {"p_title": 0.5, "p_body": 1.0},
}
STEM_FIELD = {"note": "stem", "section": "s_stem", "paragraph": "p_stem"}
STEM_BOOST = 0.5
FIELD_KIND = {f: k for k, fs in KIND_FIELDS.items() for f in fs} | {
    f: k for k, f in STEM_FIELD.items()}


def note_documents(
    loaded: LoadedNote, mtime_ns: int, size: int, counter: TokenCounter
) -> Iterator[dict[str, Any]]:
    """Every index document of one note: the note itself, its sections, its blocks."""
    tokens = section_tokens(loaded.note, counter)
    yield _note_document(loaded, mtime_ns, size, counter, tokens)
    if not loaded.indexable:
        return
    first_child: dict[str, int] = {}
    for section in loaded.note.sections:
        if section.parent is not None:
            first_child.setdefault(section.parent, section.start)
    for section in loaded.note.sections:
        yield _section_document(loaded.note_id, section, tokens[section.id],
                                _indexed_text(section, loaded.note.bounded_at))
        yield from _block_documents(loaded.note_id, section,
                                    first_child.get(section.id, section.end))


def section_tokens(note: Note, counter: TokenCounter) -> dict[str, int]:
    """Each section's tokens, and the whole note's under ``""``. A section that is its own
    lines then its child sections, and the note (its top-level sections), are counted from
    their parts (:meth:`TokenCounter.count_parts`, exact): each line is encoded once. A
    section costs what reading it shows (without the comments keeping imported headings);
    the note, its whole text."""
    children: dict[str | None, list[Section]] = {}
    for section in note.sections:
        children.setdefault(section.parent, []).append(section)
    tokens: dict[str, int] = {}
    for section in sorted(note.sections, key=lambda s: -s.level):  # children first
        parts = [section.text]
        below = "".join(c.text for c in children.get(section.id, ()))
        if below and section.text.endswith(below):
            parts = [section.text[:len(section.text) - len(below)],
                     *(c.text for c in children[section.id])]
        tokens[section.id] = counter.count_parts([without_kept_headings(p) for p in parts])
    top = [s.text for s in children.get(None, ())]
    tokens[""] = counter.count_parts(top if "".join(top) == note.text else [note.text])
    return tokens


def _note_document(loaded: LoadedNote, mtime_ns: int, size: int,
                   counter: TokenCounter, tokens: dict[str, int]) -> dict[str, Any]:
    note = loaded.note
    state = note.lead  # plain Markdown: its top part stands in for the state
    keywords = " ".join([*note.tags, *note.aliases, loaded.note_id.replace("/", " ")])
    end = len(note.text) if note.bounded_at is None else _offset(note.text, note.bounded_at)
    body = without_kept_headings(note.text[_offset(note.text, note.body_start):end]) \
        if loaded.indexable else ""
    return {
        "id": loaded.note_id, "note_id": loaded.note_id, "kind": "note", "section": "",
        "title": note.title, "keywords": keywords, "state": state.text if state else "",
        "body": body, "stem": base_forms(f"{note.title}\n{keywords}\n{body}"),
        "tokens": tokens[""], "state_tokens": tokens[state.id] if state else 0,
        "digest": loaded.digest, "mtime_ns": mtime_ns, "size": size,
        "entries": len(note.entries), "date": max((e.date or "" for e in note.entries),
                                                 default="") or None,
        "project": note_project(note.meta),
    }


def _indexed_text(section: Section, bounded_at: int | None) -> str:
    """The section's text up to the line where the note stops being split into sections
    (note.MAX_SECTIONS, MAX_BLOCKS): the rest of a hostile note is read, never indexed, so
    its cost stays bounded (Whoosh pays for every distinct word of every field)."""
    if bounded_at is None or section.end <= bounded_at:
        return without_kept_headings(section.text)
    return without_kept_headings(
        section.text[:_offset(section.text, max(0, bounded_at - section.start))])


def _section_document(note_id: str, section: Section, tokens: int,
                      text: str) -> dict[str, Any]:
    return {
        "id": f"{note_id}#{section.id}", "note_id": note_id, "kind": "section",
        "section": section.id, "label": section.title, "s_title": section.title,
        "s_body": text, "s_stem": base_forms(text), "date": section.date,
        "tokens": tokens,
        "lines": (section.start, section.end),
    }


def _block_documents(note_id: str, section: Section,
                     first_child: int) -> Iterator[dict[str, Any]]:
    for number, block in enumerate(section.blocks, start=1):
        if block.start >= first_child:
            continue  # children run to the container's end and index their own blocks
        yield {
            "id": f"{note_id}#{section.id}@{number}", "note_id": note_id, "kind": "paragraph",
            "section": section.id, "label": section.title, "p_title": section.title,
            "p_body": block.text, "p_stem": base_forms(block.text), "date": section.date,
            "lines": (block.start, block.end),
        }


def _offset(text: str, line: int) -> int:
    """Character offset of a 0-based line."""
    offset = 0
    for _ in range(line):
        found = text.find("\n", offset)
        if found < 0:
            return len(text)
        offset = found + 1
    return offset
