"""The ``across`` lever (issue #34, item 6): for a question that asks across time or
episodes ("how many…", "in total", "which came first", "¿cuántas veces…?",
:func:`memory.model.timeexpr.asks_across`), ``recall`` weighs the blocks of twice as many
routed notes and spreads the second half of its budget across sections as ``spread`` does:
the answer lies in several sessions, and one session's blocks should not fill the budget."""

from __future__ import annotations

from memory.model.timeexpr import asks_across
from memory.retrieval.stages.base import Stage


class Across(Stage):
    name = "across"
    summary = "recall: a question across episodes routes twice the notes and spreads"

    def routes(self, query: str, routes: int) -> int:
        return routes * 2 if asks_across(query) else routes

    def spreads(self, query: str) -> bool:
        return asks_across(query)


STAGE = Across()
