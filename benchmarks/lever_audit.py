"""The lever audit (issue #34, item 3): is each default lever earned on every source?

Usage:
  .venv/bin/python benchmarks/lever_audit.py --bench locomo=/tmp/b/locomo-sessions \\
      --bench locomo=/tmp/b/locomo --bench example=/tmp/b/example-followups \\
      --bench realmem=/tmp/b/realmem --half tuning --json /tmp/audit-tuning.json
  .venv/bin/python benchmarks/lever_audit.py --table /tmp/audit-tuning.json

Each ``--bench SOURCE=DIR`` is one bench of a source; several benches of one source (LoCoMo's
shapes) count once: the source's figure is the mean over its benches. For every bench, every
config runs the same questions (of one half) over one index; a config is what ``notes bench
run --levers`` takes. Results are saved after every run and a run already in the JSON file is
not made again (an interrupted audit goes on where it stopped).

The rule (issue #34, item 3): with the best ladder-family policy's curve margin as the figure,
a lever is earned when, against the config without it (leave-one-out from ``default``), it
costs no source more than 0.5 point and lifts the mean over sources by at least 1 point.
``recall``'s hierarchy weights, which are no switch, are audited the same way from within each
run: the best ``recall@N`` against ``recall-flat@1000`` at the same budget is reported beside.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from ablate_levers import summary

from memory.bench.run import run_bench
from memory.bench.split import check_half
from memory.retrieval.levers import DEFAULT, NAMES, NEEDS_MODEL, parse_levers

POLICIES = ("ladder@1", "ladder@2", "ladder-zoom@1", "recall@500", "recall@1000",
            "recall@2000", "recall-flat@1000", "hybrid", "hook", "fragments@2", "fragments@5",
            "fragments@10", "fragments@20", "fragments@40", "fragments@80")
MAX_COST = 0.005  # a lever may cost a source at most half a point
MIN_MEAN_LIFT = 0.01  # and must lift the mean over sources by a point


# off today and needing no extra (the model's run only with --vectors): each is tried on top
# of the default
ADDED = tuple(n for n in NAMES if n not in DEFAULT.on() and n not in NEEDS_MODEL)


def leave_one_out(base: str = "default") -> list[str]:
    """The base config, then the base without each of its levers, then none, then the
    base with each lever that is off today but needs no extra (``ADDED``)."""
    levers = parse_levers(base).on()
    return [base] + [f"-{name}" for name in levers] + ["none"] + [f"+{n}" for n in ADDED]


def run_all(benches: list[tuple[str, Path]], configs: list[str], half: str | None,
            policies: list[str], limit: int | None, saved: Path | None,
            backend: str = "whoosh", vectors: Path | None = None) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(saved.read_text()) if saved and saved.exists() else {}
    out.setdefault("runs", {})
    out["half"] = half or "all"
    out["backend"] = backend
    for source, bench in benches:
        key = f"{source}={bench}"
        done = out["runs"].setdefault(key, {})
        with tempfile.TemporaryDirectory(prefix="notes-audit-") as scratch:
            for config in configs:
                if config in done:
                    continue
                run = run_bench(bench, policies, limit, state_dir=Path(scratch) / "state",
                                levers=parse_levers(config), half=half, backend=backend,
                                vectors=vectors)
                data = summary(run)
                done[config] = {"best": data["best"], "best_margin": data["best_margin"],
                                "routing": data["routing"], "questions": data["questions"],
                                "policies": {p: {k: f[k] for k in ("hit_rate", "mean_tokens",
                                                                   "curve_margin")}
                                             for p, f in data["policies"].items()}}
                print(f"{key} {config}: best {data['best']} "
                      f"{100 * (data['best_margin'] or 0):+.1f}", flush=True)
                if saved:
                    saved.write_text(json.dumps(out, indent=1))
    return out


def same_levers(runs: dict[str, Any], config: str) -> dict[str, Any]:
    """The run of ``config``, or of another config that turns on the same levers
    (``-replies`` is ``none`` when ``replies`` is the only default lever)."""
    if config in runs:
        return dict(runs[config])
    wanted = parse_levers(config)
    return next((dict(run) for name, run in runs.items() if parse_levers(name) == wanted), {})


def by_source(out: dict[str, Any], config: str) -> dict[str, float | None]:
    """Each source's best ladder-family margin under ``config`` (or a config with the same
    levers): the mean over its benches (None when a bench has not run it)."""
    sources: dict[str, list[float | None]] = {}
    for key, runs in out["runs"].items():
        source = key.split("=", 1)[0]
        margin = same_levers(runs, config).get("best_margin")
        sources.setdefault(source, []).append(margin)
    return {s: (statistics.fmean(m for m in ms if m is not None) if all(
        m is not None for m in ms) else None) for s, ms in sources.items()}


def verdicts(out: dict[str, Any], base: str = "default") -> list[dict[str, Any]]:
    """Per lever of ``base``: its lift on each source (base minus base without it) and
    whether it is earned under the rule."""
    with_all = by_source(out, base)
    rows = []
    tried = [(n, f"-{n}", False) for n in parse_levers(base).on()]
    tried += [(n, f"+{n}", True) for n in ADDED
              if any(f"+{n}" in runs for runs in out["runs"].values())]
    for name, config, added in tried:
        other = by_source(out, config)
        lifts = {s: ((other[s] - with_all[s]) if added else (with_all[s] - other[s]))
                 if with_all[s] is not None and other.get(s) is not None else None
                 for s in with_all}
        known = [v for v in lifts.values() if v is not None]
        mean = statistics.fmean(known) if known and len(known) == len(lifts) else None
        earned = mean is not None and mean >= MIN_MEAN_LIFT and min(known) >= -MAX_COST
        rows.append({"lever": name + (" (off today)" if added else ""), "lifts": lifts,
                     "mean": mean, "earned": earned})
    return rows


def table(out: dict[str, Any]) -> str:
    """The audit as Markdown: each lever's lift per source and the verdict; then each
    config's best margin per source, and recall's hierarchy against recall-flat."""
    sources = sorted({k.split("=", 1)[0] for k in out["runs"]})
    rows = ["| lever: its lift on each source | " + " | ".join(sources) + " | mean | earned |",
            "|---|" + "---:|" * (len(sources) + 2)]
    for v in verdicts(out):
        cells = [_points(v["lifts"].get(s)) for s in sources]
        rows.append(f"| {v['lever']} | " + " | ".join(cells) + f" | {_points(v['mean'])} | "
                    f"{'yes' if v['earned'] else 'no'} |")
    configs = list(dict.fromkeys(c for runs in out["runs"].values() for c in runs))
    rows += ["", "| config | " + " | ".join(sources) + " | mean |",
             "|---|" + "---:|" * (len(sources) + 1)]
    for config in configs:
        margins = by_source(out, config)
        known = [m for m in margins.values() if m is not None]
        mean = statistics.fmean(known) if len(known) == len(margins) else None
        rows.append(f"| {config} | " + " | ".join(_points(margins[s], sign=True) for s in
                                                   sources) + f" | {_points(mean, True)} |")
    rows += ["", "| bench | recall hierarchy: recall@1000 − recall-flat@1000 (hit rate, "
             f"{DEFAULT.label()}) |", "|---|---:|"]
    for key, runs in out["runs"].items():
        policies = runs.get("default", {}).get("policies", {})
        if "recall@1000" in policies and "recall-flat@1000" in policies:
            lift = policies["recall@1000"]["hit_rate"] - policies["recall-flat@1000"]["hit_rate"]
            rows.append(f"| {key} | {_points(lift)} |")
    return "\n".join(rows)


def _points(value: float | None, sign: bool = True) -> str:
    return "–" if value is None else f"{100 * value:+.1f}" if sign else f"{100 * value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bench", action="append", default=[], metavar="SOURCE=DIR")
    parser.add_argument("--configs", help="';'-separated (default: leave-one-out of default)")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--half", choices=("tuning", "test", "all"), default="tuning")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--backend", default="whoosh", choices=("whoosh", "tantivy"),
                        help="the index backend (tantivy answers alike and searches long "
                        "messages an order of magnitude faster: docs/benchmarks.md)")
    parser.add_argument("--vectors", type=Path, help="the semantic lever's and the dense "
                        "curve's line vectors, kept between runs (needs the semantic extra)")
    parser.add_argument("--json", type=Path, help="results, saved after every run (resumed)")
    parser.add_argument("--table", type=Path, help="print the table of a --json file")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(args.table.read_text())))
        return
    benches = [(b.split("=", 1)[0], Path(b.split("=", 1)[1])) for b in args.bench]
    if not benches:
        parser.error("give at least one --bench SOURCE=DIR (or --table FILE)")
    configs = ([c.strip() for c in args.configs.split(";") if c.strip()] if args.configs
               else leave_one_out())
    out = run_all(benches, configs, check_half(args.half), args.policies.split(","),
                  args.limit, args.json, args.backend, args.vectors)
    print(table(out))


if __name__ == "__main__":
    main()
