"""The ``semantic-blocks`` lever: the ``semantic`` lever's line vectors
(:mod:`memory.retrieval.dense`) score blocks in ``recall`` and sections in the map, so a
reply that says in other words what was asked can join the answer. It needs the optional
extra as ``semantic`` does, and it is off unless named (``NOTES_LEVERS=+semantic-blocks``):
on the tuning halves it cost the example store 3 points (one question of 34) and lifted
no other source by a point (docs/benchmarks.md, "The lever audit")."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from memory.retrieval.stages.base import Stage

if TYPE_CHECKING:
    from memory.retrieval.blocks import Read, Seen
    from memory.retrieval.dense import DenseBlock
    from memory.retrieval.filling import Unit
    from memory.retrieval.reader import Reader
    from memory.retrieval.section_scores import Evidence
    from memory.state.store import LoadedNote


class SemanticBlocks(Stage):
    name = "semantic-blocks"
    summary = "recall, map: the embedding model's cosine scores blocks and sections"

    def widen(self, reader: Reader, query: str, units: list[Unit],
              note_scores: dict[str, float], seen: Seen) -> list[Unit]:
        return with_dense(reader, query, units, note_scores, seen)

    def evidence(self, reader: Reader, loaded: LoadedNote, query: str,
                 evidence: Evidence) -> Evidence:
        if not query.strip():
            return evidence
        return reader.dense().evidence(loaded, query, evidence)


STAGE = SemanticBlocks()


def with_dense(reader: Reader, query: str, units: list[Unit], note_scores: dict[str, float],
               seen: Seen) -> list[Unit]:
    """Every block of the routed notes joins the ranked blocks, and each block gains
    ``BLOCK_WEIGHT`` times its cosine's place among them (0 to 1); a block new to the
    ranking starts from its note's share. Blocks of notes without vectors keep their
    score."""
    from memory.retrieval.blocks import loaded
    from memory.retrieval.dense import BLOCK_WEIGHT, shares
    from memory.retrieval.recall import NOTE_WEIGHT

    dense, asked = reader.dense(), reader.router().query_vector(query)
    known = {u.key: u for u in units}
    notes = list(dict.fromkeys([*note_scores, *(u.note for u in units)]))
    candidates = []
    for note in notes:
        read = loaded(reader, note, seen)
        if read is None:
            continue
        for block in dense.note_blocks(read.loaded, asked):
            key = (note, block.section, block.number)
            if key in known or note in note_scores:
                candidates.append((key, block, read))
    lifted = dict(known)
    for (key, block, read), share in zip(candidates, shares([c[1].cosine for c in candidates]),
                                         strict=True):
        unit = known.get(key) or _block_unit(reader, block, read,
                                             NOTE_WEIGHT * note_scores.get(key[0], 0.0))
        if unit is not None:
            lifted[key] = dataclasses.replace(unit, score=unit.score + BLOCK_WEIGHT * share)
    return sorted(lifted.values(), key=lambda u: -u.score)


def _block_unit(reader: Reader, block: DenseBlock, read: Read, score: float) -> Unit | None:
    from memory.retrieval.filling import Unit

    section = read.loaded.note.section(block.section)
    if section is None:
        return None
    text = "".join(read.lines[block.start:block.end])
    return Unit(block.note, block.section, block.number, section.date, block.start, text,
                reader.count(text, remember=False), score, *read.section(block.section))
