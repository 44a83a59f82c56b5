"""The rungs' answers as a model reads them: compact pipe tables with a header row, section
texts as the notes hold them, and ``recall``'s groups under short labels. A cut list starts
with a line saying what was cut and how to narrow.

They live beside the rungs because their size is part of what a rung costs: the usage log
counts these tokens, and ``recall`` budgets its labels with the same :func:`recall_label` that
heads each of its groups. *Framing* is every token of an answer that is not the notes' own
text (labels, the last line); :func:`framing` measures it (docs/mcp.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from memory.model.timeexpr import compact_day

if TYPE_CHECKING:
    from memory.retrieval.recall import Recalled
    from memory.retrieval.results import SectionMap, SectionText, Suggestions

TOKEN_NOTE = "tokens are cl100k estimates"


def framing(answer: str, note_text: str, count: Callable[[str], int]) -> int:
    """The tokens of ``answer`` that are not ``note_text`` (the notes' lines it shows, in
    order): its labels, headers, separators and last line."""
    return max(0, count(answer) - count(note_text))


def label(note: str, ref: str, *parts: str | None) -> str:
    """The head of a section's text: ``[note#ref · part · part]``, parts left out when empty."""
    where = f"{note}#{ref}" if ref else note
    shown = [p for p in parts if p]
    return f"[{where}" + "".join(f" · {p}" for p in shown) + "]\n"


def table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = [" | ".join(header)]
    lines.extend(" | ".join(_cell(v) for v in row) for row in rows)
    return "\n".join(lines)


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, list | tuple):
        value = " ".join(str(v) for v in value)
    return " ".join(str(value).split()).replace("|", "\\|")


def suggestions(result: Suggestions) -> str:
    if not result.hits:
        return (f"no note matches {result.query!r}; try other words (Spanish or English), "
                "or run `notes list`")
    head = []
    if result.hidden:
        head.append(f"{len(result.hits)} shown, {result.hidden} hidden: raise the limit or add "
                    "words to the query")
    rows = [(h.note, h.title, h.score, f"{h.state_tokens}/{h.tokens}", h.matched)
            for h in result.hits]
    head.append(table(("note", "title", "score", "state/total tokens", "matched"), rows))
    return "\n".join(head)


def section_map(result: SectionMap) -> str:
    with_score = result.query is not None
    header = ["#", "id", "kind", "date", "tokens"] + (["match"] if with_score else [])
    rows: list[list[object]] = []
    for row in result.rows:
        cells: list[object] = [row.pos, row.id, row.kind, row.date, row.tokens]
        if with_score:
            cells.append(f"{row.score:.1f}" if row.score else "")
        rows.append(cells)
        rows.extend(["", w.blocks.ref, "blocks", "", w.tokens, f"{w.score:.1f}"]
                    for w in row.zoom)
    lines = [f"{result.note} · {result.title} · {result.tokens} tokens in all ({TOKEN_NOTE})",
             table(header, rows)]
    if result.omitted is not None:
        gone = result.omitted
        span = f" ({gone.first}..{gone.last})" if gone.first else ""
        lines.append(f"{gone.entries} other entries{span}, {gone.tokens} tokens, not shown: "
                     "map without a query, or read a date range")
    if result.dates:
        lines.append("dates understood: " + ", ".join(result.dates))
    if with_score:
        lines.append(_best_line(result))
    return "\n".join(lines)


def _best_line(result: SectionMap) -> str:
    scored = {r.id: r for r in result.rows if r.score}
    picks = [scored[i] for i in result.best if i in scored]
    if not picks:
        return "no section matches the query; read the state, or try other words"
    shown = ", ".join(f"{r.id} ({r.tokens} tokens" + (f"; zoom {r.zoom[0].blocks.ref}, "
                                                     f"{r.zoom[0].tokens} tokens" if r.zoom
                                                     else "") + ")" for r in picks)
    if result.clear or len(picks) < 2:
        return f"best match: {shown}"
    return f"no clear winner, the two best: {shown}"


def section_text(result: SectionText) -> str:
    """The part read, as the note holds it (from its heading line): the call names the note
    and the part, and the text says the rest, so no label is added (an empty part says so
    under one)."""
    text = result.text.rstrip()
    return text or label(result.note, result.section, result.kind, "empty").rstrip("\n")


def recall_label(note: str, ref: str, date: str | None, first: bool) -> str:
    """A ``recall`` group's label: ``[note#ref]`` for a note's first group, ``[#ref]`` for
    its next ones; the day (``20260622``, as ``ref`` writes it) is added only when ``ref``
    does not start with it (an entry's short name is its day)."""
    day = (date or "")[:10]
    when = f" {compact_day(day)}" if day and not ref.startswith((day, compact_day(day))) \
        else ""
    return f"[{note if first else ''}#{ref}{when}]\n"


def recalled(result: Recalled) -> str:
    if not result.groups:
        return (f"nothing matches {result.query!r}; try other words (Spanish or English), or "
                "run `notes list`")
    body = "".join(g.text for g in result.groups)
    if not result.left_out:
        return body + "nothing else matched"
    return body + f"{result.left_out} more blocks"  # 3 tokens; "left out 218 blocks" is 5


