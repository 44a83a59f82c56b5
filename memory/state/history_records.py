"""What the ledger's records say about a note as it is now. Pure functions, no I/O.

- :func:`drifts`: recorded history entries that were changed, removed, moved or that had a
  new entry inserted before them; entries appended at the end are not drifts.
- :func:`shape_losses`: what the file lost of what the store last saw whole (front matter,
  title line, top-level sections); :func:`mid_save_signs`, what a file being saved looks
  like (with the shape losses, an empty file or a last entry whose heading is cut).
- :func:`observation`: what to record of a note just read (its new entries at the end; the
  gaps, history lines and shape when nothing was lost); a file that may be mid-save never
  has its last entry recorded.

Line endings are not content: an entry compares equal to its record whatever its line
endings (a note converted to CRLF is the same note). Putting entries back (``--restore``,
and the merge of every tool write) is :mod:`memory.state.history_merge`.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from memory.model.note import Note, Section
from memory.model.text import split_lines
from memory.state.ledger import Change, HistoryRecord, NoteRecord, Recorded, Shape

_TITLE_LINE = re.compile(r"^#[ \t]+\S")


@dataclass(frozen=True)
class Drift:
    """A recorded entry that is no longer as recorded."""

    note: str
    entry: str
    kind: str  # changed, removed, moved, inserted, note-removed
    line: int  # 1-based line of the entry now (or of the history heading / 1)
    detail: str
    recorded: Recorded | None  # None for an inserted entry, which has no record


def normalized(text: str) -> str:
    """An entry's text without the blank lines that separate it from the next one."""
    return text.rstrip() + "\n"


def lf(text: str) -> str:
    """``text`` with every line ending made ``\\n`` (CRLF and CR are not content)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def entry_hash(text: str) -> str:
    return hashlib.sha256(normalized(text).encode("utf-8")).hexdigest()


def same_text(recorded: Recorded, text: str) -> bool:
    """The entry's text is the recorded one, line endings aside."""
    return entry_hash(text) == recorded.hash or lf(normalized(text)) == lf(
        normalized(recorded.text))


def core_and_gap(text: str) -> tuple[str, str]:
    """An entry's text split into its lines and the blank lines after them."""
    lines = split_lines(text)
    end = len(lines)
    while end > 1 and not lines[end - 1].strip():
        end -= 1
    return "".join(lines[:end]), "".join(lines[end:])


def shape_of(note: Note) -> Shape:
    header = note.sections[0] if note.sections and note.sections[0].kind == "header" else None
    body = split_lines(header.text)[note.body_start:] if header else []
    return Shape(note.front_matter, any(_TITLE_LINE.match(line) for line in body),
                 tuple((s.id, s.title) for s in note.top_level() if s.kind != "header"))


# -- comparing -----------------------------------------------------------------------------
@dataclass
class _Match:
    """How the current entries line up with the recorded ones."""

    positions: dict[str, int]  # recorded entry id -> index among the current entries
    renamed: dict[str, int]  # missing recorded id -> index of the entry now in its place
    last_present: int  # index of the last current entry that is recorded (-1: none)


def _match(record: NoteRecord, current: list[Section]) -> _Match:
    recorded = {r.entry for r in record.entries}
    positions = {e.id: i for i, e in enumerate(current) if e.id in recorded}
    unrecorded = [i for i, e in enumerate(current) if e.id not in recorded]
    renamed: dict[str, int] = {}
    entries = record.entries
    for n, rec in enumerate(entries):
        if rec.entry in positions:
            continue
        low = max((positions[r.entry] for r in entries[:n] if r.entry in positions),
                  default=-1)
        high = min((positions[r.entry] for r in entries[n + 1:] if r.entry in positions),
                   default=len(current))
        spot = next((i for i in unrecorded if low < i < high and i not in renamed.values()
                     and _same_entry(rec, current[i])), None)
        if spot is not None:
            renamed[rec.entry] = spot
    return _Match(positions, renamed, max(positions.values(), default=-1))


_WORD = re.compile(r"\w+")


def _same_entry(recorded: Recorded, entry: Section) -> bool:
    """An unrecorded entry in the place of a missing recorded one is that entry edited
    (retitled, redated, its text corrected) when it keeps at least half of its body lines,
    or, for a title-only entry, its day and half of its title's words; otherwise it is
    another entry (an editor's stale save dropped the recorded one and added its own)."""
    old, new = _body_lines(recorded.text), _body_lines(entry.text)
    if old or new:
        return len(old & new) * 2 >= len(old | new)
    if (entry.date or "")[:10] != recorded.date[:10]:
        return False
    old_words = set(_WORD.findall(split_lines(lf(recorded.text))[0].lower()))
    new_words = set(_WORD.findall(split_lines(lf(entry.text))[0].lower()))
    return len(old_words & new_words) * 2 >= len(old_words | new_words)


def _body_lines(text: str) -> set[str]:
    return {line.strip() for line in split_lines(lf(text))[1:] if line.strip()}


def placed(record: NoteRecord, current: list[Section]) -> dict[str, int]:
    """Recorded entry id -> index of the current entry that is it (by id, or edited in its
    place); recorded entries missing from ``current`` are not in it."""
    match = _match(record, current)
    return {**match.positions, **match.renamed}


def drifts(record: NoteRecord, note: Note | None) -> list[Drift]:
    """Every way the note's history departs from the record (empty: it only grew)."""
    if note is None:
        return [Drift(record.note, r.entry, "note-removed", 1, "the note's file is gone", r)
                for r in record.entries]
    current = note.entries
    match = _match(record, current)
    out: list[Drift] = []
    for rec in record.entries:
        out.extend(_drift_of(record.note, rec, note, current, match))
    out.extend(_moved(record, current, match))
    taken = set(match.renamed.values()) | set(match.positions.values())
    for i, entry in enumerate(current):
        if i not in taken and i < match.last_present:
            out.append(Drift(record.note, entry.id, "inserted", entry.start + 1,
                             f"'{entry.title[:60]}' was added among the recorded entries, "
                             "not at the end", None))
    return sorted(out, key=lambda d: (d.line, d.entry))


def _drift_of(note_id: str, rec: Recorded, note: Note, current: list[Section],
              match: _Match) -> list[Drift]:
    if rec.entry in match.positions:
        entry = current[match.positions[rec.entry]]
        if same_text(rec, entry.text):
            return []
        return [Drift(note_id, rec.entry, "changed", entry.start + 1,
                      first_difference(rec.text, normalized(entry.text)), rec)]
    if rec.entry in match.renamed:
        entry = current[match.renamed[rec.entry]]
        return [Drift(note_id, rec.entry, "changed", entry.start + 1,
                      first_difference(rec.text, normalized(entry.text)), rec)]
    where = (note.history.start + 1) if note.history else 1
    detail = ("the entry is no longer in the history" if note.history else
              "the history section is gone (deleted or renamed)")
    return [Drift(note_id, rec.entry, "removed", where, detail, rec)]


def _moved(record: NoteRecord, current: list[Section], match: _Match) -> list[Drift]:
    """Recorded entries out of their recorded order: those outside the longest run that
    keeps it."""
    seq = {r.entry: r.seq for r in record.entries}
    placed = sorted(match.positions.items(), key=lambda item: item[1])
    keep = _longest_increasing([seq[entry] for entry, _ in placed])
    by_id = {r.entry: r for r in record.entries}
    return [Drift(record.note, entry, "moved", current[i].start + 1,
                  "the entry is no longer where it was in the history's order", by_id[entry])
            for n, (entry, i) in enumerate(placed) if n not in keep]


def _longest_increasing(values: list[int]) -> set[int]:
    """Indexes of one longest strictly increasing subsequence (patience sorting)."""
    import bisect

    tails: list[int] = []
    tail_at: list[int] = []
    back = [-1] * len(values)
    for i, value in enumerate(values):
        k = bisect.bisect_left(tails, value)
        if k == len(tails):
            tails.append(value)
            tail_at.append(i)
        else:
            tails[k], tail_at[k] = value, i
        back[i] = tail_at[k - 1] if k else -1
    keep: set[int] = set()
    i = tail_at[-1] if tail_at else -1
    while i != -1:
        keep.add(i)
        i = back[i]
    return keep


def first_difference(before: str, after: str) -> str:
    old, new = split_lines(lf(before)), split_lines(lf(after))
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"line {number} of the entry was {a.rstrip()[:60]!r}, now {b.rstrip()[:60]!r}"
    if len(old) > len(new):
        return (f"{len(old) - len(new)} line(s) removed at the end, from "
                f"{old[len(new)].rstrip()[:60]!r}")
    if len(new) > len(old):
        return f"{len(new) - len(old)} line(s) added at the end: {new[len(old)].rstrip()[:60]!r}"
    return "only its spacing changed"


def shape_losses(shape: Shape | None, note: Note) -> list[str]:
    """What the note lost of the shape the store last saw whole, in words."""
    if not note.text.strip():
        return ["everything (the file is empty)"]
    if shape is None:
        return []
    lost = []
    if shape.front_matter and not note.front_matter:
        lost.append("its front matter")
    now = shape_of(note)
    if shape.title_line and not now.title_line:
        lost.append("its title line")
    have = {sid for sid, _ in now.sections}
    lost += [f"its '{title or sid}' section" for sid, title in shape.sections if sid not in have]
    return lost


def mid_save_signs(record: NoteRecord, note: Note) -> list[str]:
    """What about this file looks like a save under way, in words (empty: it looks whole).
    A file that shows them and is still changing is waited for; one that stays so is a
    person's edit. Entries an editor's stale save dropped are not among them: every tool
    write puts those back (:func:`memory.state.history_merge.merged`)."""
    lost = shape_losses(record.shape, note)
    if cut_last_entry(note):
        lost.append(f"the end of its last entry's heading (line {note.entries[-1].start + 1})")
    return lost


def cut_last_entry(note: Note) -> bool:
    """The last history entry's heading does not parse as a dated one (``### 2026-12``):
    a file cut while it is being written, at least until it is finished."""
    entries = note.entries
    return bool(entries) and entries[-1].date is None


# -- recording -----------------------------------------------------------------------------
def observation(record: NoteRecord, note: Note, settled: bool = True) -> Change:
    """What to record of a note just read: its new entries at the end of the history, and,
    when nothing was lost, its gaps, history lines and shape. From a file that may be
    mid-save (not ``settled``), the last entry is not recorded: only it can be half
    written; nor ever a last entry whose heading is cut."""
    change = Change(record.note)
    if not note.text.strip():
        return change  # an empty file (an editor mid-save?) teaches nothing
    current = note.entries
    if cut_last_entry(note) or not settled:
        current = current[:-1]
    match = _match(record, current)
    taken = set(match.renamed.values())
    next_seq = max((r.seq for r in record.entries), default=0) + 1
    for i, entry in enumerate(current):
        if i > match.last_present and i not in taken and entry.id not in match.positions:
            core, gap = core_and_gap(entry.text)
            change.new_entries.append(Recorded(record.note, entry.id, next_seq,
                                               entry_hash(entry.text), core, gap,
                                               entry.date or "", 0.0))
            next_seq += 1
    if not shape_losses(record.shape, note):
        change.shape = shape_of(note)
    if note.history is not None and not drifts(record, note) and settled \
            and not cut_last_entry(note):
        change.history = history_record(note)
        change.gaps = {e.id: core_and_gap(e.text)[1] for e in current}
    return change


def new_last_entry(record: NoteRecord, note: Note) -> bool:
    """Whether recording this note would record its last entry for the first time (then
    the caller checks the file is not mid-save)."""
    entries = note.entries
    return bool(entries) and all(r.entry != entries[-1].id for r in record.entries)


def first_sight(note_id: str, note: Note) -> Change:
    """Everything about a note, as if the ledger had never seen it (``--accept``)."""
    change = observation(NoteRecord(note_id), note)
    change.replace_all = True
    return change


def history_record(note: Note) -> HistoryRecord:
    history = note.history
    assert history is not None
    lines = split_lines(note.text)
    first = note.entries[0].start if note.entries else history.end
    top = note.top_level()
    index = next(i for i, s in enumerate(top) if s.kind == "history")
    after = top[index - 1].id if index > 0 else ""
    return HistoryRecord("".join(lines[history.start:first]), after)
