"""The ``dates`` lever: ``suggest`` lifts the notes with a matching entry dated inside the
message's time expressions of at most a month ("on 3 November", "in May 2023", "last
week"), resolved at the question's date, when the message's own words match the dated
entry: each scores 1.5 times as much."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from memory.index.words import query_words
from memory.model.timeexpr import dated_inside, find_ranges
from memory.retrieval.context import split
from memory.retrieval.stages.base import Stage

if TYPE_CHECKING:
    from memory.index import ParsedQuery, SearchHit, StoredNote
    from memory.model.timeexpr import TimeRange
    from memory.retrieval.reader import Reader
    from memory.retrieval.stages.base import Ask, NoteHits

DATE_SHARE = 0.5  # a note written inside the message's dates scores 1 + this times as much
DATE_POOL = 200  # sections searched for entries written then
DATE_NOTES = 100  # notes ranked before the lift, when the message names a time
DATE_SPAN_DAYS = 32  # only expressions shorter than this narrow the routing (a month at most)


class Dates(Stage):
    name = "dates"
    summary = "suggest: notes with an entry inside the message's dates score 1.5 times"
    default = False  # not earned in the lever audit of 2026-12-05 (docs/benchmarks.md)

    def pool(self, reader: Reader, ask: Ask) -> int:
        return DATE_NOTES if date_ranges(ask) else 0

    def lift(self, reader: Reader, ask: Ask, hits: NoteHits) -> NoteHits:
        return with_dates(reader, ask.parsed, hits, date_ranges(ask))


STAGE = Dates()


def date_ranges(ask: Ask) -> list[TimeRange]:
    """The message's time expressions that narrow it to at most a month: "this year" or
    "since 2020" hold most notes and say little."""
    return [r for r in find_ranges(ask.parsed.text, ask.today)
            if (r.end - r.start).days < DATE_SPAN_DAYS]


def with_dates(reader: Reader, parsed: ParsedQuery, hits: list[SearchHit[StoredNote]],
               ranges: list[TimeRange]) -> list[SearchHit[StoredNote]]:
    """Hits re-ranked by the message's time expressions: a note with a section that the
    message's own words match (among the store's ``DATE_POOL`` best; not the words of the
    time expression, which every heading of that year or month holds) and that is dated
    inside them scores ``1 + DATE_SHARE`` times as much. The time belongs to the message,
    so a section only the conversation matched lifts nothing; and the lift is a ratio, so
    among the notes written then the order stays, and "what did we decide on 3 November"
    goes to a note written that day only over those that match nearly as well (a note
    whose state holds the answer is dated by no entry). ``hits`` should be a wide pool
    (``DATE_NOTES``)."""
    if not ranges:
        return hits
    message, _ = split(parsed)
    said = {word for r in ranges for word, _ in query_words(r.phrase)}  # "august", "2024"
    own = dataclasses.replace(message, words=tuple(w for w in message.words
                                                   if w[0] not in said))
    if not own.words:
        return hits
    sections, _ = reader.search(own, "section", DATE_POOL)  # no context: the message's own
    dated = {h.doc.note_id for h in sections if dated_inside(h.doc.date, ranges)}
    if not dated:
        return hits
    lifted = [dataclasses.replace(h, score=round(h.score * (1 + DATE_SHARE), 2))
              if h.doc.note_id in dated else h for h in hits]
    return sorted(lifted, key=lambda h: -h.score)
