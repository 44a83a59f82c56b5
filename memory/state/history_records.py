"""What the ledger's records say about a note as it is now. Pure functions, no I/O.

- :func:`drifts`: recorded history entries that were changed, removed, moved or that had a
  new entry inserted before them; entries appended at the end are not drifts.
- :func:`shape_losses`: what the file lost of what the store last saw whole (front matter,
  title line, top-level sections). With the drifts, this is what a tool write refuses.
- :func:`observation`: what to record of a note just read (its new entries at the end; the
  gaps, history lines and shape when nothing was lost).
- :func:`restored`: the note's text with its history put back exactly as recorded, and the
  texts that restoring took out (saved by the caller, never dropped).
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


def entry_hash(text: str) -> str:
    return hashlib.sha256(normalized(text).encode("utf-8")).hexdigest()


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
        spot = next((i for i in unrecorded if low < i < high and i not in renamed.values()),
                    None)
        if spot is not None:
            renamed[rec.entry] = spot
    return _Match(positions, renamed, max(positions.values(), default=-1))


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
        if entry_hash(entry.text) == rec.hash:
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
    old, new = before.splitlines(), after.splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            return f"line {number} of the entry was {a[:60]!r}, now {b[:60]!r}"
    if len(old) > len(new):
        return f"{len(old) - len(new)} line(s) removed at the end, from {old[len(new)][:60]!r}"
    return f"{len(new) - len(old)} line(s) added at the end: {new[len(old)][:60]!r}"


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


def write_losses(record: NoteRecord, note: Note) -> list[str]:
    """Why a tool must not write over this note now (empty: it may)."""
    lost = shape_losses(record.shape, note)
    found = drifts(record, note)
    if found:
        first = found[0]
        lost.append(f"{len(found)} history entr{'y' if len(found) == 1 else 'ies'} "
                    f"({first.kind}: {first.entry})")
    return lost


# -- recording -----------------------------------------------------------------------------
def observation(record: NoteRecord, note: Note) -> Change:
    """What to record of a note just read: its new entries at the end of the history, and,
    when nothing was lost, its gaps, history lines and shape."""
    change = Change(record.note)
    if not note.text.strip():
        return change  # an empty file (an editor mid-save?) teaches nothing
    current = note.entries
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
    if note.history is not None and not drifts(record, note):
        change.history = history_record(note)
        change.gaps = {e.id: core_and_gap(e.text)[1] for e in current}
    return change


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


# -- restoring ------------------------------------------------------------------------------
DEFAULT_HEADING = "## History\n"


def recorded_history(record: NoteRecord) -> str:
    """The history section exactly as recorded: its lines, then each entry and its gap."""
    heading = record.history.heading if record.history else DEFAULT_HEADING
    return heading + "".join(r.text + r.gap for r in record.entries)


def restored(record: NoteRecord, note: Note) -> tuple[str, list[str]]:
    """The note's text with the recorded history in place of the current one, and the texts
    taken out (entries inserted or changed by hand, a renamed history's own text)."""
    lines = split_lines(note.text)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    block = recorded_history(record)
    target = note.history or _renamed_history(record, note)
    if target is not None:
        old = "".join(lines[target.start:target.end])
        taken = _taken_out(record, note, old, block)
        return "".join(lines[:target.start]) + block + "".join(lines[target.end:]), taken
    at = _insertion_line(record, note, len(lines))
    before = "".join(lines[:at])
    if before and not before.endswith("\n\n") and at == len(lines):
        before += "\n"
    return before + block + "".join(lines[at:]), []


def _renamed_history(record: NoteRecord, note: Note) -> Section | None:
    """A plain section holding recorded entries' heading lines: the history, renamed."""
    headings = {split_lines(r.text)[0] for r in record.entries if r.text}
    for section in note.top_level():
        if section.kind == "section" and headings & set(split_lines(section.text)):
            return section
    return None


def _insertion_line(record: NoteRecord, note: Note, total: int) -> int:
    """Where a deleted history goes back: after the section it came after, if any."""
    top = note.top_level()
    after = record.history.after if record.history else "state"
    for section in top:
        if section.id == after:
            return section.end
    state = next((s for s in top if s.kind == "state"), None)
    return state.end if state is not None else total


def _taken_out(record: NoteRecord, note: Note, old: str, block: str) -> list[str]:
    if old == block:
        return []
    recorded = {normalized(r.text) for r in record.entries}
    taken = [e.text for e in note.entries if normalized(e.text) not in recorded]
    if note.history is None:  # a renamed history: keep its own text whole
        taken = [old]
    return taken
