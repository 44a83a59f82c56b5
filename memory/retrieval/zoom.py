"""Zooming into a long section: its blocks, ranges of them, and the windows that match.

A section's blocks are its top-level Markdown blocks (a paragraph, one list item, a code
fence, a table), numbered from 1 in file order, as the index numbers its ``paragraph``
documents. ``entry-id:b3`` names one block and ``entry-id:b3-5`` a range; reading one gives
the section's heading line and those blocks' lines, so a 3,000-token incident entry need not
be read whole to reach the lines that answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory.errors import SectionNotFound
from memory.state.tokens import TokenCounter

if TYPE_CHECKING:  # the note model (and its parser) is not needed to run this
    from memory.model.note import Block, Section

ZOOM_TOKENS = 500  # a section longer than this lists its matching windows in the map
WINDOW_TOKENS = 300  # a window grows around its best block up to about this many tokens
MAX_WINDOWS = 2  # windows listed per long section
_REF = re.compile(r"^(?P<section>.*):b(?P<first>\d+)(?:-(?P<last>\d+))?$")


@dataclass(frozen=True)
class BlockRange:
    """Blocks ``first``..``last`` (1-based, inclusive) of one section."""

    section: str
    first: int
    last: int

    @property
    def span(self) -> str:
        """``b3`` or ``b3-5``."""
        return f"b{self.first}" if self.first == self.last else f"b{self.first}-{self.last}"

    @property
    def ref(self) -> str:
        return f"{self.section}:{self.span}"


def block_ref(section: str, block: int) -> str:
    """The reference of one block (``section:b3``), or of the whole section for block 0."""
    return BlockRange(section, block, block).ref if block else section


@dataclass(frozen=True)
class Window:
    """A matching range of blocks, its cost and its match score."""

    blocks: BlockRange
    tokens: int
    score: float


def parse_block_ref(value: str) -> BlockRange | None:
    """``id:b3`` or ``id:b3-5``; None when ``value`` is not a block reference."""
    found = _REF.match(value.strip())
    if not found or not found["section"]:
        return None
    first = int(found["first"])
    last = int(found["last"] or first)
    return BlockRange(found["section"], first, last)


def own_blocks(section: Section, sections: tuple[Section, ...]) -> tuple[Block, ...]:
    """The section's blocks before its first child (children own the rest), as indexed."""
    child = next((s.start for s in sections if s.parent == section.id), section.end)
    return tuple(b for b in section.blocks if b.start < child)


def block_text(section: Section, lines: list[str], wanted: BlockRange,
               blocks: tuple[Block, ...]) -> str:
    """The section's heading line and the lines of blocks ``first``..``last``."""
    if not blocks:
        raise SectionNotFound(f"section {section.id!r} has no blocks to zoom into; read it "
                              "whole")
    if not 1 <= wanted.first <= wanted.last <= len(blocks):
        raise SectionNotFound(f"section {section.id!r} has blocks b1-{len(blocks)}; "
                              f"{wanted.ref} is outside them")
    start, end = blocks[wanted.first - 1].start, blocks[wanted.last - 1].end
    heading = lines[section.start] if section.start < blocks[0].start else ""
    return heading + "".join(lines[start:end])


def windows(blocks: tuple[Block, ...], block_scores: dict[int, float], section: str,
            counter: TokenCounter, limit: int = MAX_WINDOWS) -> list[Window]:
    """Up to ``limit`` disjoint windows around the best-scoring blocks, each grown to its
    neighbours while it stays within about ``WINDOW_TOKENS``."""
    costs = [counter.count(b.text) for b in blocks]
    taken: set[int] = set()
    found: list[Window] = []
    for number in sorted(block_scores, key=lambda n: -block_scores[n]):
        if len(found) >= limit or number in taken or not 1 <= number <= len(blocks):
            continue
        first, last = _grow(number, costs, taken)
        taken.update(range(first, last + 1))
        score = sum(block_scores.get(n, 0.0) for n in range(first, last + 1))
        found.append(Window(BlockRange(section, first, last),
                            sum(costs[first - 1:last]), round(score, 2)))
    return found


def _grow(number: int, costs: list[int], taken: set[int]) -> tuple[int, int]:
    """Extend [number, number] one block at a time, after then before, within budget."""
    first = last = number
    total = costs[number - 1]
    while True:
        grew = False
        for side in (last + 1, first - 1):
            if 1 <= side <= len(costs) and side not in taken and \
                    total + costs[side - 1] <= WINDOW_TOKENS:
                total += costs[side - 1]
                first, last = min(first, side), max(last, side)
                grew = True
        if not grew:
            return first, last
