"""How well each section of one note matches a question: text, hierarchy and date.

A section's score is its own BM25F score (title boosted, the section as a unit) plus part of
its best paragraph's score, so an entry with one line that answers is not drowned by a long
entry that mentions every word once. History entries also borrow a little from their
neighbours (an episode often spans two entries). When the question holds a time expression
("la semana pasada", "in October", "2026-11-03"), entries dated inside it gain the best text
score: any of them that matches a word outranks every entry outside the range, and one that
matches nothing ties the best (ties go to the dated entry). An expression that finds no
entry in its range changes nothing.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memory.model.timeexpr import TimeRange, asks_when, dated_inside, find_ranges, mentions_time

if TYPE_CHECKING:  # the note model (and its parser) is not needed to run this
    from memory.model.note import Section

PARAGRAPH_WEIGHT = 0.5  # share of the best paragraph's score a section adds to its own
NEIGHBOUR_WEIGHT = 0.15  # share of the adjacent entries' text scores an entry borrows
DATE_WEIGHT = 1.0  # share of the best text score an entry dated inside the range gains
WHEN_BOOST = 0.5  # a "when" question: paragraphs that carry a time count this much more
CLEAR_MARGIN = 1.25  # the best section wins clearly when it scores this much over the next


@dataclass(frozen=True)
class Evidence:
    """Raw search results inside one note: sections, and paragraphs by (section, block)."""

    sections: dict[str, float] = field(default_factory=dict)
    paragraphs: dict[tuple[str, int], float] = field(default_factory=dict)


@dataclass(frozen=True)
class Scored:
    scores: dict[str, float]
    ranges: tuple[TimeRange, ...]
    dated: frozenset[str]  # entries inside the question's time ranges


def when_boosted(evidence: Evidence, sections: tuple[Section, ...], question: str) -> Evidence:
    """For a question that asks when ("when did…", "¿cuándo…?"), paragraphs that carry a
    time ("last week", "ayer", "on Friday", a date) score ``1 + WHEN_BOOST`` times more: the
    answer is the line that dates the event, inside its dated entry."""
    if not asks_when(question):
        return evidence
    text = {(s.id, b.start): b.text for s in sections for b in s.blocks}
    boosted = {key: score * (1 + WHEN_BOOST) if mentions_time(text.get(key, "")) else score
               for key, score in evidence.paragraphs.items()}
    return Evidence(evidence.sections, boosted)


def score_sections(sections: tuple[Section, ...], evidence: Evidence, question: str,
                   today: dt.date) -> Scored:
    """Every section's score for the question (sections without any match are left out)."""
    text = _text_scores(sections, evidence)
    entries = [s for s in sections if s.kind == "entry"]
    scores = dict(text)
    for pos, entry in enumerate(entries):
        near = [text.get(e.id, 0.0) for e in entries[max(0, pos - 1):pos + 2] if e is not entry]
        if near and text.get(entry.id):
            scores[entry.id] += NEIGHBOUR_WEIGHT * max(near)
    ranges = tuple(find_ranges(question, today))
    dated = frozenset(e.id for e in entries if dated_inside(e.date, ranges))
    if dated:
        lift = DATE_WEIGHT * max(text.values(), default=0.0) or 1.0
        for entry in entries:  # file order: ties break the same way in every run
            if entry.id in dated:
                scores[entry.id] = scores.get(entry.id, 0.0) + lift
    return Scored({k: round(v, 2) for k, v in scores.items() if v > 0}, ranges, dated)


def _text_scores(sections: tuple[Section, ...], evidence: Evidence) -> dict[str, float]:
    best_paragraph: dict[str, float] = {}
    for (section_id, _block), score in evidence.paragraphs.items():
        best_paragraph[section_id] = max(best_paragraph.get(section_id, 0.0), score)
    out: dict[str, float] = {}
    for section in sections:  # in file order, so ties break the same way in every run
        if section.id in evidence.sections or section.id in best_paragraph:
            out[section.id] = evidence.sections.get(section.id, 0.0) + \
                PARAGRAPH_WEIGHT * best_paragraph.get(section.id, 0.0)
    return out


def ranked_ids(scored: Scored, pickable: set[str]) -> list[tuple[str, float]]:
    """Pickable sections by score, best first; ties go to entries inside the dates."""
    return sorted(((k, v) for k, v in scored.scores.items() if k in pickable),
                  key=lambda kv: (-kv[1], kv[0] not in scored.dated))


def clear_winner(ranked: list[tuple[str, float]]) -> bool:
    """True when the best score beats the second by ``CLEAR_MARGIN`` (or stands alone)."""
    if len(ranked) < 2:
        return bool(ranked)
    return ranked[0][1] >= CLEAR_MARGIN * ranked[1][1]
