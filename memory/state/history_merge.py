"""Putting recorded history entries back into a note. Pure functions, no I/O.

- :func:`merged`: a three-way merge, the ledger as the common base, made before every tool
  write: recorded entries that the file lost (an editor saved a stale buffer over them) go
  back where the record has them; everything else in the file, a person's edits included,
  stays as it is.
- :func:`restored` (``notes check --restore``): the recorded history in place of the current
  one, byte for byte, and the texts that restoring took out (saved by the caller).

Both write in the note's own line ending, and both are checked by re-parsing their result
(:func:`restore_problem`, :func:`merge_problem`): a result that would not read back as meant
is refused, never written.
"""

from __future__ import annotations

from memory.model.edit import newline_of
from memory.model.note import Note, Section
from memory.model.text import split_lines
from memory.state.history_records import drifts, lf, normalized, placed, same_text
from memory.state.ledger import NoteRecord, Recorded

DEFAULT_HEADING = "## History\n"


def _in(nl: str, text: str) -> str:
    """``text`` with its line endings made ``nl``."""
    flat = lf(text)
    return flat if nl == "\n" else flat.replace("\n", nl)


def _whole_lines(text: str, nl: str) -> list[str]:
    lines = split_lines(text)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += nl
    return lines


def _entry_block(recorded: Recorded, nl: str, followed: bool) -> str:
    """A recorded entry's text and the blank lines that followed it, every line ended (a
    text recorded without its last line break would glue the next heading to it)."""
    text = _in(nl, recorded.text)
    if not text.endswith(nl):
        text += nl
    gap = _in(nl, recorded.gap)
    return text + (gap if gap or not followed else nl)


def recorded_history(record: NoteRecord, nl: str = "\n") -> str:
    """The history section as recorded: its lines, then each entry and its gap."""
    heading = _in(nl, record.history.heading if record.history else DEFAULT_HEADING)
    entries = record.entries
    return heading + "".join(_entry_block(r, nl, i + 1 < len(entries))
                             for i, r in enumerate(entries))


# -- the merge of a tool write ---------------------------------------------------------
def missing(record: NoteRecord, note: Note) -> list[Recorded]:
    """Recorded entries the note no longer holds (neither as they were nor edited)."""
    where = placed(record, note.entries)
    return [r for r in record.entries if r.entry not in where]


def merged(record: NoteRecord, note: Note) -> tuple[str, list[str]]:
    """The note's text with every recorded entry it lost put back in its recorded place
    (after the recorded entry before it that is still there), and the ids put back. A
    history that is gone as a whole comes back where it was. Nothing else changes."""
    lost = missing(record, note)
    if not lost:
        return note.text, []
    if note.history is None:
        return restored(record, note)[0], [r.entry for r in lost]
    nl = newline_of(note.text)
    lines = _whole_lines(note.text, nl)
    spots: dict[int, list[Recorded]] = {}
    for recorded in lost:
        spots.setdefault(_spot(record, note, recorded), []).append(recorded)
    out, done = [], 0
    for at in sorted(spots):
        out.append("".join(lines[done:at]))
        before = lines[at - 1] if at > 0 else nl
        block = "".join(_entry_block(r, nl, True) for r in spots[at])
        if before.strip():
            block = nl + block
        if at >= len(lines):
            block = block.rstrip("\r\n") + nl
        out.append(block)
        done = at
    out.append("".join(lines[done:]))
    return "".join(out), [r.entry for r in lost]


def _spot(record: NoteRecord, note: Note, recorded: Recorded) -> int:
    """The line where a lost entry goes back: after the nearest recorded entry before it
    still in the note, else before the nearest one after it, else at the history's end."""
    current = note.entries
    where = placed(record, current)
    before = [where[r.entry] for r in record.entries if r.seq < recorded.seq
              and r.entry in where]
    if before:
        return current[max(before)].end
    after = [where[r.entry] for r in record.entries if r.seq > recorded.seq
             and r.entry in where]
    if after:
        return current[min(after)].start
    history = note.history
    assert history is not None
    return history.end


def merge_problem(record: NoteRecord, before: Note, after: Note) -> str:
    """Why the merged note is not what the merge meant (empty: it is): every recorded
    entry back, and every entry the note held still there, unchanged."""
    if missing(record, after):
        return "a recorded entry could not be put back"
    kept = [lf(e.text.rstrip()) for e in before.entries]
    now = [lf(e.text.rstrip()) for e in after.entries]
    rest = iter(now)
    if not all(any(text == other for other in rest) for text in kept):
        return "an entry of the note would change"
    return ""


# -- restoring -----------------------------------------------------------------------------
def restored(record: NoteRecord, note: Note) -> tuple[str, list[str]]:
    """The note's text with the recorded history in place of the current one, and the texts
    taken out (entries inserted or changed by hand, a renamed history's own text)."""
    nl = newline_of(note.text)
    lines = _whole_lines(note.text, nl)
    target = note.history or _renamed_history(record, note)
    if target is not None:
        block = recorded_history(record, nl)
        old = "".join(lines[target.start:target.end])
        taken = _taken_out(record, note, old, block)
        return "".join(lines[:target.start]) + block + "".join(lines[target.end:]), taken
    at = _insertion_line(record, note, len(lines))
    before = "".join(lines[:at])
    if before and not before.endswith(nl + nl):
        before += nl
    block = recorded_history(record, nl)
    if at < len(lines) and not block.endswith(nl + nl):
        block += nl
    return before + block + "".join(lines[at:]), []


def restore_problem(record: NoteRecord, after: Note) -> str:
    """Why a restored note does not hold its recorded history as recorded (empty: it
    does): then nothing is written."""
    left = drifts(record, after)
    if left:
        first = left[0]
        return f"entry {first.entry} would still be {first.kind} ({first.detail})"
    return ""


def _renamed_history(record: NoteRecord, note: Note) -> Section | None:
    """A plain section holding recorded entries' heading lines: the history, renamed."""
    headings = {lf(split_lines(r.text)[0]) for r in record.entries if r.text}
    for section in note.top_level():
        if section.kind == "section" and headings & {lf(line) for line in
                                                      split_lines(section.text)}:
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
    if lf(old) == lf(block):
        return []
    if note.history is None:  # a renamed history: keep its own text whole
        return [old]
    by_id = {r.entry: r for r in record.entries}
    return [e.text for e in note.entries if not (e.id in by_id and same_text(by_id[e.id], e.text))
            and normalized(lf(e.text)) not in {normalized(lf(r.text)) for r in record.entries}]
