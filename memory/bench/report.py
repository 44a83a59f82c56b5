"""The report of a bench run: figures per policy, splits, routing, and the run's limits.

Written as Markdown (for people), JSON (for tools) and a PNG plot of hit rate against mean
tokens. matplotlib is imported only by :func:`write_plot`, with the Agg backend.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from memory.bench.run import QuestionResult, RunResult

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


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95 % by default)."""
    if n == 0:
        return 0.0, 0.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def policy_figures(results: list[QuestionResult], policy: str) -> dict[str, Any]:
    outcomes = [r.outcomes[policy] for r in results if policy in r.outcomes]
    n, hits = len(outcomes), sum(o.hit for o in outcomes)
    any_hits = sum(o.any_line for o in outcomes)
    tokens = [o.tokens for o in outcomes]
    low, high = wilson(hits, n)
    return {"questions": n, "hits": hits, "hit_rate": _ratio(hits, n),
            "wilson95": [round(low, 4), round(high, 4)], "any_line_hits": any_hits,
            "any_line_rate": _ratio(any_hits, n),
            "mean_tokens": round(statistics.fmean(tokens), 1) if tokens else 0.0,
            "median_tokens": statistics.median(tokens) if tokens else 0}


def _ratio(k: int, n: int) -> float:
    return round(k / n, 4) if n else 0.0


def split_figures(run: RunResult, key: str) -> dict[str, dict[str, Any]]:
    """Figures per policy for each value of ``key`` (``category`` or ``where``)."""
    groups: dict[str, list[QuestionResult]] = {}
    for result in run.results:
        groups.setdefault(str(getattr(result, key)), []).append(result)
    return {value: {p: policy_figures(rs, p) for p in run.policies}
            for value, rs in sorted(groups.items())}


def routing_figures(results: list[QuestionResult], backend: str | None = None) -> dict[str, Any]:
    """How often suggest put the gold note first and in its list (of ``backend``'s run when
    the run has several)."""
    gold = [r for r in results if r.has_gold]
    ranks = [r.gold_ranks.get(backend, r.gold_rank) if backend else r.gold_rank for r in gold]
    first = sum(rank == 1 for rank in ranks)
    top = sum(rank is not None for rank in ranks)
    return {"questions": len(gold), "first": first, "first_rate": _ratio(first, len(gold)),
            "first_wilson95": [round(x, 4) for x in wilson(first, len(gold))],
            "top4": top, "top4_rate": _ratio(top, len(gold)),
            "top4_wilson95": [round(x, 4) for x in wilson(top, len(gold))]}


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
        "policies": {p: policy_figures(run.results, p) for p in run.policies},
        "by_category": split_figures(run, "category"),
        "by_where": split_figures(run, "where"),
        "routing": routing_figures(run.results),
        "limits": list(LIMITS),
        "backends": list(run.backends),
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
            "gold_rank": result.gold_rank,
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
             *_backends_lines(data), "", "## Policies", "", policy_table(data["policies"]), ""]
    if plot:
        lines += [f"![hit rate against mean tokens]({FILES['plot']})", ""]
    elif missing:
        lines += [f"No plot: {PLOT_HINT}", ""]
    lines += ["## Hit rate by category", "", split_table(data["by_category"]), "",
              "## Hit rate by where the answer lived", "", split_table(data["by_where"]), "",
              "## Routing (suggest, 4 notes)", "", routing_text(data), "",
              "## Limits", "", *[f"- {limit}" for limit in data["limits"]], ""]
    return "\n".join(lines)


def policy_table(policies: dict[str, dict[str, Any]]) -> str:
    rows = ["| policy | hit rate | 95 % interval | any line | mean tokens | median tokens | "
            "questions |", "|---|---:|---:|---:|---:|---:|---:|"]
    for name, f in policies.items():
        low, high = f["wilson95"]
        rows.append(f"| {name} | {_pct(f['hit_rate'])} | {_pct(low)}–{_pct(high)} | "
                    f"{_pct(f['any_line_rate'])} | {f['mean_tokens']:,.0f} | "
                    f"{f['median_tokens']:,.0f} | {f['questions']} |")
    return "\n".join(rows)


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
    if not routing["questions"]:
        return "No question names a gold note, so routing was not measured."
    first, top = routing["first_wilson95"], routing["top4_wilson95"]
    return (f"Gold note first: {_pct(routing['first_rate'])} ({_pct(first[0])}–"
            f"{_pct(first[1])}); within the top 4: {_pct(routing['top4_rate'])} "
            f"({_pct(top[0])}–{_pct(top[1])}); {routing['questions']} questions with a gold "
            "note.")


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def write_plot(data: dict[str, Any], path: Path) -> bool:
    """Hit rate (with its 95 % interval) against mean tokens, one point per policy; False
    when matplotlib (the ``plot`` extra) is not installed."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=120)
    colours = plt.get_cmap("tab10")
    for number, (name, f) in enumerate(data["policies"].items()):
        if not f["questions"]:
            continue
        x, y = max(f["mean_tokens"], 1.0), 100 * f["hit_rate"]
        low, high = (100 * v for v in f["wilson95"])
        ax.errorbar([x], [y], yerr=[[y - low], [high - y]], fmt=_marker(name), capsize=3,
                    markersize=7, color=colours(number % 10), label=name)
    ax.set_xscale("log")
    ax.set_xlabel("mean tokens read per question (cl100k, log scale)")
    ax.set_ylabel("hit rate, % (95 % Wilson interval)")
    ax.set_ylim(0, 105)
    ax.set_title(f"Evidence reached per token: {Path(data['bench']).name} "
                 f"({data['questions']['run']} questions)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8, ncols=2)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return True


def _marker(policy: str) -> str:
    if policy.startswith("fragments"):
        return "s"
    if policy.startswith("ladder"):
        return "o"
    return {"hybrid": "D", "full": "^"}.get(policy, "v")
