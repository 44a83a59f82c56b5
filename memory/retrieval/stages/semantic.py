"""The ``semantic`` lever: ``suggest`` re-ranks its 50 best notes with an embedding model's
cosine between the message and each note's best line (:mod:`memory.retrieval.semantic`; the
optional extra ``notes-memory[semantic]``, on for a store with ``NOTES_SEMANTIC=1``).
``recall`` routes with ``suggest``, so its notes follow the new order; its blocks and the
map's sections stay lexical unless ``semantic-blocks`` is on too
(:mod:`memory.retrieval.stages.semantic_blocks`): measured apart on the tuning halves, the
re-ranking held on every source and the blocks did not (docs/benchmarks.md, "The lever
audit")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.retrieval.stages.base import Stage

if TYPE_CHECKING:
    from memory.retrieval.reader import Reader
    from memory.retrieval.stages.base import Ask, NoteHits


class Semantic(Stage):
    name = "semantic"
    summary = "suggest: an embedding model's cosine re-ranks the 50 best notes"

    def pool(self, reader: Reader, ask: Ask) -> int:
        from memory.retrieval.semantic import POOL

        return POOL

    def rerank(self, reader: Reader, ask: Ask, hits: NoteHits) -> NoteHits:
        return reader.router().rerank(ask.query, hits)


STAGE = Semantic()
