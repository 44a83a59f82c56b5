"""The figures of a promotion bench run, and its report (Markdown and JSON).

Per variant and per half of the later questions (tuning, test, all), per policy: hit rate
and mean tokens before and after, the change in points, the curve margin before and after
(each against its own run's fragments curve) and the **gain at equal tokens**: the after hit
rate minus the *before* run's fragments curve at the after tokens, minus the before margin
(a policy that only gained by reading more gains nothing here); the questions that hit only
thanks to a promoted line; the state tokens added; and the precision of the promoted lines
(the share that carry an answer line of at least one later question).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.bench.curve import best_of_family, curve_at, curve_margins, curve_points
from memory.bench.figures import policy_figures
from memory.bench.promotion import holds_evidence
from memory.bench.promotion_run import PromotionRun, Variant
from memory.bench.report import code_version
from memory.bench.run import QuestionResult, RunResult
from memory.bench.split import HALVES, half_of

FILES = {"markdown": "promotion.md", "json": "promotion.json"}
TARGETS = {"family_gain": 0.05, "states_gain": 0.10, "state_growth": 0.25,
           "worst_loss": -0.01, "precision": 0.60}


def figures(run: PromotionRun, command: str) -> dict[str, Any]:
    first = run.options.rules[0]
    report = run.reports[first]
    return {
        "bench": str(run.bench), "command": command, "code_version": code_version(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(run.seconds, 1),
        "split": {"how": run.how, "earlier": run.earlier, "later": len(run.later),
                  "later_run": len(run.before.results), "later_shared": run.shared,
                  "halves": {h: sum(half_of(r.id) == h for r in run.before.results)
                             for h in HALVES}},
        "replay": {"sessions": run.replayed.sessions, "questions": run.replayed.questions,
                   "recalls": run.replayed.recalls, "second_reads": run.replayed.second_reads,
                   "calls": run.calls},
        "promoter": {"days": report.days, "min_sessions": report.min_sessions,
                     "candidates": {r: len(p.candidates) for r, p in run.reports.items()},
                     "demotions": len(report.demotions)},
        "store": {"notes": run.notes, "state_tokens": run.state_tokens},
        "policies": run.before.policies,
        "variants": {v.name: variant_figures(run, v) for v in run.variants},
        "estimates": estimate_figures(run),
    }


def variant_figures(run: PromotionRun, variant: Variant) -> dict[str, Any]:
    added = {n: after - before for n, (before, after) in variant.state_tokens.items()}
    total = sum(added.values())
    out: dict[str, Any] = {
        "kind": variant.kind, "rule": variant.rule, "lines": len(variant.promoted),
        "demoted": variant.demoted,
        "state_tokens": {"before": run.state_tokens, "after": run.state_tokens + total,
                         "added": total, "growth": _share(total, run.state_tokens),
                         "notes_changed": len(added),
                         "per_note": dict(sorted(added.items(), key=lambda i: -i[1]))},
        "halves": {},
    }
    assert variant.run is not None
    for half in (*HALVES, "all"):
        keep = [q for q in run.later if half == "all" or half_of(q.id) == half]
        lines = [p for p in variant.promoted if holds_evidence(p, variant.carried, keep)]
        out["halves"][half] = {
            **compare(_of(run.before, half), _of(variant.run, half), run.before.policies),
            "precision": _share(len(lines), len(variant.promoted)),
            "lines_holding_evidence": len(lines)}
    return out


def _of(run: RunResult, half: str) -> list[QuestionResult]:
    return [r for r in run.results if half == "all" or half_of(r.id) == half]


def _share(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def compare(before: list[QuestionResult], after: list[QuestionResult],
            policies: list[str]) -> dict[str, Any]:
    """Per policy: before, after, their difference; the best ladder-family policy (chosen
    before) and the states policy, with their gains."""
    was = {p: policy_figures(before, p) for p in policies}
    now = {p: policy_figures(after, p) for p in policies}
    for figures_, margins in ((was, curve_margins(was)), (now, curve_margins(now))):
        for name, extra in margins.items():
            figures_[name].update(extra)
    curve = curve_points(was).get(None)
    rows = {}
    for name in policies:
        b, a = was[name], now[name]
        fixed = None
        if curve and a["questions"] and b.get("curve_margin") is not None:
            at = curve_at(curve, float(a["mean_tokens"])).rate
            fixed = round(float(a["hit_rate"]) - at - float(b["curve_margin"]), 4)
        rows[name] = {
            "questions": b["questions"], "hit_before": b["hit_rate"], "hit_after": a["hit_rate"],
            "gain": round(float(a["hit_rate"]) - float(b["hit_rate"]), 4),
            "tokens_before": b["mean_tokens"], "tokens_after": a["mean_tokens"],
            "margin_before": b.get("curve_margin"), "margin_after": a.get("curve_margin"),
            "gain_equal_tokens": fixed,
            "carried_hits": sum(r.outcomes[name].carried for r in after
                                if name in r.outcomes)}
    best = best_of_family(was)
    worst = min((r["gain"] for r in rows.values() if r["questions"]), default=None)
    return {"policies": rows, "best_family": best["policy"] if best else None,
            "worst_gain": worst}


def estimate_figures(run: PromotionRun) -> dict[str, Any]:
    """How well the log-only precision estimates tell the lines that held evidence: per
    candidate of the every-candidate variant of the first rule, its estimates and whether its
    line carried an answer line of a later question."""
    first = run.options.rules[0]
    variant = next((v for v in run.variants if v.kind == "all" and v.rule == first), None)
    if variant is None:
        return {}
    held = {(p.note, p.entry) for p in variant.promoted
            if holds_evidence(p, variant.carried, run.later)}
    rows = [{"note": c.note, "entry": c.entry, "held": c.held, "settled": c.settled,
             "agreeing": c.agreeing, "precision": c.precision,
             "later": len(c.later), "true": (c.note, c.entry) in held}
            for c in run.reports[first].candidates]
    return {"candidates": rows, "by_threshold": {
        key: {str(t): _at(rows, key, t) for t in (0.0, 0.25, 0.5, 0.6, 0.75, 1.0)}
        for key in ("precision", "held", "settled")}}


def _at(rows: list[dict[str, Any]], key: str, threshold: float) -> dict[str, Any]:
    kept = [r for r in rows if r[key] >= threshold]
    return {"lines": len(kept), "precision": _share(sum(r["true"] for r in kept), len(kept))}


# -- writing ------------------------------------------------------------------------------
def write(run: PromotionRun, out: Path, command: str) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    data = figures(run, command)
    (out / FILES["json"]).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                                     encoding="utf-8")
    (out / FILES["markdown"]).write_text(markdown(data), encoding="utf-8")
    return data


def markdown(data: dict[str, Any]) -> str:
    split, replay, promoter = data["split"], data["replay"], data["promoter"]
    lines = [
        "# Promotion bench: one cycle replayed", "",
        f"- bench: `{data['bench']}` ({data['store']['notes']} notes, "
        f"{data['store']['state_tokens']:,} state tokens)",
        f"- command: `{data['command']}`",
        f"- code: {data['code_version']}, {data['date']}, {data['seconds']:.0f} s",
        f"- split by {split['how']}: {split['earlier']} earlier questions replayed, "
        f"{split['later']} later ({split['later_run']} run: "
        + ", ".join(f"{h} {n}" for h, n in split["halves"].items()) + f"); "
        f"{split['later_shared']} later questions have only answer lines an earlier one had "
        "too (what any promotion could carry at most)",
        f"- replay: {replay['sessions']} sessions, {replay['questions']} questions "
        f"({replay['recalls']} by recall, {replay['second_reads']} read a second section), "
        f"{replay['calls']} calls logged",
        f"- promoter ({promoter['days']} days, {promoter['min_sessions']} sessions): "
        + ", ".join(f"{n} candidates by `{r}`" for r, n in promoter["candidates"].items())
        + f"; {promoter['demotions']} demotions", "",
        "## Variants", "",
        variants_table(data), "",
    ]
    for name, variant in data["variants"].items():
        lines += [f"## {name}", ""]
        for half in ("test", "tuning", "all"):
            lines += [f"### {half} half" if half != "all" else "### all later questions", "",
                      policy_table(variant["halves"][half]), ""]
    return "\n".join(lines)


def variants_table(data: dict[str, Any], half: str = "test") -> str:
    head = ("| variant | lines | precision | state tokens added | growth | best family "
            "(before) | gain | at equal tokens | states gain | worst gain |")
    rows = [head, "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
    for name, v in data["variants"].items():
        h = v["halves"][half]
        best = h["best_family"]
        row = h["policies"].get(best, {}) if best else {}
        states = h["policies"].get("states", {})
        rows.append(
            f"| {name} | {v['lines'] or v['demoted']} | {_pct(h['precision'])} | "
            f"{v['state_tokens']['added']:,} | {_pct(v['state_tokens']['growth'])} | "
            f"{best or '–'} | {_pts(row.get('gain'))} | {_pts(row.get('gain_equal_tokens'))} | "
            f"{_pts(states.get('gain'))} | {_pts(h['worst_gain'])} |")
    return "\n".join(rows)


def policy_table(half: dict[str, Any]) -> str:
    rows = ["| policy | questions | hit before | hit after | gain | tokens before | tokens "
            "after | margin before | margin after | at equal tokens | hits via promoted |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in half["policies"].items():
        rows.append(f"| {name} | {r['questions']} | {_pct(r['hit_before'])} | "
                    f"{_pct(r['hit_after'])} | {_pts(r['gain'])} | {r['tokens_before']:,.0f} | "
                    f"{r['tokens_after']:,.0f} | {_pts(r['margin_before'])} | "
                    f"{_pts(r['margin_after'])} | {_pts(r['gain_equal_tokens'])} | "
                    f"{r['carried_hits']} |")
    return "\n".join(rows)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"


def _pts(value: float | None) -> str:
    if value is None:
        return "–"
    points = round(100 * value, 1)
    return "0.0" if points == 0 else f"{points:+.1f}".replace("-", "−")
