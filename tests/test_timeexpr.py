"""Time expressions in Spanish and English, resolved against the question's date."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory.model.timeexpr import compact_day, expand_day, find_ranges, parse_date_ref

BASE = dt.date(2026, 11, 30)  # a Monday
CASES = [
    ("qué decidimos la semana pasada", "2026-11-23", "2026-11-29"),
    ("what did we decide last week", "2026-11-23", "2026-11-29"),
    ("hace dos semanas", "2026-11-16", "2026-11-22"),
    ("two weeks ago", "2026-11-16", "2026-11-22"),
    ("last Tuesday", "2026-11-24", "2026-11-24"),
    ("el martes pasado", "2026-11-24", "2026-11-24"),
    ("yesterday", "2026-11-29", "2026-11-29"),
    ("lo de ayer", "2026-11-29", "2026-11-29"),
    ("en octubre", "2026-10-01", "2026-10-31"),
    ("in October", "2026-10-01", "2026-10-31"),
    ("el mes pasado", "2026-10-01", "2026-10-31"),
    ("el 3 de noviembre", "2026-11-03", "2026-11-03"),
    ("on November 3", "2026-11-03", "2026-11-03"),
    ("2026-11-03", "2026-11-03", "2026-11-03"),
    ("a principios de octubre", "2026-10-01", "2026-10-10"),
    ("desde el lunes", "2026-11-23", "2026-11-30"),
    ("hace 3 días", "2026-11-26", "2026-11-28"),
    ("en diciembre", "2025-12-01", "2025-12-31"),  # a month still to come means last year's
    ("octubre de 2025", "2025-10-01", "2025-10-31"),
    ("in May 2026", "2026-05-01", "2026-05-31"),
    ("what movie did she watch on 1 May, 2022?", "2022-05-01", "2022-05-01"),  # comma, year
    ("on 3 de noviembre de 2025", "2025-11-03", "2025-11-03"),
    ("on May 23, 2023", "2023-05-23", "2023-05-23"),
]


@pytest.mark.parametrize(("text", "start", "end"), CASES)
def test_expressions_resolve_to_ranges(text: str, start: str, end: str) -> None:
    found = find_ranges(text, BASE)
    assert [(str(r.start), str(r.end)) for r in found] == [(start, end)]


@pytest.mark.parametrize("text", ["we may deploy tonight", "el mar estaba en calma",
                                  "rollback del canary", "version 2026 of the API",
                                  "octa core", "the dec field"])
def test_ordinary_words_are_not_dates(text: str) -> None:
    assert find_ranges(text, BASE) == []


def test_explicit_references() -> None:
    month = parse_date_ref("2026-11")
    assert month is not None and (month.start, month.end) == (dt.date(2026, 11, 1),
                                                              dt.date(2026, 11, 30))
    span = parse_date_ref("2026-11-01..2026-11-15")
    assert span is not None and span.contains(dt.date(2026, 11, 15))
    assert not span.contains(dt.date(2026, 11, 16))
    for bad in ["2026-13", "2026-02-30", "2026-11-15..2026-11-01", "yesterday", ""]:
        assert parse_date_ref(bad) is None


@given(st.text(max_size=200))
def test_any_text_never_raises(text: str) -> None:
    for found in find_ranges(text, BASE):
        assert found.start <= found.end


def test_a_habitual_weekday_is_not_a_date() -> None:
    """"los viernes" means every Friday, not last Friday."""
    found = find_ranges("¿Qué se acordó a principios de octubre de 2025 sobre los viernes?",
                        dt.date(2026, 11, 30))
    assert [(r.start, r.end) for r in found] == [(dt.date(2025, 10, 1), dt.date(2025, 10, 10))]


@pytest.mark.parametrize("text", ["friday deploys", "no deploys friday or monday",
                                  "despliegues viernes", "lunes", "the friday freeze rule"])
def test_a_weekday_alone_is_not_a_date(text: str) -> None:
    """A weekday with no word that makes it a day ("friday deploys") is a topic."""
    assert find_ranges(text, BASE) == []


@pytest.mark.parametrize(("text", "phrase", "start", "end"), [
    ("what changed last friday", "last friday", "2026-11-27", "2026-11-27"),
    ("on Friday we rolled back", "on friday", "2026-11-27", "2026-11-27"),
    ("el viernes hubo incidente", "el viernes", "2026-11-27", "2026-11-27"),
    ("el pasado viernes", "el pasado viernes", "2026-11-27", "2026-11-27"),
    ("el viernes pasado", "el viernes pasado", "2026-11-27", "2026-11-27"),
    ("since Thursday", "since thursday", "2026-11-26", "2026-11-30"),
    ("desde el jueves", "desde el jueves", "2026-11-26", "2026-11-30"),
])
def test_a_weekday_named_as_a_day_is_one(text: str, phrase: str, start: str, end: str) -> None:
    found = find_ranges(text, BASE)
    assert [(r.phrase, str(r.start), str(r.end)) for r in found] == [(phrase, start, end)]


@given(st.dates(dt.date(1000, 1, 1)), st.sampled_from(["", ":b3", ":b2-4", "-rollback-fixed"]))
def test_a_labels_compact_day_reads_back_as_the_day(day: dt.date, rest: str) -> None:
    """``recall``'s labels write a day ``20260622`` (3 tokens, not 6); read back, it is the
    day again, with whatever followed it."""
    iso = day.isoformat() + rest
    compact = compact_day(iso)
    assert compact == day.strftime("%Y%m%d") + rest
    assert expand_day(compact) == iso
    assert expand_day("#" + compact) == "#" + iso


@pytest.mark.parametrize("ref", ["state", "references:b1", "2026-06", "2026-06-2", "20261340",
                                 "202606221", "2026062", "20260622x", "#7"])
def test_what_is_no_compact_day_stays_as_it_is(ref: str) -> None:
    assert compact_day(ref) == ref
    assert expand_day(ref) == ref
