"""Rendering results for people and models: compact pipe tables, or JSON.

Shared by the CLI (and its ``--json``) and the MCP server, so both print the same thing.
The rungs' answers themselves (what a model reads, and pays for in tokens) are written by
:mod:`memory.retrieval.answers`; this module adds the rest: note lists, writes, problems,
costs, repairs, and JSON.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from memory.retrieval.answers import (
    TOKEN_NOTE,
    recalled,
    section_map,
    section_text,
    suggestions,
    table,
)

if TYPE_CHECKING:  # types only: `notes --help` and the writes do not load them (start-up)
    from memory.model.results import Managed, NoteSummary, WriteResult
    from memory.retrieval.semantic import Built
    from memory.state.check import FileProblem

__all__ = ["TOKEN_NOTE", "as_json", "costs", "embedded", "managed", "note_list", "problems",
           "recalled",
           "repairs", "section_map", "section_text", "suggestions", "table", "write_result"]


def note_list(notes: list[NoteSummary]) -> str:
    if not notes:
        return "no notes yet; create one with `notes new NOTE --title T`"
    total = sum(n.tokens for n in notes)
    head: tuple[str, ...] = ("note", "title", "tokens", "entries", "last entry")
    if any(n.project for n in notes):
        head = (*head, "project")
    rows = [(n.note, n.title, n.tokens, n.entries, n.last_entry,
             *([n.project or "-"] if len(head) > 5 else [])) for n in notes]
    return f"{len(notes)} notes, {total} tokens in all\n" + table(head, rows)


def managed(done: Managed) -> str:
    """`notes delete` and `notes move`: what was done, where the file is, and the next step."""
    return f"{done.action} {done.note}: {done.path}" + (f" ({done.detail})" if done.detail
                                                        else "")


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
    limits = budget.get("framing", {})
    rows += [(f"framing {name} ({f['answers']} answers; {f['over']} over "
              f"{f['limit']:.0%}, worst {f['worst']:.1%})", f"{f['share']:.1%}",
              f"{limits[name]:.0%}" if name in limits else "")
             for name, f in measured.get("framing", {}).items()]
    status = "over budget: " + "; ".join(measured["over_budget"]) \
        if measured.get("over_budget") else "within budget"
    framed = f"; framing over {measured['questions']}" if measured.get("questions") else ""
    read = f"reading {measured['read']}" if measured.get("read") else "no section to read"
    return (table(("what", "tokens", "budget"), rows) + f"\n{status} ({TOKEN_NOTE}; answers "
            f"for {measured['query']!r}, {read}{framed})")


def repairs(done: list[Any]) -> str:
    if not done:
        return "history matches the ledger: nothing to do"
    return table(("note", "entry", "was", "action"),
                 [(r.note, r.entry, r.kind, r.action) for r in done])


def embedded(built: Built, routing_on: bool) -> str:
    """What `notes embed` did, and whether suggest routes with the vectors."""
    skipped = f", {built.skipped} unreadable (see `notes check`)" if built.skipped else ""
    hint = ("suggest routes with them (NOTES_SEMANTIC is on)" if routing_on else
            "set NOTES_SEMANTIC=1 for suggest to route with them")
    return (f"embedded {built.embedded} notes ({built.lines} lines) in {built.seconds} s; "
            f"{built.kept} already embedded, {built.removed} removed{skipped}. {hint}")


def as_json(value: Any) -> str:
    return json.dumps(_plain(value), ensure_ascii=False, indent=2)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        from memory.retrieval.results import Suggestions  # loaded by who made one (start-up)

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
