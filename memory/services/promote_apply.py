"""Applying promotions, taking them back, and demoting state lines.

- :func:`apply_promotion` adds one entry's line at the end of the note's state, with its
  back-reference ``(history: <entry id>)``: one line inserted, nothing else of the file moves
  (the history stays byte-identical), and applying the same entry again changes nothing.
- :func:`apply_all` applies every candidate of a report whose precision estimate reaches a
  threshold (``notes promote --apply-all --min-precision P``).
- :func:`undo_promotion` takes a line back, found by its back-reference. When the note is
  exactly as the promotion left it, the file is restored byte for byte (from the change kept
  in ``<state dir>/promotions.jsonl``); when it was edited since, only the promoted line goes
  and every other edit stays.
- :func:`demote_lines` moves state lines back into the history, as a dated entry.

Every write goes through :class:`memory.api.Notes`: under the note's lock, merged with the
history ledger, and replaced only if no editor saved the file meanwhile.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.api import Notes
from memory.errors import InvalidArgument, NotesError
from memory.model.edit import newline_of, refuse_control_characters, with_state
from memory.model.note import Note, Section
from memory.model.text import split_lines
from memory.services.promote import PromotionReport
from memory.services.promote_lines import DEFAULT_RULE, back_reference, proposed_line
from memory.state.usage import DAY_S

JOURNAL = "promotions.jsonl"


@dataclass(frozen=True)
class Applied:
    note: str
    entry: str
    line: str
    changed: bool
    before: str
    after: str


# -- applying -----------------------------------------------------------------------------
def apply_promotion(notes: Notes, note_id: str, entry_ref: str, line: str | None = None,
                    dry_run: bool = False, days: int = 30, rule: str = DEFAULT_RULE
                    ) -> Applied:
    """Add the entry's line to the state (once): ``line`` when given, else the line ``rule``
    proposes from the questions of the last ``days`` days that read the entry."""
    loaded = notes.load_note(note_id)
    entry = notes.find_section(loaded, entry_ref)
    if entry.kind != "entry":
        raise InvalidArgument(f"{entry.id!r} is a {entry.kind}, not a history entry; give an "
                              "entry id (see `notes map " + loaded.note_id + "`)")
    if line is None:
        text = proposed_line(entry, _questions_for(notes, loaded.note_id, entry, days), rule,
                             notes.stem_terms)
    else:
        text = written_line(entry, line)
    return apply_line(notes, loaded.note_id, entry.id, text, dry_run)


def written_line(entry: Section, line: str) -> str:
    """A line the user gave, as a state line with the entry's back-reference."""
    clean = " ".join(line.split()).removeprefix("- ")
    if not clean:
        raise InvalidArgument("the line is empty; give the text to put in the state")
    return f"- {clean} {back_reference(entry)}"


def apply_line(notes: Notes, note_id: str, entry_id: str, text: str,
               dry_run: bool = False) -> Applied:
    """Insert ``text`` (a state line holding the entry's back-reference) at the end of the
    note's state, unless a state line already refers to the entry."""
    return apply_lines(notes, [(note_id, entry_id, text)], dry_run, strict=True)[0]


def apply_lines(notes: Notes, lines: list[tuple[str, str, str]], dry_run: bool = False,
                strict: bool = False) -> list[Applied]:
    """Insert each (note, entry, line), in order, as :func:`apply_line` would, with one write
    per note; each promotion is journaled on its own (undoing the last of a note gives back
    the exact bytes). An entry gone from its note is skipped (unchanged), or with ``strict``
    an error."""
    by_note: dict[str, list[tuple[str, str]]] = {}
    for note_id, entry_id, text in lines:
        refuse_control_characters(text, "the state line")
        by_note.setdefault(notes.note_id_of(note_id), []).append((entry_id, text))
    done: list[Applied] = []
    for note_id, pairs in by_note.items():
        done.extend(_apply_to_note(notes, note_id, pairs, dry_run, strict))
    return done


Step = tuple[str, str, str, str]  # entry, line, the note's text before it, after it


def _steps(note: Note, note_id: str, pairs: list[tuple[str, str]], strict: bool
           ) -> tuple[list[Step], Note]:
    """Each pair's step, and the note after the last one, parsed."""
    steps: list[Step] = []
    text, current = note.text, note
    for entry_id, line in pairs:
        fresh = current.section(entry_id)
        if fresh is None or fresh.kind != "entry":
            if strict:
                raise InvalidArgument(f"entry {entry_id!r} is no longer in {note_id!r}; run "
                                      f"`notes map {note_id}` and retry")
            steps.append((entry_id, line, text, text))
            continue
        after = text if _promoted_in(current, entry_id) else with_promoted(current, line)
        steps.append((entry_id, line, text, after))
        if after != text:
            text, current = after, current.reparsed(after)
    return steps, current


def _apply_to_note(notes: Notes, note_id: str, pairs: list[tuple[str, str]], dry_run: bool,
                   strict: bool) -> list[Applied]:
    loaded = notes.load_note(note_id)
    steps, _ = _steps(loaded.note, note_id, pairs, strict)
    if not dry_run and any(before != after for _, _, before, after in steps):
        def promoted(note: Note) -> Note:
            steps[:], after = _steps(note, note_id, pairs, strict)  # as under the lock
            return after

        _write(notes, note_id, promoted)
        for entry_id, line, before, after in steps:
            if after != before:
                _journal(notes, {"op": "apply", "note": note_id, "entry": entry_id,
                                 "line": line, **change_of(before, after)})
    return [Applied(note_id, entry_id, line, after != before, before, after)
            for entry_id, line, before, after in steps]


def apply_all(notes: Notes, report: PromotionReport, min_precision: float,
              dry_run: bool = False) -> list[Applied]:
    """Apply (or with ``dry_run`` show) every candidate of ``report`` whose precision
    estimate is at least ``min_precision``, each with the line the report proposed."""
    return apply_lines(notes, [(c.note, c.entry, c.proposed) for c in report.candidates
                               if c.precision >= min_precision], dry_run)


def with_promoted(note: Note, line: str) -> str:
    """The note's text with ``line`` inserted after the last non-blank line of its state
    (the state made when there is none); every other line as it was."""
    if note.state is None:
        return with_state(note, line)
    state = note.state
    nl = newline_of(note.text)
    lines = split_lines(note.text)
    at = state.start + state.heading_lines
    for index in range(state.end - 1, at - 1, -1):
        if lines[index].strip():
            at = index + 1
            break
    if at > 0 and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += nl  # the state's last line ended the file: the new one does now
        lines.insert(at, line)
    else:
        lines.insert(at, line + nl)
    text = "".join(lines)
    _check_only_state_changed(note, text, line)
    return text


def _check_only_state_changed(before: Note, text: str, line: str) -> None:
    after = before.reparsed(text)
    rest = [(s.id, s.text) for s in before.sections if s.parent is None
            and s.kind not in ("state", "header")]
    now = [(s.id, s.text) for s in after.sections if s.parent is None
           and s.kind not in ("state", "header")]
    if rest != now or after.state is None or line not in after.state.text:
        raise InvalidArgument("the note's state ends inside an unclosed code fence or HTML "
                              "comment, so a line added there would not be a state line; "
                              "close it and retry")


def _promoted_in(note: Note, entry_id: str) -> bool:
    return note.state is not None and back_reference(entry_id) in note.state.text


def _questions_for(notes: Notes, note_id: str, entry: Section, days: int) -> list[str]:
    since = time.time() - days * DAY_S
    return [c.query for c in notes.usage_calls(since) if c.note == note_id
            and c.section == entry.id and c.query]


def _write(notes: Notes, note_id: str, edit: Callable[[Note], Note | str]) -> str:
    """Write the note through the store's one write path (its lock, the history ledger's
    merge, the replace-if-unchanged): an edit of the whole text, so that a promotion is one
    inserted line and its undo gives back the exact bytes (``update_state`` rewrites the
    state's blank lines). Returns the text written."""
    return notes.commits.commit(note_id, edit).loaded.note.text


# -- the journal: what each promotion changed, to take it back exactly ------------------------
def change_of(before: str, after: str) -> dict[str, Any]:
    """How ``after`` differs from ``before``: the common head and tail lengths and the
    middle of ``before``; with the digest of ``after`` (an undo restores only that text)."""
    head = 0
    limit = min(len(before), len(after))
    while head < limit and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return {"head": head, "tail": tail, "was": before[head:len(before) - tail],
            "after_sha256": digest(after)}


def restored(text: str, record: dict[str, Any]) -> str | None:
    """``text`` as it was before the change ``record`` holds, when ``text`` is exactly what
    the change left (None otherwise)."""
    if digest(text) != record.get("after_sha256"):
        return None
    head, tail, was = record.get("head"), record.get("tail"), record.get("was")
    if not isinstance(head, int) or not isinstance(tail, int) or not isinstance(was, str):
        return None
    return text[:head] + was + text[len(text) - tail:]


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _journal(notes: Notes, record: dict[str, Any]) -> None:
    """Append one record to the journal; a journal that cannot be written only costs the
    exact undo (the line can still be taken back by its back-reference)."""
    record = {"at": dt.datetime.now().astimezone().isoformat(timespec="seconds"), **record}
    try:
        notes.config.state_dir.mkdir(parents=True, exist_ok=True)
        with open(notes.config.state_dir / JOURNAL, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    except OSError:
        pass


def journal_records(state_dir: Path) -> list[dict[str, Any]]:
    """The journal's records, oldest first (lines that are not JSON objects skipped)."""
    try:
        raw = (state_dir / JOURNAL).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in raw.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("note"), str) \
                and isinstance(record.get("entry"), str):
            out.append(record)
    return out


# -- undoing ------------------------------------------------------------------------------
def undo_promotion(notes: Notes, ref: str, dry_run: bool = False) -> Applied:
    """Take back the promoted line of ``ref`` (``ENTRY`` or ``NOTE#ENTRY``): the exact
    bytes before the promotion when the note is as it left it, else the note without that
    line (the user's other edits kept)."""
    note_id, entry_id = _locate(notes, ref)
    record = _last_apply(notes, note_id, entry_id)
    loaded = notes.load_note(note_id)
    before = loaded.note.text
    if dry_run:
        return Applied(note_id, entry_id, _promoted_lines(loaded.note, entry_id)[0], True,
                       before, _undone(loaded.note, entry_id, record))
    seen: dict[str, str] = {}

    def undone(note: Note) -> str:
        seen["before"] = note.text
        return _undone(note, entry_id, record)

    after = _write(notes, note_id, undone)
    _journal(notes, {"op": "undo", "note": note_id, "entry": entry_id})
    line = next(iter(_promoted_lines(loaded.note, entry_id)), "")
    return Applied(note_id, entry_id, line, True, seen["before"], after)


def _undone(note: Note, entry_id: str, record: dict[str, Any] | None) -> str:
    exact = restored(note.text, record) if record else None
    if exact is not None:
        return exact
    found = _promoted_lines(note, entry_id)
    if not found or note.state is None:
        raise InvalidArgument(f"no state line refers to {entry_id!r} any more (it was taken "
                              "out already); nothing to undo")
    lines = split_lines(note.text)
    for index in range(note.state.end - 1, note.state.start, -1):
        if lines[index].strip() in found:
            ended = lines[index].endswith(("\n", "\r"))
            del lines[index]
            if not ended and index == len(lines) and index > 0:
                lines[index - 1] = lines[index - 1].rstrip("\r\n")
    return "".join(lines)


def _promoted_lines(note: Note, entry_id: str) -> list[str]:
    """The state's lines (trimmed) that end with the entry's back-reference."""
    if note.state is None:
        return []
    reference = back_reference(entry_id)
    return [line.strip() for line in split_lines(note.state.text)
            if line.strip().endswith(reference)]


def _last_apply(notes: Notes, note_id: str, entry_id: str) -> dict[str, Any] | None:
    last = None
    for record in journal_records(notes.config.state_dir):
        if record["note"] == note_id and record["entry"] == entry_id:
            last = record if record.get("op") == "apply" else None
    return last


def _locate(notes: Notes, ref: str) -> tuple[str, str]:
    """(note, entry) of ``NOTE#ENTRY``, or of ``ENTRY`` when exactly one state refers to it."""
    note_ref, _, entry_id = ref.strip().rpartition("#")
    if not entry_id:
        raise InvalidArgument("give the entry id of a promoted line (the one in its "
                              "`(history: …)`), or NOTE#ENTRY")
    if note_ref:
        return notes.note_id_of(note_ref), entry_id
    holders = _notes_with_line(notes, entry_id)
    if len(holders) == 1:
        return holders[0], entry_id
    if not holders:
        raise InvalidArgument(f"no state line refers to {entry_id!r} (`(history: {entry_id})`); "
                              "check the id in the promoted line, or give NOTE#ENTRY")
    raise InvalidArgument(f"the states of {', '.join(holders)} all refer to {entry_id!r}; "
                          f"give NOTE#ENTRY, e.g. {holders[0]}#{entry_id}")


def _notes_with_line(notes: Notes, entry_id: str) -> list[str]:
    out = []
    for note_id in sorted(notes.note_ids()):
        try:
            note = notes.load_note(note_id).note
        except NotesError:
            continue
        if _promoted_lines(note, entry_id):
            out.append(note_id)
    return out


# -- demoting -----------------------------------------------------------------------------
def demote_lines(notes: Notes, note_id: str, lines: list[str], day: str | None = None,
                 title: str = "Moved from the state") -> int:
    """Move ``lines`` (trimmed state lines) out of the note's state into a new history entry
    dated ``day`` (today by default); the entry is written first, so a failure between the two
    writes loses nothing. Returns how many lines moved."""
    loaded = notes.load_note(note_id)
    state = loaded.note.state
    wanted = {line.strip() for line in lines}
    found = [line.strip() for line in split_lines(state.text)[1:]
             if line.strip() in wanted] if state else []
    if not found:
        return 0
    notes.append_history(note_id, title, "\n".join(found), day)

    def without(note: Note) -> str:
        body = split_lines(note.state.text)[1:] if note.state else []
        return "".join(line for line in body if line.strip() not in wanted)

    notes.update_state(note_id, without)
    return len(found)
