"""The ``block-route`` lever: ``suggest`` re-orders its notes by the note's own BM25F score
plus half its best block's (each over the best of its kind; the blocks are the paragraphs
and the headers of store-wide searches): the session whose one turn holds the message's
words together gains on one that holds them scattered. For the message alone (not its
context), and not in ``recall``'s routing nor the hook's (``by_blocks``)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from memory.retrieval.stages.base import Stage

if TYPE_CHECKING:
    from memory.index import Found, ParsedQuery, StoredNote
    from memory.retrieval.reader import Reader
    from memory.retrieval.stages.base import Ask

BLOCK_SHARE = 0.5  # the best paragraph's weight beside the note's own score
BLOCK_POOL = 200  # the store's best paragraphs the notes' best are taken from
HEADER = "header"  # the section of a note's front matter (title, tags, aliases)


class BlockRoute(Stage):
    name = "block-route"
    summary = "suggest: notes re-ordered by their own score plus half their best block's"

    def route(self, reader: Reader, ask: Ask, part: ParsedQuery,
              pool: int) -> Found[StoredNote] | None:
        if not ask.by_blocks or part.words != ask.parsed.words:
            return None
        return block_routed_notes(reader, part, pool)


STAGE = BlockRoute()


def block_routed_notes(reader: Reader, parsed: ParsedQuery, pool: int) -> Found[StoredNote]:
    """Notes re-ordered by their BM25F score over the best note's plus ``BLOCK_SHARE`` times
    their best block's score over the best block's: a note whose one paragraph holds the
    message's words together gains on a note that holds them scattered. The blocks are the
    store's ``BLOCK_POOL`` best paragraphs and the headers among its ``BLOCK_POOL`` best
    sections (a note's title, tags and aliases are one block of it: a note reached by its
    names keeps its place whatever language its paragraphs are in, howto/rotate-secrets,
    written in Spanish, for "rotate the database secrets"); a note with no block there adds
    nothing. The n-th note takes the n-th BM25F score, so the scores keep BM25F's spread
    (recall weighs notes by them) and the best note keeps the usual scale."""
    notes, total = reader.search_notes(parsed, pool)
    if not notes:
        return notes, total
    paragraphs, _ = reader.search(parsed, "paragraph", BLOCK_POOL)
    sections, _ = reader.search(parsed, "section", BLOCK_POOL)
    best: dict[str, float] = {}
    for hit in [*paragraphs, *(h for h in sections if h.doc.section == HEADER)]:
        best[hit.doc.note_id] = max(best.get(hit.doc.note_id, 0.0), hit.score)
    top_note = notes[0].score or 1.0
    top_block = max(best.values(), default=0.0) or 1.0
    mixed = {h.doc.note_id: h.score / top_note
             + BLOCK_SHARE * best.get(h.doc.note_id, 0.0) / top_block for h in notes}
    order = sorted(range(len(notes)), key=lambda n: (-mixed[notes[n].doc.note_id], n))
    return [dataclasses.replace(notes[n], score=notes[rank].score)
            for rank, n in enumerate(order)], total
