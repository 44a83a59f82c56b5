"""The report of `python -m benchmarks perf`: Markdown, JSON beside it, a growth plot, the targets.

Targets are checked here, by reading the figures, never in tests: timings depend on the
machine. Each holds or not per backend, at the scale it names (1 ≈ 1 M tokens, 10 ≈ 10 M).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

Fig = dict[str, Any]
FILES = {"markdown": "performance.md", "json": "performance.json", "plot": "performance.png"}
# Text below this line in an existing report is written by people (evidence tables, why a
# target misses) and kept when the command rewrites the report above it.
KEEP_MARKER = ("<!-- python -m benchmarks perf rewrites everything above this line and keeps "
               "the rest -->")


def _get(path: str) -> Callable[[Fig], float | None]:
    def read(figures: Fig) -> float | None:
        value: Any = figures
        for key in path.split("."):
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return float(value) if isinstance(value, int | float) else None

    return read


# (scale, what, limit, unit, figure path in a backend's figures)
TARGETS: list[tuple[float, str, float, str, str]] = [
    (1, "warm `suggest` p95", 20, "ms", "warm.suggest.p95_ms"),
    (1, "cold `notes suggest` process (median)", 350, "ms", "cold.cli_ms"),
    (1, "saved note visible through `notes watch` (worst of the runs)", 1000, "ms",
     "watch.max_ms"),
    (1, "full index build (progress bar in `notes index`)", 30, "s", "build.seconds"),
    (1, "cold `notes hook user-prompt` process, no server (median)", 150, "ms",
     "hook.cold.median_ms"),
    (1, "`notes hook user-prompt` answered by the running MCP server (median)", 50, "ms",
     "hook.served.median_ms"),
    (1, "MCP server start → first answer, against a bare fastmcp server's", 1.2, "×",
     "mcp.first_answer_ratio"),
    (10, "warm `suggest` p95", 30, "ms", "warm.suggest.p95_ms"),
    (10, "full index build", 60, "s", "build.seconds"),
    (10, "one-note update: refresh + suggest finding it (median)", 200, "ms",
     "update.median_ms"),
    (10, "MCP server memory (peak RSS)", 600, "MB", "mcp.peak_rss_mb"),
]

# (label, unit, figure path, digits) for the per-scale and growth tables
ROWS: list[tuple[str, str, str, int]] = [
    ("full build", "s", "build.seconds", 1),
    ("build throughput", "tokens/s", "build.tokens_per_s", 0),
    ("build peak memory", "MB", "build.peak_rss_mb", 0),
    ("rebuild, token cache warm", "s", "build.rebuild_warm_cache_s", 1),
    ("index on disk", "MB", "build.index_mb", 1),
    ("warm `suggest` p50", "ms", "warm.suggest.p50_ms", 1),
    ("warm `suggest` p95", "ms", "warm.suggest.p95_ms", 1),
    ("warm `suggest` p99", "ms", "warm.suggest.p99_ms", 1),
    ("warm `section_map` p50 / p95", "ms", "warm.section_map.p50_ms|warm.section_map.p95_ms", 1),
    ("warm `read_section` p50 / p95", "ms",
     "warm.read_section.p50_ms|warm.read_section.p95_ms", 2),
    ("one-note update, library (median / worst)", "ms", "update.median_ms|update.max_ms", 0),
    ("saved → visible via `notes watch` (median / worst)", "ms",
     "watch.median_ms|watch.max_ms", 0),
    ("cold `notes suggest` process", "ms", "cold.cli_ms", 0),
    ("bare `python -c pass` process (median, beside the hooks)", "ms",
     "hook.cold.bare_median_ms", 0),
    ("cold `notes hook user-prompt` process, no server (median / p90)", "ms",
     "hook.cold.median_ms|hook.cold.p90_ms", 0),
    ("hook answered by the running MCP server (median / p90)", "ms",
     "hook.served.median_ms|hook.served.p90_ms", 0),
    ("hook cold / through the server, × a bare `python -c pass`", "×",
     "hook.cold.ratio|hook.served.ratio", 1),
    ("hook answers the same through the server", "of runs", "hook.same_answers|hook.answers",
     0),
    ("`notes serve` start → hook socket answering", "s", "hook.server_ready_s", 2),
    ("MCP start → first answer (median of 5)", "s", "mcp.first_answer_s", 2),
    ("bare fastmcp server with one tool: start → first answer", "s",
     "mcp.bare_first_answer_s", 2),
    ("MCP start against the bare server's", "×", "mcp.first_answer_ratio", 2),
    ("MCP `suggest` round trip p50 / p95", "ms", "mcp.suggest.p50_ms|mcp.suggest.p95_ms", 1),
    ("MCP `section_map` round trip p50 / p95", "ms",
     "mcp.section_map.p50_ms|mcp.section_map.p95_ms", 1),
    ("MCP server memory, peak / steady", "MB", "mcp.peak_rss_mb|mcp.steady_rss_mb", 0),
    ("routing: expected note first / in top 5", "%", "warm.routing.top1|warm.routing.top5", -1),
]


def _backends(data: Fig) -> list[str]:
    """The backends measured, in the order they were asked for."""
    return list(dict.fromkeys(b for s in data["scales"] for b in s["backends"]))


def _fmt(value: float | None, digits: int) -> str:
    if value is None:
        return "–"
    if digits < 0:
        return f"{100 * value:.0f}"
    return f"{value:,.{digits}f}"


def cell(figures: Fig, paths: str, digits: int) -> str:
    return " / ".join(_fmt(_get(p)(figures), digits) for p in paths.split("|"))


def target_rows(data: Fig) -> list[Fig]:
    """Every target with each backend's figure and whether it holds."""
    rows = []
    by_scale = {s["scale"]: s for s in data["scales"]}
    for scale, what, limit, unit, path in TARGETS:
        entry = by_scale.get(scale)
        row: Fig = {"scale": scale, "what": what, "limit": limit, "unit": unit, "backends": {}}
        for backend, figures in (entry or {}).get("backends", {}).items():
            value = _get(path)(figures)
            row["backends"][backend] = {"value": value,
                                        "holds": value is not None and value <= limit}
        rows.append(row)
    return rows


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.1f}×" if a is not None and b else "–"


def baseline_lines(entry: Fig) -> list[str]:
    grep, fts = entry["grep"], entry["fts5"]
    lines = [f"- `{grep['tool']}` over the notes (a whole process per query, any query word, "
             f"no ranking, no accent folding): median {grep['median_ms']:.0f} ms, p95 "
             f"{grep.get('p95_ms', 0):.0f} ms."
             + ("" if grep["tool"] == "rg" else " ripgrep is not installed here; this is "
                "`grep -rli`.")]
    lines.append(f"- SQLite FTS5 `bm25()` over the same section documents: build (read + "
                 f"parse + insert) {fts['build_s']:.1f} s, {fts['size_mb']:.0f} MB, warm query "
                 f"p50 {fts.get('p50_ms', 0):.2f} ms, p95 {fts.get('p95_ms', 0):.2f} ms; the "
                 f"best section's note is the expected one for {100 * fts['top1']:.0f} % of "
                 "queries.")
    for backend, figures in entry["backends"].items():
        build = _ratio(_get("build.seconds")(figures), fts["build_s"])
        warm = _ratio(_get("warm.suggest.p95_ms")(figures), fts.get("p95_ms"))
        cold = _ratio(_get("cold.cli_ms")(figures), grep["median_ms"])
        lines.append(f"- {backend} against them: build {build} FTS5's; warm `suggest` p95 "
                     f"{warm} FTS5's p95; cold `notes suggest` {cold} a cold `{grep['tool']}`.")
    return lines


def scale_section(entry: Fig) -> str:
    backends = list(entry["backends"])
    tokens = max((f["build"]["tokens"] for f in entry["backends"].values()), default=0)
    head = (f"### Scale {entry['scale']:g}: {entry['notes']:,} notes, {tokens:,} cl100k tokens "
            f"(generated in {entry['generate_s']:.1f} s)\n\n"
            f"| figure | unit | {' | '.join(backends)} |\n|---|---|{'---:|' * len(backends)}")
    rows = [f"| {label} | {unit} | " + " | ".join(cell(entry["backends"][b], path, digits)
                                                  for b in backends) + " |"
            for label, unit, path, digits in ROWS]
    return head + "\n" + "\n".join(rows) + "\n\n" + "\n".join(baseline_lines(entry))


GROWTH = [("build s", "build.seconds", 1), ("suggest p95 ms", "warm.suggest.p95_ms", 1),
          ("update ms", "update.median_ms", 0), ("visible ms", "watch.max_ms", 0),
          ("cold CLI ms", "cold.cli_ms", 0), ("hook cold ms", "hook.cold.median_ms", 0),
          ("hook served ms", "hook.served.median_ms", 0), ("MCP p95 ms", "mcp.suggest.p95_ms", 1),
          ("server MB", "mcp.peak_rss_mb", 0)]


def growth_table(data: Fig) -> str:
    backends = _backends(data)
    head = ["scale", "notes", "tokens"] + [f"{b} {label}" for b in backends
                                           for label, _, _ in GROWTH]
    head += ["FTS5 build s", "FTS5 p95 ms", "grep ms"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---:|" * len(head)]
    for entry in data["scales"]:
        tokens = max((f["build"]["tokens"] for f in entry["backends"].values()), default=0)
        cells = [f"{entry['scale']:g}", f"{entry['notes']:,}", f"{tokens / 1e6:.2f} M"]
        cells += [cell(entry["backends"].get(b, {}), path, digits) for b in backends
                  for _, path, digits in GROWTH]
        cells += [f"{entry['fts5']['build_s']:.1f}", f"{entry['fts5'].get('p95_ms', 0):.2f}",
                  f"{entry['grep']['median_ms']:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets_table(data: Fig) -> str:
    rows = target_rows(data)
    backends = _backends(data)
    lines = [f"| tokens | target | limit | {' | '.join(backends)} |",
             "|---|---|---:|" + "---:|" * len(backends)]
    for row in rows:
        cells = []
        for backend in backends:
            found = row["backends"].get(backend)
            if found is None or found["value"] is None:
                cells.append("not measured")
            else:
                mark = "holds" if found["holds"] else _miss(found["value"] / row["limit"])
                cells.append(f"{_fmt(found['value'], 1 if row['unit'] != 'MB' else 0)} "
                             f"{row['unit']}: {mark}")
        lines.append(f"| {row['scale']:g} M | {row['what']} | ≤ {row['limit']:g} {row['unit']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def _miss(ratio: float) -> str:
    """By how much a figure is over its limit: a percentage, or a multiple from 2× on."""
    return f"**misses** ({ratio:.1f}× the limit)" if ratio >= 2 else \
        f"**misses** by {100 * (ratio - 1):.0f} %"


def verdicts(data: Fig) -> str:
    """One line per backend: which targets hold, plainly."""
    lines = []
    rows = target_rows(data)
    for backend in _backends(data):
        measured = [r for r in rows if r["backends"].get(backend, {}).get("value") is not None]
        held = [r for r in measured if r["backends"][backend]["holds"]]
        missed = [f"{r['what']} at {r['scale']:g} M" for r in measured if r not in held]
        lines.append(f"- **{backend}**: {len(held)} of {len(measured)} measured targets hold"
                     + (f"; misses: {'; '.join(missed)}." if missed else "."))
    return "\n".join(lines)


def markdown(data: Fig, plot: str | None) -> str:
    m = data["machine"]
    parts = [
        "# Performance: speed and scale (`python -m benchmarks perf`)\n",
        f"Measured {data['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gb']} GB, "
        f"{m['system']}, Python {m['python']}; load average at the start "
        f"{', '.join(str(x) for x in m['load_average'])}, at the end "
        f"{', '.join(str(x) for x in data.get('load_average_end', []))} (1, 5, 15 min: a "
        "load above 0 means other work shared the machine). Wall time "
        f"{data['wall_s'] / 60:.1f} min. Produced by:\n", f"    {data['command']}\n",
        "## Targets\n", verdicts(data) + "\n", targets_table(data) + "\n",
        "## Growth with the store\n", growth_table(data) + "\n"]
    if plot:
        parts.append(f"![costs against store size]({plot})\n")
    parts.append("## Per scale\n")
    parts.extend(scale_section(entry) + "\n" for entry in data["scales"])
    parts.append(METHOD)
    parts.append(BACKENDS)
    return "\n".join(parts)


METHOD = """## How each figure is measured

- **Store**: `benchmarks/perf/generator.py`, seed 1: scale × 220 notes of about 4,500 cl100k tokens
  (lognormal sizes), a state of 200–450 tokens, 10–40 dated entries, 30–90 % Spanish prose with
  inline code and code blocks, words from a Zipf-like vocabulary (function words, common words,
  systems, then a tail of made-up identifiers), topic words recurring in each note. Queries:
  questions naming a note's topic (Spanish, English, without accents, in the other language
  than the note's title) or an entry's rare word; each knows its note (and entry).
- **Full build**: `Notes.refresh_index(rebuild=True)` in a fresh process with an empty state
  folder (token counts not cached), timed from the call; peak memory is that process's
  `ru_maxrss`, plus, when Whoosh builds with one worker process per core
  (`memory/index/whoosh/build.py`), the largest worker's peak times the number of
  workers: an upper bound (peaks need not coincide, and pages a forked worker shares with
  its parent count twice). The rebuild with a warm token cache is a second such process.
- **Warm ladder**: one process, after one warm-up call; every query once: `suggest` (which
  stats every note file first), `section_map` of the expected note with the query, then
  `read_section` of the map's best section. The usage log is on, as for users.
- **One-note update, library**: edit a note file (a temporary file renamed over it), then
  time `notes.index.refresh()` plus a `suggest` of the new word that ranks the note first.
- **Saved → visible**: `notes watch` running (0.3 s quiet period); the file is saved the same
  way and this process searches the index (without refreshing it) every 10 ms until the new
  word is found; the worst of the runs is checked against the target.
- **Cold processes**: whole `notes suggest QUERY` processes, the index already built;
  median. The package's bytecode is written first (as installing it does), so no measured
  process compiles sources.
- **Hook**: whole `notes hook user-prompt` processes (Claude Code's JSON on stdin), one per
  query, each prompt a different one (no count cached by an earlier run), each followed by a
  bare `python -c pass` of the same interpreter; the ratio is the median of the pairs'
  ratios, so it holds when the machine's speed drifts. First with no server (the hook opens
  the store itself), then with `notes serve` running over stdio (its standard input held
  open, as Claude Code holds it), the hook asking it over the store's socket
  (`benchmarks/perf/hook_timing.py`); the answers of both are compared. `notes serve` start →
  hook socket answering is timed from starting the process to its log line saying so.
- **MCP**: `python -m mcp_server` over stdio with the official `mcp` client; a round trip is
  `call_tool` from request to parsed answer; start → first answer is from starting the
  process to the parsed answer of the first `suggest`. Memory: the server's `VmRSS` sampled
  every 50 ms during the load and `VmHWM` (peak), then `VmRSS` after 2 s idle (steady).
- **Baselines**: ripgrep (`rg -l -i -F -e WORD…`, a process per query) and SQLite FTS5
  (`unicode61 remove_diacritics 2`, `bm25(sections, 2.0, 1.0)`, an OR of the quoted query
  words) over every section of every note, in the same run on the same files and queries.
  Neither stems nor ranks notes as the ladder does: they are floors, not competitors.
"""


def write_report(data: Fig, out: Path) -> Fig:
    out.mkdir(parents=True, exist_ok=True)
    data = {**data, "targets": target_rows(data)}
    plot = FILES["plot"] if growth_plot(data, out / FILES["plot"]) else None
    (out / FILES["json"]).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    target = out / FILES["markdown"]
    target.write_text(markdown(data, plot) + kept_text(target))
    return data


def kept_text(report: Path) -> str:
    """The hand-written part of an existing report (from :data:`KEEP_MARKER` on), or ''."""
    try:
        text = report.read_text(encoding="utf-8")
    except OSError:
        return ""
    at = text.find(KEEP_MARKER)
    return "\n" + text[at:] if at >= 0 else ""


PANELS = [("full build, s", "build.seconds", "fts5.build_s", "FTS5 build"),
          ("warm suggest p95, ms", "warm.suggest.p95_ms", "fts5.p95_ms", "FTS5 query p95"),
          ("one-note update, ms", "update.median_ms", None, ""),
          ("saved → visible (worst), ms", "watch.max_ms", None, ""),
          ("cold notes suggest, ms", "cold.cli_ms", "grep.median_ms", "rg/grep process"),
          ("MCP suggest p95, ms", "mcp.suggest.p95_ms", None, ""),
          ("MCP server peak, MB", "mcp.peak_rss_mb", None, ""),
          ("build peak memory, MB", "build.peak_rss_mb", None, "")]


def growth_plot(data: Fig, path: Path) -> bool:
    """Each cost against tokens (log–log), one line per backend, the baseline dashed where
    there is one; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    figure, axes = plt.subplots(2, 4, figsize=(16, 7.5))
    tokens = [max((f["build"]["tokens"] for f in s["backends"].values()), default=0) / 1e6
              for s in data["scales"]]
    for axis, (title, key, baseline, label) in zip(axes.flat, PANELS, strict=True):
        for backend in _backends(data):
            _line(axis, tokens, [_get(key)(s["backends"].get(backend, {}))
                                 for s in data["scales"]], backend, "-")
        if baseline:
            _line(axis, tokens, [_get(baseline)(s) for s in data["scales"]], label, "--")
        axis.set_title(title)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("store, M cl100k tokens")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return True


def _line(axis: Any, xs: list[float], ys: list[float | None], label: str, style: str) -> None:
    points = [(x, y) for x, y in zip(xs, ys, strict=True) if y]
    if points:
        axis.plot(*zip(*points, strict=True), style, marker="o", label=label)


BACKENDS = """## The two backends

`NOTES_BACKEND=whoosh` (the default) is the embedded pure-Python index; `NOTES_BACKEND=tantivy`
(`pip install 'notes-memory[tantivy]'`, tantivy 0.27.0, a native wheel) is the same index
behind the same interface (`memory/index/interface.py`: open, refresh, update, rebuild, search),
kept in `<state>/index-tantivy` beside Whoosh's `<state>/index`. Both pass
`tests/test_backend_conformance.py` (golden routing, section scores, freshness after edits
and from other processes, rebuild after damage or a version change, hostile queries).

What tantivy keeps: per-kind statistics (one index per kind: note, section, paragraph, so
BM25's idf and average lengths are the kind's, as `KindBM25F` does for Whoosh); the same
fields and boosts; accent folding and Spanish-then-English stemming with tantivy's own filters
(on the 8,783 distinct words of `notes_example` and a generated sample the exact terms are
identical and 15 stems differ); incremental per-note updates (all of a changed note's
documents are replaced); `version.json` (with the tantivy version) and a rebuild, in a new
folder swapped in, on a mismatch, a missing index or damage (commits every 256 notes, so a
rebuild's memory stays bounded); a cross-process write lock with a 30 s wait. What differs:
field boosts multiply a field's BM25 score instead of its term frequencies, so scores differ
(rankings agree on the golden questions; the best section agrees or swaps with the second);
tantivy maps its files into memory, so before each search the files of the live segments are
checked with `stat` and any change without a commit is treated as damage (rebuilt without
being read). The evidence benchmark runs on either or both: `notes bench run BENCH --backend
whoosh,tantivy` puts each policy's hit rate on each backend side by side.
"""
