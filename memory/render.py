"""Rendering results for people and models: compact pipe tables, or JSON.

Shared by the CLI (and its ``--json``) and the MCP server, so both print the same thing.
Tables have a header row; a cut list starts with a line saying what was cut and how to narrow.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from typing import Any

from .check import FileProblem
from .ladder import SectionMap, SectionText, Suggestions
from .recall import Recalled
from .results import NoteSummary, WriteResult

TOKEN_NOTE = "tokens are cl100k estimates"


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
    where = f"{result.note}#{result.section}" if result.section else result.note
    parts = [p for p in (result.kind, result.date, f"{result.tokens} tokens") if p]
    return f"[{where} · {' · '.join(parts)}]\n{result.text.rstrip()}"


def recalled(result: Recalled) -> str:
    if not result.groups:
        return (f"nothing matches {result.query!r}; try other words (Spanish or English), or "
                "run `notes list`")
    body = "".join(g.text for g in result.groups)
    last = f"{result.tokens} of {result.budget} tokens"
    if result.left_out:
        last += (f"; left out {result.left_out} matching blocks ({result.left_tokens} tokens); "
                 f"next: {result.next_ref} ({result.next_tokens} tokens)")
    else:
        last += "; nothing else matched"
    return body + last


def note_list(notes: list[NoteSummary]) -> str:
    if not notes:
        return "no notes yet; create one with `notes new NOTE --title T`"
    rows = [(n.note, n.title, n.tokens, n.entries, n.last_entry) for n in notes]
    total = sum(n.tokens for n in notes)
    return (f"{len(notes)} notes, {total} tokens in all\n"
            + table(("note", "title", "tokens", "entries", "last entry"), rows))


def write_result(result: WriteResult) -> str:
    verb = "created" if result.created else "wrote"
    done = f"{verb} {result.note}#{result.section} ({result.tokens} tokens)"
    return "\n".join([done, *(f"warning: {w}" for w in result.warnings)])


def problems(found: list[FileProblem]) -> str:
    if not found:
        return "no problems found"
    return "\n".join(str(p) for p in found)


def costs(measured: dict[str, Any], budget: dict[str, Any]) -> str:
    """`notes tokens`: the catalog per tool and the typical answers, against the budget."""
    rows: list[tuple[object, ...]] = [
        (f"tool {name}", cost, budget["tools"].get(name, ""))
        for name, cost in measured["tools"].items()]
    rows += [("catalog total", measured["catalog_total"], budget["catalog_total"]),
             ("read tools total", measured["read_tools_total"], budget["read_tools_total"])]
    rows += [(f"answer {name}", cost, budget["answers"].get(name, ""))
             for name, cost in measured["answers"].items()]
    status = "over budget: " + "; ".join(measured["over_budget"]) \
        if measured.get("over_budget") else "within budget"
    return (table(("what", "tokens", "budget"), rows) + f"\n{status} ({TOKEN_NOTE}; answers "
            f"for {measured['query']!r}, reading {measured['read']})")


def repairs(done: list[Any]) -> str:
    if not done:
        return "history matches the ledger: nothing to do"
    return table(("note", "entry", "was", "action"),
                 [(r.note, r.entry, r.kind, r.action) for r in done])


def as_json(value: Any) -> str:
    return json.dumps(_plain(value), ensure_ascii=False, indent=2)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if isinstance(value, Suggestions):
            data["hidden"] = value.hidden
        return data
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if hasattr(value, "__fspath__"):
        return str(value)
    return value
