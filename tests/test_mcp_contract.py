"""The tool contract: names, parameters, annotations, and the token budget of the catalog."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from conftest import NOTES_BIN
from memory import load_config
from memory.fronts.mcp.costs import catalog, measure_costs, over_budget
from memory.fronts.mcp.server import create_server

ROOT = Path(__file__).resolve().parent.parent
BUDGET_FILE = ROOT / "memory/fronts/mcp/tool_budget.json"
FOLLOWUPS = ROOT / "benchmarks/followups/questions.jsonl"
BUDGET = json.loads(BUDGET_FILE.read_text())
READ_ONLY = (True, None, None)  # the other hints only apply to tools that write
EXPECTED = {
    "suggest": ({"query": "string", "limit": "integer", "context": "string",
                 "all_projects": "boolean"}, ["query"],
                READ_ONLY),
    "section_map": ({"note": "string", "query": "string", "context": "string"}, ["note"],
                    READ_ONLY),
    "read_section": ({"note": "string", "section": "string"}, ["note", "section"],
                     READ_ONLY),
    "recall": ({"query": "string", "budget": "integer", "context": "string",
                "all_projects": "boolean"}, ["query"], READ_ONLY),
    "create_note": ({"note": "string", "title": "string", "tags": "string"},
                    ["note", "title"], (False, False, False)),
    "write_state": ({"note": "string", "text": "string"}, ["note", "text"], (False, True, True)),
    "append_history": ({"note": "string", "title": "string", "text": "string",
                        "date": "string"}, ["note", "title", "text"], (False, False, False)),
}


def test_tool_names_parameters_and_annotations(store_dir: Path) -> None:
    tools = {t["name"]: t for t in asyncio.run(catalog(create_server(load_config(store_dir))))}
    assert set(tools) == set(EXPECTED)
    for name, (params, required, hints) in EXPECTED.items():
        schema = tools[name]["inputSchema"]
        assert {k: v.get("type") for k, v in schema["properties"].items()} == params, name
        assert sorted(schema.get("required", [])) == sorted(required), name
        notes = tools[name]["annotations"]
        assert (notes["readOnlyHint"], notes.get("destructiveHint"),
                notes.get("idempotentHint")) == hints, name
        assert "outputSchema" not in tools[name], name
        assert "_meta" not in tools[name] and "title" not in tools[name], name
        assert tools[name]["description"], name


@pytest.mark.slow(25)
def test_catalog_and_framing_stay_within_their_budget(store_dir: Path) -> None:
    """The catalog, and the framing of recall and read_section answers over the example
    store's follow-up questions: at most 15 % of their tokens are labels and last lines.
    Measured once, as `notes tokens --questions --json` prints it (the command's figures are
    measure_costs' own, with its budget check beside them; one test, not a second measure of
    the 68 questions in this process)."""
    result = subprocess.run([str(NOTES_BIN), "--notes", str(store_dir), "tokens",
                             "--questions", str(FOLLOWUPS), "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    costs = {k: v for k, v in printed.items() if k != "over_budget"}
    assert set(costs) == set(measure_costs(load_config(store_dir)))
    assert printed["over_budget"] == over_budget(costs, BUDGET) == []
    assert BUDGET["catalog_total"] <= 700 and BUDGET["read_tools_total"] <= 350
    assert costs["catalog_total"] == sum(costs["tools"].values())
    framing = costs["framing"]
    assert set(framing) == set(BUDGET["framing"]) == {
        "recall@500", "recall@1000", "recall@2000", "read_section"}
    assert all(limit <= 0.15 for limit in BUDGET["framing"].values())
    assert all(f["answers"] == 68 for name, f in framing.items() if name != "read_section")
    assert framing["read_section"]["answers"] > 60 and framing["read_section"]["share"] == 0
    assert all(0 < framing[f"recall@{b}"]["share"] <= 0.15 for b in (500, 1000, 2000))
    tighter = json.loads(json.dumps(BUDGET))
    tighter["framing"]["recall@1000"] = framing["recall@1000"]["share"] - 0.001
    assert over_budget(costs, tighter) == [
        f"framing recall@1000: {framing['recall@1000']['share']:.1%} > "
        f"{tighter['framing']['recall@1000']:.0%}"]


def test_budget_check_fails_when_a_figure_grows(store_dir: Path) -> None:
    costs = measure_costs(load_config(store_dir))
    tighter = json.loads(json.dumps(BUDGET))
    tighter["tools"]["suggest"] = costs["tools"]["suggest"] - 1
    assert over_budget(costs, tighter) == [
        f"tool suggest: {costs['tools']['suggest']} > {costs['tools']['suggest'] - 1}"]


def test_notes_tokens_prints_the_total(store_dir: Path) -> None:
    result = subprocess.run([str(NOTES_BIN), "--notes", str(store_dir), "tokens"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "catalog total |" in result.stdout and "within budget" in result.stdout
    assert "framing" not in result.stdout  # no questions given, none known for this store


def test_notes_tokens_on_a_store_the_typical_query_misses(tmp_path: Path) -> None:
    """It used to end in an IndexError when no note matched the typical query."""
    store = tmp_path / "kiwi"
    store.mkdir()
    (store / "kiwi.md").write_text("# Kiwi\n\n## Current state\n- Kiwis are fruit.\n")
    result = subprocess.run([str(NOTES_BIN), "--notes", str(store), "tokens"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "answer suggest |" in result.stdout and "answer section_map" in result.stdout
    assert "reading kiwi#state" in result.stdout  # the store's first note stands in


def test_unknown_arguments_are_refused_though_the_schema_omits_it(store_dir: Path) -> None:
    """The catalog leaves out ``additionalProperties: false``; the server still refuses."""
    from fastmcp import Client
    from fastmcp.exceptions import ToolError

    async def call() -> None:
        async with Client(create_server(load_config(store_dir))) as client:
            await client.call_tool("suggest", {"query": "redis", "colour": "blue"})

    with pytest.raises(ToolError, match="colour"):
        asyncio.run(call())
