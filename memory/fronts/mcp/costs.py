"""What the MCP server costs a client: the tool catalog and the ladder's typical answers, in
tokens, against the committed budget (``tool_budget.json``; ``notes tokens``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastmcp import FastMCP

from memory.api import Notes
from memory.config import Config
from memory.errors import NotesError
from memory.fronts import render
from memory.fronts.mcp.server import create_server
from memory.fronts.mcp.tools import INSTRUCTIONS, READ_TOOLS

log = logging.getLogger("notes.mcp")


async def catalog(mcp: FastMCP) -> list[dict[str, Any]]:
    """The ``tools/list`` payload as a client receives it, one dict per tool."""
    from fastmcp import Client

    async with Client(mcp) as client:
        raw = await client.list_tools_mcp()
    payload = raw.model_dump(mode="json", by_alias=True, exclude_none=True)
    return list(payload["tools"])


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


TYPICAL_QUERY = "cómo hago rollback de un despliegue en producción"


def measure_costs(config: Config, questions: Path | None = None) -> dict[str, Any]:
    """cl100k tokens of each tool in ``tools/list`` (compact JSON, as a client receives it),
    the totals, and a typical answer of each rung on this store; with ``questions`` (a
    bench's questions.jsonl about this store), the framing of ``recall`` and
    ``read_section`` over them (:mod:`memory.services.framing`)."""
    import asyncio

    notes = Notes(dataclasses.replace(config, usage_log=False),
                  notify=lambda message: log.warning("%s", message))
    try:
        tools = asyncio.run(catalog(create_server(config, notes=notes)))
        count = notes.count_tokens
        per_tool = {t["name"]: count(compact_json(t)) for t in tools}
        per_tool["instructions"] = count(INSTRUCTIONS)  # sent once per session, like the catalog
        answers, read = _typical_answers(notes, count)
        framing: dict[str, Any] = {}
        if questions is not None:
            from memory.services.framing import measure_framing

            framing = {name: dataclasses.asdict(f) | {"share": round(f.share, 4)}
                       for name, f in measure_framing(notes, questions).items()}
    finally:
        notes.close()
    return {"tools": per_tool, "catalog_total": sum(per_tool.values()),
            "read_tools_total": sum(per_tool[n] for n in READ_TOOLS if n in per_tool),
            "answers": answers, "query": TYPICAL_QUERY, "read": read,
            "framing": framing, "questions": str(questions) if questions else None}


def _typical_answers(notes: Notes, count: Callable[[str], int]
                     ) -> tuple[dict[str, int], str | None]:
    """The cost of each rung's answer to :data:`TYPICAL_QUERY`, and the section read (on a
    store where no note matches it, the store's first note's best section or state)."""
    suggested = notes.suggest(TYPICAL_QUERY)
    answers = {"suggest": count(render.suggestions(suggested))}
    # the question's best note; on a store where it matches nothing, the store's first note
    top = suggested.hits[0].note if suggested.hits else next(iter(notes.note_ids()), None)
    if top is None:
        return answers, "nothing (the store has no notes)"
    mapped = notes.section_map(top, TYPICAL_QUERY)
    ids = [row.id for row in mapped.rows]
    section = mapped.best[0] if mapped.best else "state" if "state" in ids else ids[0]
    answers["section_map"] = count(render.section_map(mapped))
    try:
        answers["read_section"] = count(render.section_text(notes.read_section(top, section)))
    except NotesError:  # a note with no state and no best section: nothing typical to read
        return answers, None
    return answers, f"{top}#{section}"


def over_budget(costs: dict[str, Any], budget: dict[str, Any]) -> list[str]:
    """Every figure above its budget, as 'name: cost > budget'."""
    problems = []
    pairs = [("catalog_total", costs["catalog_total"], budget["catalog_total"]),
             ("read_tools_total", costs["read_tools_total"], budget["read_tools_total"])]
    pairs += [(f"tool {n}", c, budget["tools"].get(n, 0)) for n, c in costs["tools"].items()]
    pairs += [(f"answer {n}", c, budget["answers"].get(n, 0))
              for n, c in costs["answers"].items()]
    for name, cost, limit in pairs:
        if cost > limit:
            problems.append(f"{name}: {cost} > {limit}")
    for name, measured in costs.get("framing", {}).items():
        limit = budget.get("framing", {}).get(name, 0.0)
        if measured["share"] > limit:
            problems.append(f"framing {name}: {measured['share']:.1%} > {limit:.0%}")
    return problems
