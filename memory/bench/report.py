"""The report of a bench run: figures per policy, splits, routing, and the run's limits.

Written as Markdown (for people), JSON (for tools) and a PNG plot of hit rate against mean
tokens (:mod:`memory.bench.plot`); the figures themselves are :mod:`memory.bench.figures`'.
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from memory.bench.curve import DENSE, FRAGMENTS, is_fragments, margin_text
from memory.bench.figures import (
    halves_figures,
    policy_figures,
    routing_figures,
    split_figures,
    with_margins,
)
from memory.bench.plot import write_plot
from memory.bench.run import QuestionResult, RunResult
from memory.bench.split import HALVES

LIMITS = (
    "Retrieval is lexical (BM25F over words and stems); nothing here uses embeddings or a "
    "model.",
    "A hit means every answer line was inside what the policy read; it is not a correct "
    "answer: a reader still has to find, understand and use it.",
    "Each policy makes one pass per question; the extra calls a real agent makes (another "
    "section, another note, a follow-up search) are not counted, nor are their tokens.",
    "Answer lines are compared as whole trimmed lines; an identical line elsewhere in what was "
    "read also counts.",
)
PLOT_HINT = ("matplotlib is not installed; install the plot extra (`pip install "
             "'notes-memory[plot]'`, or `pipx inject notes-memory matplotlib`) and run again "
             "to draw hit-rate-vs-tokens.png")
FILES = {"markdown": "report.md", "json": "report.json", "plot": "hit-rate-vs-tokens.png",
         "results": "results.jsonl"}


def code_version() -> str:
    """``git rev-parse --short HEAD`` of the project when available, else the package version."""
    root = Path(__file__).resolve().parents[2]
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, text=True,
                              capture_output=True, timeout=10)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return metadata.version("notes-memory")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_report(run: RunResult, command: str) -> dict[str, Any]:
    """Everything the report says, as plain data (this is the JSON file)."""
    return {
        "bench": str(run.bench), "command": command,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "version": code_version(), "wall_seconds": round(run.seconds, 1),
        "questions": {"read": run.read, "run": len(run.results),
                      "skipped_no_answer_lines": run.skipped_empty,
                      "skipped_answer_line_not_in_notes": run.skipped_missing,
                      "limit": run.limit},
        "store": {"notes": run.notes, "tokens": run.store_tokens},
        "policies": with_margins({p: policy_figures(run.results, p) for p in run.policies}),
        "by_category": split_figures(run, "category"),
        "by_where": split_figures(run, "where"),
        "by_gold_notes": split_figures(run, "gold_notes"),
        "routing": routing_figures(run.results),
        "halves": halves_figures(run),
        "limits": list(LIMITS),
        "backends": list(run.backends),
        "levers": list(run.levers.on()),
    } | _by_backend(run)


def _by_backend(run: RunResult) -> dict[str, Any]:
    if len(run.backends) < 2:
        return {}
    return {"routing_by_backend": {b: routing_figures(run.results, b) for b in run.backends}}


def write_report(run: RunResult, out: Path, command: str, plot: bool = True) -> dict[str, Any]:
    """Write the Markdown, JSON, per-question results and plot into ``out``; return the data.
    ``data["plot"]`` names the plot's file, or is None (not asked for, or matplotlib, the
    ``plot`` extra, is not installed: the report then says how to get it)."""
    out.mkdir(parents=True, exist_ok=True)
    data = build_report(run, command)
    drawn = plot and write_plot(data, out / FILES["plot"])
    data["plot"] = FILES["plot"] if drawn else None
    (out / FILES["json"]).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    with open(out / FILES["results"], "w", encoding="utf-8") as handle:
        for result in run.results:
            handle.write(json.dumps(_result_json(result), ensure_ascii=False) + "\n")
    (out / FILES["markdown"]).write_text(markdown(data, drawn, missing=plot and not drawn))
    return data


def _result_json(result: QuestionResult) -> dict[str, Any]:
    return {"id": result.id, "category": result.category, "where": result.where,
            "gold_rank": result.gold_rank, "gold_notes": len(result.gold_positions),
            **({"gold_positions": list(result.gold_positions)}
               if len(result.gold_positions) > 1 else {}),
            **({"gold_ranks": result.gold_ranks} if result.gold_ranks else {}),
            "policies": {p: {"hit": o.hit, "any_line": o.any_line, "tokens": o.tokens}
                         for p, o in result.outcomes.items()}}


def markdown(data: dict[str, Any], plot: bool = True, missing: bool = False) -> str:
    q = data["questions"]
    lines = ["# Bench report: evidence reached per token", "",
             f"- bench: `{data['bench']}` ({data['store']['notes']} notes, "
             f"{data['store']['tokens']:,} tokens)",
             f"- command: `{data['command']}`",
             f"- date: {data['date']}; code version: {data['version']}; wall time: "
             f"{data['wall_seconds']} s",
             f"- questions: {q['run']} run of {q['read']} read; skipped: "
             f"{q['skipped_no_answer_lines']} with no answer lines, "
             f"{q['skipped_answer_line_not_in_notes']} whose answer lines are not in the notes",
             *_backends_lines(data), "", "## Policies", "", policy_table(data["policies"]), "",
             MARGIN_NOTE, ""]
    if plot:
        lines += [f"![hit rate against mean tokens]({FILES['plot']})", ""]
    elif missing:
        lines += [f"No plot: {PLOT_HINT}", ""]
    lines += ["## Hit rate by category", "", split_table(data["by_category"]), "",
              "## Hit rate by where the answer lived", "", split_table(data["by_where"]), "",
              *_gold_split(data),
              "## Routing (suggest, 4 notes)", "", routing_text(data), "",
              *_halves_lines(data.get("halves")),
              "## Limits", "", *[f"- {limit}" for limit in data["limits"]], ""]
    return "\n".join(lines)


MARGIN_NOTE = ("Curve margin: the hit rate minus the fragments curve at the policy's mean "
               "tokens, in points (log-linear between the two fragments policies that bracket "
               "it; below the cheapest, the cheapest one's rate; above the dearest, the "
               "dearest one's). Fragments policies are the curve.")


def policy_table(policies: dict[str, dict[str, Any]]) -> str:
    """Every policy's figures; with ``dense@k`` policies in the run, its margin over the
    dense curve too."""
    dense = any(is_fragments(name, DENSE) for name in policies)
    rows = ["| policy | hit rate | 95 % interval | any line | mean tokens | median tokens | "
            "curve margin |" + (" dense margin |" if dense else "") + " questions |",
            "|---|---:|---:|---:|---:|---:|---:|" + ("---:|" if dense else "") + "---:|"]
    for name, f in policies.items():
        low, high = f["wilson95"]
        cells = [_margin_cell(name, f, FRAGMENTS, "curve")]
        if dense:
            cells.append(_margin_cell(name, f, DENSE, "dense"))
        rows.append(f"| {name} | {_pct(f['hit_rate'])} | {_pct(low)}–{_pct(high)} | "
                    f"{_pct(f['any_line_rate'])} | {f['mean_tokens']:,.0f} | "
                    f"{f['median_tokens']:,.0f} | {' | '.join(cells)} | {f['questions']} |")
    return "\n".join(rows)


def _margin_cell(name: str, figures: dict[str, Any], prefix: str, key: str) -> str:
    margin = figures.get(f"{key}_margin")
    return "curve" if is_fragments(name, prefix) and margin is not None else \
        margin_text(margin)


def _halves_lines(halves: dict[str, Any] | None) -> list[str]:
    """The tuning and test halves side by side: the best ladder-family policy of each, each
    policy's hit rate and margin, routing, and the gap (a large one is overfitting)."""
    if not halves:
        return []
    rows = ["| policy | tuning: hit rate | tuning: margin | test: hit rate | test: margin |",
            "|---|---:|---:|---:|---:|"]
    tuning, test = halves["tuning"]["policies"], halves["test"]["policies"]
    for name in tuning:
        a, b = tuning[name], test[name]
        rows.append(f"| {name} | {_pct(a['hit_rate'])} | {margin_text(a.get('curve_margin'))} "
                    f"| {_pct(b['hit_rate'])} | {margin_text(b.get('curve_margin'))} |")
    best = [halves[h]["best"] for h in HALVES]
    says = [f"{h}: {b['policy']} {margin_text(b['curve_margin'])}" if b else f"{h}: –"
            for h, b in zip(HALVES, best, strict=True)]
    gap = halves.get("gap")
    return ["## Tuning and test halves", "",
            f"Questions split by a hash of their id ({halves['tuning']['questions']} tuning, "
            f"{halves['test']['questions']} test): levers are chosen on the tuning half, "
            "figures reported on the test half.", "", "\n".join(rows), "",
            f"Best ladder-family policy: {'; '.join(says)}; gap (tuning − test): "
            f"{margin_text(gap) if gap is not None else '–'}.", "",
            f"Routing, tuning: {routing_line(halves['tuning']['routing'])}", "",
            f"Routing, test: {routing_line(halves['test']['routing'])}", ""]


def _gold_split(data: dict[str, Any]) -> list[str]:
    """The split by gold notes, shown when some answer spans several notes."""
    split = data.get("by_gold_notes") or {}
    if "several gold notes" not in split:
        return []
    return ["## Hit rate by how many notes hold the answer", "", split_table(split), ""]


def split_table(split: dict[str, dict[str, dict[str, Any]]]) -> str:
    """Rows: values of the split (with their question count); columns: policies."""
    if not split:
        return "(no questions)"
    policies = list(next(iter(split.values())))
    rows = ["| | questions | " + " | ".join(policies) + " |",
            "|---|---:|" + "---:|" * len(policies)]
    for value, figures in split.items():
        n = max(f["questions"] for f in figures.values())
        cells = " | ".join(_pct(figures[p]["hit_rate"]) for p in policies)
        rows.append(f"| {value} | {n} | {cells} |")
    return "\n".join(rows)


def _backends_lines(data: dict[str, Any]) -> list[str]:
    backends = data.get("backends") or []
    if len(backends) < 2:  # the default backend is not named, as before backends existed
        return [f"- index backend: {backends[0]}"] if backends[:1] not in ([], ["whoosh"]) else []
    return [f"- index backends: {', '.join(backends)}; every policy ran on each, shown as "
            "`policy [backend]`", "", "## Backends side by side", "", backend_table(data)]


def backend_table(data: dict[str, Any]) -> str:
    """One row per policy: each backend's hit rate and mean tokens, then its routing."""
    backends, policies = data["backends"], data["policies"]
    names = list(dict.fromkeys(p.rsplit(" [", 1)[0] for p in policies))
    rows = ["| policy | " + " | ".join(f"{b} hit rate | {b} mean tokens" for b in backends)
            + " |", "|---|" + "---:|---:|" * len(backends)]
    for name in names:
        cells = [(policies[f"{name} [{b}]"]) for b in backends]
        rows.append(f"| {name} | " + " | ".join(
            f"{_pct(f['hit_rate'])} | {f['mean_tokens']:,.0f}" for f in cells) + " |")
    routing = data["routing_by_backend"]
    rows.append("| routing: gold note first | " + " | ".join(
        f"{_pct(routing[b]['first_rate'])} | " for b in backends) + " |")
    return "\n".join(rows)


def routing_text(data: dict[str, Any]) -> str:
    """The routing line, one per backend when the run has several."""
    by_backend = data.get("routing_by_backend")
    if not by_backend:
        return routing_line(data["routing"])
    return "\n".join(f"- {b}: {routing_line(r)}" for b, r in by_backend.items())


def routing_line(routing: dict[str, Any]) -> str:
    several = routing.get("several_gold") or {"questions": 0}
    if not routing["questions"] and not several["questions"]:
        return "No question names a gold note, so routing was not measured."
    text = "No question has exactly one gold note."
    if routing["questions"]:
        first, top = routing["first_wilson95"], routing["top4_wilson95"]
        text = (f"Gold note first: {_pct(routing['first_rate'])} ({_range(first)}); within "
                f"the top 4: {_pct(routing['top4_rate'])} ({_range(top)}); "
                f"{routing['questions']} questions with one gold note.")
    if several["questions"]:
        text += (f" Answer in several notes ({several['questions']} questions): a gold note "
                 f"first {_pct(several['first_rate'])} ({_range(several['first_wilson95'])}); "
                 f"every gold note within the 4 shown {_pct(several['all_top4_rate'])} "
                 f"({_range(several['all_top4_wilson95'])}); at least one "
                 f"{_pct(several['any_top4_rate'])}; {_pct(several['shown_share'])} of their "
                 "gold notes shown on average.")
    return text


def _range(interval: list[float]) -> str:
    return f"{_pct(interval[0])}–{_pct(interval[1])}"


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"
