"""The ``coverage`` lever: ``suggest`` re-ranks its 10 best notes by their BM25F score plus
0.75 times the share of the message's words that the note's best single line holds
(:mod:`memory.retrieval.coverage`): ``block-route``'s idea read from the candidates' own
lines, with no search (their line terms are made as the index reads a note, and kept in
``lines.sqlite``). Not in ``recall``'s routing nor the hook's (``by_blocks``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.retrieval.stages.base import Stage

if TYPE_CHECKING:
    from memory.retrieval.reader import Reader
    from memory.retrieval.stages.base import Ask, NoteHits
    from memory.state.store import LoadedNote


class Coverage(Stage):
    name = "coverage"
    summary = "suggest: the top 10 notes re-ranked by how much of the message one line holds"
    default = False  # not earned in the lever audit of 2026-12-05 (docs/benchmarks.md)

    def pool(self, reader: Reader, ask: Ask) -> int:
        if not ask.by_blocks:
            return 0
        from memory.retrieval.coverage import POOL

        return POOL

    def rerank(self, reader: Reader, ask: Ask, hits: NoteHits) -> NoteHits:
        if not ask.by_blocks:
            return hits
        return reader.line_coverage().rerank(reader, ask.parsed, hits)

    def indexed(self, reader: Reader, loaded: list[LoadedNote]) -> None:
        """Line terms made as the index reads the notes, not by the first suggest that ranks
        them."""
        reader.line_coverage().learn_all(loaded)


STAGE = Coverage()
