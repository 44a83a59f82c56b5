"""The promotion report as Markdown (the nightly file) and the `--apply` diff."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from memory.retrieval.answers import table
from memory.services.promote import Candidate, PromotionReport, RoutingMiss
from memory.services.promote_apply import Applied
from memory.state.usage_rows import is_hashed


def markdown(report: PromotionReport) -> str:
    fronts = ", ".join(f"{name} {count}" for name, count in sorted(report.fronts.items()))
    parts = [
        f"# Promotion report, {report.generated[:10]}",
        "",
        f"Generated {report.generated} from the usage log: {report.calls} ladder calls in "
        f"{report.sessions} sessions over the last {report.days} days"
        + (f" ({fronts})." if fronts else "."),
        *_log_notes(report),
        f"Rules: a history entry read in at least {report.min_sessions} distinct sessions "
        f"within {report.days} days and not yet in the state is a candidate; a state line no "
        f"question matched in {report.demote_days} days may be demoted.",
        "",
        f"## Promotion candidates ({len(report.candidates)})",
        "",
    ]
    parts += [_candidate(c) for c in report.candidates] or ["None: no entry was read often "
                                                             "enough.", ""]
    parts += [f"## Demotion candidates ({len(report.demotions)})", ""]
    if report.demotions:
        rows = [(d.note, d.line, d.text, d.questions) for d in report.demotions]
        parts += [_md_table(("note", "line", "state line", "questions that reached the note"),
                            rows), ""]
    else:
        parts += ["None.", ""]
    parts += [f"## Routing misses ({len(report.misses)})", ""]
    parts += [_misses(report.misses), ""] if report.misses else ["None.", ""]
    return "\n".join(parts)


def _log_notes(report: PromotionReport) -> list[str]:
    """What the reader should know about the log itself: bad rows, damage, the query mode."""
    out = []
    if report.skipped:
        out.append(f"{report.skipped} rows of the log had bad values and were skipped.")
    if report.damaged:
        out.append(f"The log was damaged: it was moved to {report.damaged} and a new one "
                   "started; only the calls read before the damage are counted.")
    if report.queries == "hashed":
        out.append("Queries are stored hashed (NOTES_USAGE_QUERIES=hashed): questions are "
                   "counted, not shown, and only plain ones logged before can match state lines.")
    elif report.queries == "off":
        out.append("Queries are not stored (NOTES_USAGE_QUERIES=off): candidates count sessions "
                   "and reads; demotions need the queries of plain or earlier logging.")
    return out


def _question(query: str) -> str:
    if is_hashed(query):
        return "(hashed)"
    return repr(query) if query else "(no query logged)"


def _candidate(c: Candidate) -> str:
    asked = _question_list(c.questions) or "  - (read without a question)"
    later = _question_list(c.later) or "  - (none yet: one question reached it)"
    return (f"### {c.note} · {c.entry}\n\n"
            f"- Entry: {c.date} · {c.title}\n"
            f"- Read {c.reads} times; the read ended the search in {c.sessions} sessions\n"
            f"- Questions that reached it ({len(c.questions)}):\n{asked}\n"
            f"- Proposed state line:\n\n      {c.proposed}\n\n"
            f"- What it would have answered: the {len(c.later)} question"
            f"{'' if len(c.later) == 1 else 's'} that reached the entry after its first "
            f"read:\n{later}\n"
            f"- Cost: {c.line_tokens} tokens on every read of the state ({c.state_reads} "
            f"reads of it in the window: {c.line_tokens * c.state_reads:,} tokens)\n"
            f"- Precision estimate: {_pct(c.precision)} ({c.agreeing} of the questions came "
            f"for this line; k questions make k/(k+1))\n"
            f"- Apply: `notes promote --apply {c.note} {c.entry}` "
            f"(or `--line TEXT`; `--dry-run` shows the diff)\n")


def _question_list(questions: tuple[str, ...]) -> str:
    plain = [f"  - {q!r}" for q in questions if not is_hashed(q)]
    hashed = sum(1 for q in questions if is_hashed(q))
    return "\n".join(plain + ([f"  - (hashed) × {hashed}"] if hashed else []))


def _pct(share: float) -> str:
    return f"{100 * share:.0f} %"


def _misses(misses: tuple[RoutingMiss, ...]) -> str:
    rows = [(m.note, m.misses, m.sessions, "; ".join(_question(q) for q in m.queries[:5]),
             ", ".join(m.ranks[:5]), ", ".join(m.read_before[:5])) for m in misses]
    return _md_table(("note", "misses", "sessions", "queries that missed", "rank in suggestion",
                      "read before it"), rows)


def _md_table(header: tuple[str, ...], rows: Sequence[Sequence[object]]) -> str:
    text = table(header, rows).splitlines()
    body = [f"| {line} |" for line in text]
    return "\n".join([body[0], "|" + "---|" * len(header), *body[1:]])


def applied(result: Applied, dry_run: bool) -> str:
    if not result.changed:
        return f"unchanged: {result.note} already holds {result.entry} in its state"
    if dry_run:
        return diff(result, "after --apply")
    return f"promoted {result.note}#{result.entry} into the state:\n{result.line}"


def diff(result: Applied, after: str) -> str:
    return "".join(difflib.unified_diff(
        result.before.splitlines(keepends=True), result.after.splitlines(keepends=True),
        fromfile=f"{result.note} (now)", tofile=f"{result.note} ({after})"))


def applied_all(results: list[Applied], candidates: int, min_precision: float,
                dry_run: bool) -> str:
    """What ``--apply-all`` did (or, with ``--dry-run``, would do)."""
    changed = [r for r in results if r.changed]
    head = (f"{'would apply' if dry_run else 'applied'} {len(changed)} of {candidates} "
            f"candidates (precision estimate ≥ {_pct(min_precision)})")
    if dry_run:
        return "\n".join([head, *(diff(r, "after --apply-all") for r in changed)])
    lines = [f"- {r.note}: {r.line}" for r in changed]
    undo = ["", "Take one back with `notes promote --undo NOTE#ENTRY`."] if changed else []
    return "\n".join([head, *lines, *undo])


def undone(result: Applied, dry_run: bool) -> str:
    if dry_run:
        return diff(result, "after --undo")
    return f"took {result.note}#{result.entry} back out of the state:\n{result.line}"
