"""The ``neighbours`` lever: ``recall`` ranks the blocks next to a matching block (one and
two blocks away in its section) with a share of that block's score, so the reply to a
matching line, or the line a matching reply answers, can join it though it shares no word
with the query (:func:`memory.retrieval.recall.with_neighbours`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.retrieval.stages.base import Stage

if TYPE_CHECKING:
    from memory.retrieval.filling import Unit

NEIGHBOUR_SHARE = 0.5  # a block next to a matching one gets this share of its score
NEIGHBOUR_REACH = 2  # per block of distance, up to this many blocks away


class Neighbours(Stage):
    name = "neighbours"
    summary = "recall: the blocks next to a matching one take a share of its score"
    default = False  # not earned in the lever audit of 2026-12-05 (docs/benchmarks.md)

    def shares(self, unit: Unit) -> dict[int, float]:
        shares: dict[int, float] = {}
        for distance in range(1, NEIGHBOUR_REACH + 1):
            for number in (unit.block - distance, unit.block + distance):
                shares[number] = NEIGHBOUR_SHARE ** distance
        return shares


STAGE = Neighbours()
