"""Time expressions in Spanish and English, resolved against the date a question is asked.

``find_ranges("qué decidimos la semana pasada", date(2026, 11, 30))`` gives the week of
2026-11-23..2026-11-29. Relative ("yesterday", "hace dos semanas", "last Tuesday", "el mes
pasado") and absolute ("en octubre", "3 de noviembre", "November 3", "2026-11-03",
"2026-11", "2026-11-01..2026-11-15") expressions are recognised by small rules over
accent-folded text; anything else is ignored, so a missed expression changes nothing.
``parse_date_ref`` reads the explicit forms a reader passes to ``read_section``;
:func:`compact_day` and :func:`expand_day` write and read the day ``recall``'s labels show
(``20260622``).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from memory.model.text import fold

MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "oct": 10, "nov": 11, "dec": 12,
    "enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7,
    "agosto": 8, "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11,
    "diciembre": 12,
}
WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
    "sunday": 6, "lunes": 0, "martes": 1, "miercoles": 2, "jueves": 3, "viernes": 4,
    "sabado": 5, "domingo": 6,
}
NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "un": 1,
    "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7,
    "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12, "couple": 2, "par": 2,
}
UNITS = {"day": "day", "days": "day", "dia": "day", "dias": "day", "week": "week",
         "weeks": "week", "semana": "week", "semanas": "week", "month": "month",
         "months": "month", "mes": "month", "meses": "month", "year": "year", "years": "year",
         "ano": "year", "anos": "year"}


@dataclass(frozen=True)
class TimeRange:
    """An inclusive range of days, and the words that named it."""

    start: dt.date
    end: dt.date
    phrase: str

    def contains(self, day: dt.date) -> bool:
        return self.start <= day <= self.end


def day_of(value: object) -> dt.date | None:
    """The day of an ISO date or datetime (an entry's ``2026-11-03`` or ``2026-11-03 14:10``,
    a question's ``2026-11-03T14:10``); None when it is not one."""
    try:
        return dt.date.fromisoformat(str(value or "")[:10])
    except ValueError:
        return None


def dated_inside(value: object, ranges: Iterable[TimeRange]) -> bool:
    """Whether the ISO date ``value`` falls in any of ``ranges`` (False for no date)."""
    day = day_of(value)
    return day is not None and any(r.contains(day) for r in ranges)


def parse_date_ref(value: str) -> TimeRange | None:
    """``2026-11-03``, ``2026-11``, ``2026`` or ``A..B`` of those; None if it is not one."""
    text = value.strip()
    if ".." in text:
        left, _, right = text.partition("..")
        first, last = parse_date_ref(left), parse_date_ref(right)
        if first is None or last is None or first.start > last.end:
            return None
        return TimeRange(first.start, last.end, text)
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            day = dt.date.fromisoformat(text)
            return TimeRange(day, day, text)
        if re.fullmatch(r"\d{4}-\d{2}", text):
            year, month = int(text[:4]), int(text[5:])
            return TimeRange(*_month(year, month), text)
        if re.fullmatch(r"\d{4}", text):
            return TimeRange(dt.date(int(text), 1, 1), dt.date(int(text), 12, 31), text)
    except ValueError:
        return None
    return None


_ISO_HEAD = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?=$|[-:])")
_BASIC_HEAD = re.compile(r"(#?)(\d{4})(\d{2})(\d{2})(?=$|[-:])")


@functools.lru_cache(maxsize=4096)  # recall labels each ranked block at each budget it fills
def compact_day(ref: str) -> str:
    """A reference that starts with a day, the day written ``20260622`` (ISO 8601's basic
    form: 3 tokens, where ``2026-06-22`` is 6); any other reference as it is."""
    found = _ISO_HEAD.match(ref)
    return "".join(found.groups()) + ref[found.end():] if found else ref


def expand_day(ref: str) -> str:
    """The inverse of :func:`compact_day`: ``20260622:b3`` (or ``#20260622``) is
    ``2026-06-22:b3`` when its first eight digits are a day; anything else as it is."""
    found = _BASIC_HEAD.match(ref)
    if found is None:
        return ref
    hash_, year, month, day = found.groups()
    try:
        dt.date(int(year), int(month), int(day))
    except ValueError:
        return ref
    return f"{hash_}{year}-{month}-{day}{ref[found.end():]}"


def find_ranges(text: str, base: dt.date) -> list[TimeRange]:
    """Every time expression found in ``text``, resolved against ``base`` (the question's
    date), in order of appearance; overlapping matches keep the longest."""
    folded = fold(text)
    found: list[tuple[int, int, TimeRange]] = []
    for pattern, resolve in _rules():
        for match in pattern.finditer(folded):
            resolved = _safe(resolve, match, base)
            if resolved is not None:
                found.append((match.start(), match.end(), resolved))
    return [r for _, _, r in _longest(found)]


def _safe(resolve: Callable[[re.Match[str], dt.date], TimeRange | None], match: re.Match[str],
          base: dt.date) -> TimeRange | None:
    try:
        return resolve(match, base)
    except (ValueError, OverflowError, KeyError):
        return None  # a mis-parsed expression is ignored, never an error


def _longest(found: list[tuple[int, int, TimeRange]]) -> Iterator[tuple[int, int, TimeRange]]:
    kept: list[tuple[int, int, TimeRange]] = []
    for item in sorted(found, key=lambda f: (f[0], -(f[1] - f[0]))):
        if kept and item[0] < kept[-1][1]:
            continue
        kept.append(item)
    return iter(kept)


# -- resolvers ----------------------------------------------------------------------------
def _days_in(year: int, month: int) -> int:
    """The days of a month (as ``calendar.monthrange``, whose module and its ``locale``
    would cost every command's start)."""
    if not 1 <= month <= 12:
        raise ValueError(f"bad month number {month}; must be 1-12")
    if month == 12:
        return 31
    return (dt.date(year, month + 1, 1) - dt.timedelta(days=1)).day


def _month(year: int, month: int) -> tuple[dt.date, dt.date]:
    return dt.date(year, month, 1), dt.date(year, month, _days_in(year, month))


def _week_of(day: dt.date) -> tuple[dt.date, dt.date]:
    monday = day - dt.timedelta(days=day.weekday())
    return monday, monday + dt.timedelta(days=6)


def _shift_months(day: dt.date, months: int) -> dt.date:
    index = day.year * 12 + day.month - 1 - months
    year, month = divmod(index, 12)
    return dt.date(year, month + 1, min(day.day, _days_in(year, month + 1)))


def _past_month(month: int, base: dt.date, year: int | None) -> tuple[dt.date, dt.date]:
    if year is None:
        year = base.year if month <= base.month else base.year - 1
    return _month(year, month)


def _iso(m: re.Match[str], base: dt.date) -> TimeRange | None:
    return parse_date_ref(m.group(0))


def _relative_day(m: re.Match[str], base: dt.date) -> TimeRange:
    back = {"today": 0, "hoy": 0, "yesterday": 1, "ayer": 1, "anteayer": 2,
            "antes de ayer": 2, "the day before yesterday": 2}[m.group(1)]
    day = base - dt.timedelta(days=back)
    return TimeRange(day, day, m.group(0))


def _last_unit(m: re.Match[str], base: dt.date) -> TimeRange:
    unit, which = UNITS[m.group("unit")], m.group("which")
    back = 0 if which in ("this", "esta", "este", "current") else 1
    if unit == "week":
        start, end = _week_of(base - dt.timedelta(weeks=back))
    elif unit == "month":
        shifted = _shift_months(base, back)
        start, end = _month(shifted.year, shifted.month)
    elif unit == "year":
        start, end = dt.date(base.year - back, 1, 1), dt.date(base.year - back, 12, 31)
    else:
        start = end = base - dt.timedelta(days=back)
    return TimeRange(start, min(end, base), m.group(0))


def _ago(m: re.Match[str], base: dt.date) -> TimeRange:
    raw = m.group("n")
    count = int(raw) if raw.isdigit() else NUMBERS[raw]
    unit = UNITS[m.group("unit")]
    if unit == "day":
        day = base - dt.timedelta(days=count)
        return TimeRange(day - dt.timedelta(days=1), day + dt.timedelta(days=1), m.group(0))
    if unit == "week":
        start, end = _week_of(base - dt.timedelta(weeks=count))
        return TimeRange(start, end, m.group(0))
    if unit == "month":
        shifted = _shift_months(base, count)
        return TimeRange(*_month(shifted.year, shifted.month), m.group(0))
    return TimeRange(dt.date(base.year - count, 1, 1), dt.date(base.year - count, 12, 31),
                     m.group(0))


def _weekday(m: re.Match[str], base: dt.date) -> TimeRange | None:
    """A weekday named as a day ("last Friday", "on Friday", "el viernes (pasado)", "since
    Monday"); a weekday alone ("friday deploys", "los viernes") is a habit or a topic, not a
    date."""
    if not (m.group("since") or m.group("pre") or m.group("post")):
        return None
    wanted = WEEKDAYS[m.group("day")]
    back = (base.weekday() - wanted) % 7 or 7
    day = base - dt.timedelta(days=back)
    if m.group("since"):
        return TimeRange(day, base, m.group(0))
    return TimeRange(day, day, m.group(0))


def _day_month(m: re.Match[str], base: dt.date) -> TimeRange:
    month = MONTHS[m.group("month")]
    day = int(m.group("day"))
    year = int(m.group("year")) if m.group("year") else None
    if year is None:
        year = base.year if (month, day) <= (base.month, base.day) else base.year - 1
    date = dt.date(year, month, day)
    return TimeRange(date, date, m.group(0))


def _month_name(m: re.Match[str], base: dt.date) -> TimeRange:
    month = MONTHS[m.group("month")]
    year = int(m.group("year")) if m.group("year") else None
    start, end = _past_month(month, base, year)
    part = m.group("part")
    if part in ("principios", "early", "comienzos", "inicios"):
        end = start + dt.timedelta(days=9)
    elif part in ("mediados", "mid", "middle"):
        start, end = start + dt.timedelta(days=10), start + dt.timedelta(days=19)
    elif part in ("finales", "late", "fines", "end"):
        start = start + dt.timedelta(days=20)
    return TimeRange(start, end, m.group(0))


_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
# Month names that are also common words ("may", "mar" = sea) or abbreviations count alone
# only after a preposition or before a year; full names count anywhere.
_AMBIGUOUS = {"may", "mar", "jan", "feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
              "nov", "dec"}
_SAFE_MONTH = "|".join(sorted((m for m in MONTHS if m not in _AMBIGUOUS), key=len,
                              reverse=True))
_DAY = "|".join(sorted(WEEKDAYS, key=len, reverse=True))
_NUM = "|".join(sorted(NUMBERS, key=len, reverse=True)) + r"|\d{1,3}"
_UNIT = "|".join(sorted(UNITS, key=len, reverse=True))
_Resolve = Callable[[re.Match[str], dt.date], TimeRange | None]
_RULES: list[tuple[str, _Resolve]] = [
    (r"\b\d{4}-\d{2}(?:-\d{2})?(?:\.\.\d{4}-\d{2}(?:-\d{2})?)?\b", _iso),
    (r"\b(the day before yesterday|antes de ayer|anteayer|yesterday|ayer|today|"
     r"hoy)\b", _relative_day),
    (rf"\b(?P<which>last|past|previous|this|current)\s+(?P<unit>{_UNIT})\b",
     _last_unit),
    (rf"\b(?:(?:el|la)\s+)?(?P<unit>{_UNIT})\s+(?P<which>pasad[oa]|anterior)\b",
     _last_unit),
    (rf"\b(?P<which>esta|este)\s+(?P<unit>{_UNIT})\b", _last_unit),
    (rf"\b(?P<n>{_NUM})\s+(?P<unit>{_UNIT})\s+ago\b", _ago),
    (rf"\bhace\s+(?:unos?\s+|unas\s+)?(?P<n>{_NUM})\s+(?P<unit>{_UNIT})\b", _ago),
    # a weekday is a date only with a word that makes it one (_weekday)
    (rf"\b(?:(?P<since>since|desde)\s+)?(?:(?P<pre>last|past|previous|this|on|"
     rf"el\s+pasado|el|este)\s+)?(?P<day>{_DAY})(?P<post>\s+pasado)?\b",
     _weekday),
    (rf"\b(?:el\s+)?(?P<day>\d{{1,2}})\s+(?:de\s+)?(?P<month>{_MONTH})"
     rf"(?:,?\s+(?:de\s+|del\s+)?(?P<year>\d{{4}}))?\b", _day_month),
    (rf"\b(?P<month>{_MONTH})\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?"
     rf"(?:,?\s+(?P<year>\d{{4}}))?\b", _day_month),
    (rf"\b(?:(?:a|en)\s+)?(?:(?P<part>principios|comienzos|inicios|mediados|"
     rf"finales|fines|early|mid|middle|late|end)\s+(?:de\s+|of\s+)?)?"
     rf"(?:(?:en|in|de|of|during|durante)\s+)?(?P<month>{_SAFE_MONTH})"
     rf"(?:\s+(?:de\s+|del\s+)?(?P<year>\d{{4}}))?\b", _month_name),
    (rf"\b(?:(?P<part>early|mid|late)\s+|(?:in|during|since|of)\s+)"
     rf"(?P<month>{_MONTH})(?:\s+(?P<year>\d{{4}}))?\b", _month_name),
    (rf"\b(?P<part>)(?P<month>{_MONTH})\s+(?P<year>\d{{4}})\b", _month_name),
]


# The patterns are compiled on first use, not at import: compiling them all costs every
# command a few milliseconds at start, and most commands never read a time expression.
@functools.cache
def _compiled(source: str) -> re.Pattern[str]:
    return re.compile(source)


@functools.cache
def _rules() -> list[tuple[re.Pattern[str], _Resolve]]:
    return [(_compiled(source), resolve) for source, resolve in _RULES]


# -- questions about time, and lines that carry it ---------------------------------------


_ASKS_WHEN = (
    r"\b(when|cuando|what (?:date|day|month|year|time|week)|which (?:date|day|month|year|"
    r"week)|how long ago|since when|en que (?:fecha|dia|mes|ano|semana)|que dia|desde cuando|"
    r"hace cuanto)\b")
_TIME_WORDS = (
    rf"\b(yesterday|today|tonight|tomorrow|ago|last|next|weekend|week|month|year|"
    rf"ayer|hoy|anoche|manana|hace|pasad[oa]|proxim[oa]|semana|mes|ano|finde|"
    rf"{_DAY}|{_SAFE_MONTH}|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}:\d{{2}})\b")


def asks_when(question: str) -> bool:
    """Whether a question asks for a time ("when…", "¿cuándo…?", "which month…")."""
    return _compiled(_ASKS_WHEN).search(fold(question)) is not None


_ASKS_ACROSS = (
    r"\b(how (many|often)|how much (time|money)|in total|altogether|all the (times|places|"
    r"things|people)|every time|each time|which (one )?(was|came|did|happened) (first|last)|"
    r"(first|last) time|ever|so far|both|"
    r"cuant[oa]s( veces)?|en total|todas las veces|cada vez|(primera|ultima) vez|"
    r"hasta ahora|alguna vez|ambos|ambas)\b")


def asks_across(question: str) -> bool:
    """Whether a question asks across time or episodes ("how many…", "in total", "which
    came first", "¿cuántas veces…?"): its answer lies in several notes or entries."""
    return _compiled(_ASKS_ACROSS).search(fold(question)) is not None


def mentions_time(text: str) -> bool:
    """Whether a line or paragraph carries a time ("last week", "ayer", "on Friday", a date):
    where the answer to a "when" question usually is, in a dated entry."""
    return _compiled(_TIME_WORDS).search(fold(text)) is not None
