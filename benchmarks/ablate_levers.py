"""The routing levers on and off: one bench, several lever settings, one index.

Usage: .venv/bin/python benchmarks/ablate_levers.py BENCH [--configs "none;spread;fusion"]
       [--policies P1,P2] [--limit N] [--json OUT.json]
       .venv/bin/python benchmarks/ablate_levers.py --table OUT.json   (a Markdown table)

Each config is what ``notes bench run --levers`` takes (``none``, ``default``, ``all``, names,
``+name``/``-name``). Every config runs the same questions over the same index (built once in
a scratch state folder), so only the levers differ. It prints, per config: routing (the gold
note first and within the 4 shown, over the questions with one gold note; for those with
several, a gold note first and the share shown), each policy's hit rate, mean tokens and curve
margin, the best ladder-family margin, and the hit rates on the questions whose answer spans
several notes and on multi-hop questions.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from memory.bench.curve import best_of_family
from memory.bench.figures import policy_figures, routing_figures, with_margins
from memory.bench.run import RunResult, run_bench
from memory.bench.split import check_half
from memory.retrieval.levers import parse_levers

POLICIES = ("ladder@1", "ladder@2", "recall@500", "recall@1000", "recall@2000",
            "fragments@2", "fragments@5", "fragments@10", "fragments@20", "fragments@40",
            "fragments@80")


def summary(run: RunResult) -> dict[str, Any]:
    policies = with_margins({p: policy_figures(run.results, p) for p in run.policies})
    top = best_of_family(policies)
    best = top["policy"] if top else None
    several = [r for r in run.results if len(r.gold_positions) > 1]
    multi_hop = [r for r in run.results if r.category == "multi-hop"]
    return {"levers": list(run.levers.on()), "questions": len(run.results),
            "routing": routing_figures(run.results),
            "policies": policies, "best": best,
            "best_margin": top["curve_margin"] if top else None,
            "several_gold": {p: policy_figures(several, p) for p in run.policies},
            "multi_hop": {p: policy_figures(multi_hop, p) for p in run.policies}}


def line(name: str, data: dict[str, Any]) -> str:
    routing = data["routing"]
    several = routing["several_gold"]
    parts = [f"{name:<22}", f"first {routing['first_rate']:.1%}",
             f"top4 {routing['top4_rate']:.1%}",
             f"several: first {several['first_rate']:.1%} shown {several['shown_share']:.1%}"]
    for policy, figures in data["policies"].items():
        if policy.startswith("fragments@") and policy not in ("fragments@40",):
            continue
        margin = figures["curve_margin"]
        parts.append(f"{policy} {figures['hit_rate']:.1%}/{figures['mean_tokens']:.0f}"
                     + (f"/{100 * margin:+.1f}" if margin is not None else ""))
    if data["best"]:
        parts.append(f"best {data['best']} {100 * data['best_margin']:+.1f}")
    for label, key in (("several-gold", "several_gold"), ("multi-hop", "multi_hop")):
        figures = data[key]
        if figures.get("recall@2000", {}).get("questions"):
            parts.append(f"{label} recall@2000 {figures['recall@2000']['hit_rate']:.1%} "
                         f"frag@40 {figures.get('fragments@40', {}).get('hit_rate', 0):.1%}")
    return " | ".join(parts)


def table(out: dict[str, Any]) -> str:
    """The configs of one ablation as a Markdown table (rates and margins in points)."""
    head = ("| levers | gold first | in 4 shown | several: a gold first / shown | ladder@1 "
            "| recall@500 | recall@1000 | recall@2000 | best margin | several gold: "
            "recall@2000 / fragments@40 |")
    rows = [head, "|" + "---|" * 10]
    for config, data in out["configs"].items():
        routing, pol = data["routing"], data["policies"]
        several = routing["several_gold"]
        cells = [config, _pct(routing["first_rate"]), _pct(routing["top4_rate"]),
                 f"{_pct(several['first_rate'])} / {_pct(several['shown_share'])}"
                 if several["questions"] else "–"]
        for policy in ("ladder@1", "recall@500", "recall@1000", "recall@2000"):
            f = pol[policy]
            cells.append(f"{_pct(f['hit_rate'])} · {f['mean_tokens']:,.0f} · "
                         f"{100 * f['curve_margin']:+.1f}")
        cells.append(f"{100 * data['best_margin']:+.1f} ({data['best']})")
        gold = data["several_gold"]
        cells.append(f"{_pct(gold['recall@2000']['hit_rate'])} / "
                     f"{_pct(gold['fragments@40']['hit_rate'])}"
                     if gold["recall@2000"]["questions"] else "–")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _pct(rate: float) -> str:
    return f"{100 * rate:.1f} %"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bench", type=Path, nargs="?")
    parser.add_argument("--table", type=Path, help="print the table of a --json file")
    parser.add_argument("--configs", default="none;default;all")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--limit", type=int)
    parser.add_argument("--half", choices=("tuning", "test", "all"), default="all",
                        help="run one half of the questions (choose on tuning, report test)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--vectors", type=Path, help="the semantic lever's vectors, kept here "
                        "for later runs (content-addressed: benches of the same notes share)")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(args.table.read_text(encoding="utf-8"))))
        return
    if args.bench is None:
        parser.error("give a BENCH (or --table FILE)")
    configs = [c.strip() for c in args.configs.split(";") if c.strip()]
    out: dict[str, Any] = {"bench": str(args.bench), "limit": args.limit, "half": args.half,
                           "configs": {}}
    with tempfile.TemporaryDirectory(prefix="notes-levers-") as scratch:
        for config in configs:
            run = run_bench(args.bench, args.policies.split(","), args.limit,
                            state_dir=Path(scratch) / "state", levers=parse_levers(config),
                            vectors=args.vectors, half=check_half(args.half))
            data = summary(run)
            out["configs"][config] = data
            print(line(config, data), flush=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
