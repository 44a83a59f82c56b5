"""The ``replies`` lever: ``recall`` ranks the block right after a ranked block that asks
something (a question mark near its end) with 0.9 of that block's score (``neighbours``
alone gives it half): in a dialogue the turn after a question is its answer, and it rarely
repeats the question's words ("How long have you been doing yoga?" / "Three years now")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.retrieval.stages.base import Stage

if TYPE_CHECKING:
    from memory.retrieval.filling import Unit

REPLY_SHARE = 0.9  # the block after one that asks gets this share of its score


class Replies(Stage):
    name = "replies"
    summary = "recall: the block after one that asks takes 0.9 of its score"
    default = True

    def shares(self, unit: Unit) -> dict[int, float]:
        return {unit.block + 1: REPLY_SHARE} if asks(unit.text) else {}


STAGE = Replies()


def asks(text: str) -> bool:
    """Whether a block asks something near its end (a question mark in its last 200
    characters)."""
    body = text.rstrip()
    return "?" in body[max(0, len(body) - 200):]
