"""The ``fusion`` lever: ``recall`` ranks blocks by reciprocal rank fusion of their own
rank, their section's and their note's (and the date signals), instead of the weighted sum
of normalised scores."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import TYPE_CHECKING

from memory.model.timeexpr import asks_when, dated_inside, find_ranges, mentions_time
from memory.retrieval.stages.base import Stage

if TYPE_CHECKING:
    from memory.index import ParsedQuery
    from memory.retrieval.blocks import Seen
    from memory.retrieval.filling import Unit
    from memory.retrieval.reader import Reader

RRF_K = 60  # reciprocal rank fusion's constant (the usual one, not tuned here)


class Fusion(Stage):
    name = "fusion"
    summary = "recall: blocks ranked by reciprocal rank fusion, not a weighted sum"

    def rank(self, reader: Reader, parsed: ParsedQuery, routed: list[str], today: dt.date,
             seen: Seen) -> list[Unit] | None:
        return fused_units(reader, parsed, routed, today, seen)


STAGE = Fusion()


def fused_units(reader: Reader, parsed: ParsedQuery, routed: list[str], today: dt.date,
                seen: Seen) -> list[Unit]:
    """Blocks ranked by the sum of ``1 / (RRF_K + rank)`` over the block's own rank among
    the store's blocks, its section's among the sections, its note's among the routed notes,
    and, for a block whose entry lies inside the question's dates (or that carries a time,
    for a "when" question), rank 1 of that signal. A signal the block is absent from adds
    nothing."""
    from memory.retrieval.blocks import POOL, loaded, unit

    blocks, _ = reader.search(parsed, "paragraph", POOL)
    sections, _ = reader.search(parsed, "section", POOL)
    section_rank = {(h.doc.note_id, h.doc.section): r
                    for r, h in reversed(list(enumerate(sections, start=1)))}
    note_rank = {note: r for r, note in enumerate(routed, start=1)}
    ranges = find_ranges(parsed.text, today)
    when = asks_when(parsed.text)
    units = []
    for rank, hit in enumerate(blocks, start=1):
        note, section = hit.doc.note_id, hit.doc.section
        read = loaded(reader, note, seen)
        if read is None:
            continue
        ranks = [rank, section_rank.get((note, section)), note_rank.get(note)]
        found = unit(reader, hit, 0.0, read)
        if dated_inside(hit.doc.date, ranges):
            ranks.append(1)
        if when and mentions_time(found.text):
            ranks.append(1)
        score = sum(1 / (RRF_K + r) for r in ranks if r is not None)
        units.append(dataclasses.replace(found, score=score))
    return sorted(units, key=lambda u: -u.score)
