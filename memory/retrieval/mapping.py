"""Rung 2, the section map: every section of a note with its id, kind, date and tokens;
with a query, match scores (text, hierarchy and the question's dates), the best entries
only, and the matching block ranges of long sections. The stages that are on may add to the
sections' ``evidence`` (the semantic lever: :mod:`memory.retrieval.stages`).

Imported by the rungs that map (not by a process that only suggests, the prompt hook).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from memory.index import parse_query
from memory.retrieval.context import aboutness
from memory.retrieval.reader import Reader
from memory.retrieval.results import MapRow, Omitted, SectionMap
from memory.retrieval.section_scores import (
    Evidence,
    clear_winner,
    ranked_ids,
    score_sections,
    when_boosted,
)
from memory.retrieval.stages import acting
from memory.retrieval.zoom import ZOOM_TOKENS, own_blocks, windows

if TYPE_CHECKING:
    from memory.model.note import Section
    from memory.retrieval.zoom import Window
    from memory.state.store import LoadedNote

NOT_PICKED = ("header", "history")  # metadata, and the container of every entry
MAP_ENTRIES = 8  # with a query, a map shows at most this many entries (the best ones)


def section_map(reader: Reader, note_id: str, query: str | None = None,
                today: dt.date | None = None, context: str | None = None) -> SectionMap:
    """The note's map (see the module's doc); ``context`` (recent conversation) helps a
    vague query as in ``suggest``, and alone it scores the sections by itself."""
    loaded = reader.load(note_id)
    sections = loaded.note.sections
    if query is None and context:
        query = ""
    if query is None:
        rows = tuple(_row(reader, pos, s) for pos, s in enumerate(sections, start=1))
        return SectionMap(loaded.note_id, loaded.note.title,
                          reader.count(loaded.note.text), rows)
    evidence = _evidence(reader, loaded.note_id, query, context)
    for stage in acting(reader.levers.chosen(), "evidence"):
        evidence = stage.evidence(reader, loaded, query, evidence)
    evidence = when_boosted(evidence, sections, query)
    scored = score_sections(sections, evidence, query, today or dt.date.today())
    pickable = {s.id for s in sections if s.kind not in NOT_PICKED
                or s is loaded.note.lead}  # plain Markdown: its top part can be picked
    ranked = ranked_ids(scored, pickable)
    best = tuple(k for k, _ in ranked[:2])
    shown, omitted = _shown_entries(reader, sections, scored.scores)
    rows = tuple(_row(reader, pos, s, scored.scores.get(s.id, 0.0),
                      _zoom(reader, loaded, s, evidence) if s.id in best else ())
                 for pos, s in enumerate(sections, start=1) if s.kind != "entry"
                 or s.id in shown)
    dates = tuple(f"{r.phrase}={r.start}..{r.end}" for r in scored.ranges)
    return SectionMap(loaded.note_id, loaded.note.title, reader.count(loaded.note.text),
                      rows, query, best, clear_winner(ranked), dates, omitted)


def _evidence(reader: Reader, note_id: str, query: str, context: str | None) -> Evidence:
    parsed = parse_query(query, context)
    reader.freshen()
    about = aboutness(note_id, parsed, reader.search_notes)
    sections, _ = reader.search(parsed, "section", None, note_id, about)
    paragraphs, _ = reader.search(parsed, "paragraph", None, note_id, about)
    return Evidence({h.doc.section: h.score for h in sections},
                    {(h.doc.section, h.doc.lines[0]): h.score for h in paragraphs})


def _shown_entries(reader: Reader, sections: tuple[Section, ...],
                   scores: dict[str, float]) -> tuple[set[str], Omitted | None]:
    entries = [s for s in sections if s.kind == "entry"]
    ranked = sorted(entries, key=lambda e: -scores.get(e.id, 0.0))
    shown = {e.id for e in ranked[:MAP_ENTRIES] if scores.get(e.id)}
    left = [e for e in entries if e.id not in shown]
    if not left:
        return shown, None
    dates = sorted(e.date for e in left if e.date)
    return shown, Omitted(len(left), dates[0] if dates else None,
                          dates[-1] if dates else None,
                          sum(reader.count(e.shown) for e in left))


def _zoom(reader: Reader, loaded: LoadedNote, section: Section,
          evidence: Evidence) -> tuple[Window, ...]:
    if reader.count(section.shown) <= ZOOM_TOKENS:
        return ()
    blocks = own_blocks(section, loaded.note.sections)
    number = {b.start: n for n, b in enumerate(blocks, start=1)}
    block_scores = {number[line]: score for (sid, line), score in
                    evidence.paragraphs.items() if sid == section.id and line in number}
    return tuple(windows(blocks, block_scores, section.id, reader.counter))


def _row(reader: Reader, pos: int, section: Section, score: float | None = None,
         zoom: tuple[Window, ...] = ()) -> MapRow:
    return MapRow(pos, section.id, section.kind, section.title, section.date,
                  reader.count(section.shown), section.parent, score, zoom)
