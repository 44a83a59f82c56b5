"""The ``spread`` lever: ``recall`` spreads its budget across notes and sections. Each
block already picked from a block's own section lowers the block's score
(:func:`memory.retrieval.recall.spread`), so when several sessions score close, the best
blocks of each are shown rather than all from one (multi-session questions)."""

from __future__ import annotations

from memory.retrieval.stages.base import Stage


class Spread(Stage):
    name = "spread"
    summary = "recall: the budget's second half spread across sections"

    def spreads(self, query: str) -> bool:
        return True


STAGE = Spread()
