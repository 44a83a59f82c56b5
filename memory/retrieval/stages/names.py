"""The ``names`` lever: ``recall`` halves the own score of a block that matched only words
of its note's title (a conversation's speakers, the topic a note is named for): they chose
the note, and inside it they do not tell one block from another."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.retrieval.stages.base import Stage

if TYPE_CHECKING:
    from memory.index import SearchHit, StoredPart
    from memory.retrieval.blocks import Seen
    from memory.retrieval.reader import Reader

NAMES_SHARE = 0.5  # the share of its own score a block matching only title words keeps


class Names(Stage):
    name = "names"
    summary = "recall: a block that matched only its note's title words counts half"
    default = False  # not earned in the lever audit of 2026-12-05 (docs/benchmarks.md)

    def weigh(self, reader: Reader, hit: SearchHit[StoredPart], seen: Seen,
              own: float) -> float:
        return own * NAMES_SHARE if names_only(reader, hit, seen) else own


STAGE = Names()


def names_only(reader: Reader, hit: SearchHit[StoredPart], seen: Seen) -> bool:
    """Whether the block matched only words of its note's title: the speakers' names in a
    conversation, the topic a note is named for. Those words chose the note; inside it they
    tell one block from another no better than chance."""
    from memory.retrieval.blocks import loaded

    read = loaded(reader, hit.doc.note_id, seen)
    return read is not None and bool(hit.matched) and set(hit.matched) <= read.title_words
