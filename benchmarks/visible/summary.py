"""The summary of the visible benches, read from their reports (``report.json`` data).

Per bench: the best **ladder-family** policy by its margin over the fragments curve (the
family: ``ladder@N``, ``ladder-zoom@1``, ``recall*``, ``hybrid``, ``hook*``; not
``ladder-oracle``, which is told the gold note, nor ``full``); routing (gold note first, and
within the 4 shown, over the questions with one gold note; several-note questions apart); and
for a follow-up bench whose direct bench ran too, the **keep ratios**: each policy's hit rate
on the follow-ups divided by its hit rate on the same questions asked directly (the
``topic-switch`` rows a follow-up bench also asks are left out of it, and compared on their
own with the same questions asked directly, :func:`switch_direct`, and with the whole direct
bench: the lowest ratio in the ladder family of each). Multi-hop
questions (LoCoMo's category) and questions whose answer spans several notes are compared at
≤ 2,000 tokens with ``fragments@40`` (issue #15's targets).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from memory.bench.curve import best_of_family, in_ladder_family, margin_text
from memory.bench.split import HALVES

ORACLE = "ladder-oracle"
TOPIC_SWITCH = "topic-switch"  # follow-up rows in their own wording after another topic
SWITCH_ID = ":switch"  # a topic switch's id: the direct question's id and this
Outcomes = list[tuple[str, dict[str, bool]]]  # per question: its id, each policy's hit
SPLIT_BUDGET = 2000
SPLIT_BASELINE = "fragments@40"
SPLITS = {"multi_hop": ("by_category", "multi-hop"),
          "multi_session": ("by_gold_notes", "several gold notes")}


def keep_ratios(follow: dict[str, dict[str, Any]],
                direct: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """Per policy run on both: follow-up hit rate / direct hit rate (None: direct is 0)."""
    return {name: (round(f["hit_rate"] / direct[name]["hit_rate"], 4)
                   if direct[name]["hit_rate"] else None)
            for name, f in follow.items()
            if name in direct and f["questions"] and direct[name]["questions"]}


def switch_direct(follow: Outcomes, direct: Outcomes) -> dict[str, dict[str, Any]]:
    """Each policy's hit rate on the direct bench over the questions the follow-up bench
    asks again as topic switches (``follow``: its ids and hits, switches marked by
    ``SWITCH_ID``): the rate a switch should hold, on the same questions."""
    asked = {qid.removesuffix(SWITCH_ID) for qid, _ in follow if qid.endswith(SWITCH_ID)}
    rows = [hits for qid, hits in direct if qid in asked]
    policies = dict.fromkeys(p for hits in rows for p in hits)
    out = {}
    for policy in policies:
        ran = [hits[policy] for hits in rows if policy in hits]
        out[policy] = {"questions": len(ran), "hits": sum(ran),
                       "hit_rate": round(sum(ran) / len(ran), 4) if ran else 0.0}
    return out


def without_category(policies: dict[str, dict[str, Any]], split: dict[str, dict[str, Any]],
                     ) -> dict[str, dict[str, Any]]:
    """Each policy's figures with the questions of one category (``split``: that category's
    figures per policy, from the report's ``by_category``) taken out: the follow-up rows
    alone, without the topic switches a follow-up bench also asks."""
    out = {}
    for name, f in policies.items():
        gone = split.get(name)
        if not gone:
            out[name] = f
            continue
        questions = f["questions"] - gone["questions"]
        hits = _hits(f) - _hits(gone)
        out[name] = {**f, "questions": questions,
                     "hit_rate": round(hits / questions, 4) if questions else 0.0}
    return out


def _hits(f: dict[str, Any]) -> float:
    return float(f["hits"]) if "hits" in f else f["hit_rate"] * f["questions"]


def split_against_fragments(split: dict[str, dict[str, Any]] | None) -> dict[str, Any] | None:
    """In one split of a report (the multi-hop questions, say): the best ladder-family
    policy whose mean tokens there are at most 2,000, beside ``fragments@40`` there."""
    if not split:
        return None
    within = [(name, f) for name, f in split.items() if in_ladder_family(name)
              and f["questions"] and f["mean_tokens"] <= SPLIT_BUDGET]
    best = max(within, key=lambda item: item[1]["hit_rate"], default=None)
    baseline = split.get(SPLIT_BASELINE)
    return {"questions": max(f["questions"] for f in split.values()),
            "best": {"policy": best[0], "hit_rate": best[1]["hit_rate"],
                     "mean_tokens": best[1]["mean_tokens"]} if best else None,
            "fragments@40": ({"hit_rate": baseline["hit_rate"],
                              "mean_tokens": baseline["mean_tokens"]}
                             if baseline and baseline["questions"] else None)}


def bench_summary(data: dict[str, Any], direct: dict[str, Any] | None,
                  direct_name: str | None, paired: dict[str, dict[str, Any]] | None = None
                  ) -> dict[str, Any]:
    """One bench's line of the summary, from its report (and its direct bench's report;
    ``paired``: the direct bench's figures on the questions asked again as topic switches,
    :func:`switch_direct`, when the run has them)."""
    policies = data["policies"]
    routing = data["routing"]
    several = routing.get("several_gold") or {"questions": 0}
    out: dict[str, Any] = {
        "questions": data["questions"]["run"], "notes": data["store"]["notes"],
        "best": best_of_family(policies),
        "routing": {k: routing[k] for k in ("questions", "first_rate", "top4_rate")},
        "several_gold": ({k: several[k] for k in ("questions", "first_rate", "all_top4_rate",
                                                  "any_top4_rate", "shown_share")}
                         if several["questions"] else None),
        "keep": None,
        "halves": _halves(data.get("halves")),
    }
    for key, (split, value) in SPLITS.items():
        out[key] = split_against_fragments((data.get(split) or {}).get(value))
    if direct_name is not None:
        out["keep"] = {"direct": direct_name, "ran": direct is not None}
        if direct is not None:
            switches = (data.get("by_category") or {}).get(TOPIC_SWITCH) or {}
            out["keep"] |= _keep(without_category(policies, switches), direct["policies"],
                                 out["best"])
            out["keep"]["switch_lowest"] = _lowest_in_family(keep_ratios(
                switches, paired if paired is not None else direct["policies"]))
            out["keep"]["switch_lowest_whole"] = _lowest_in_family(keep_ratios(
                switches, direct["policies"]))
    return out


def _halves(halves: dict[str, Any] | None) -> dict[str, Any] | None:
    """Per half (tuning, test): its questions, best ladder-family policy and routing; and
    the gap between the halves' best margins."""
    if not halves:
        return None
    return {h: {"questions": halves[h]["questions"], "best": halves[h]["best"],
                "first_rate": halves[h]["routing"]["first_rate"]} for h in HALVES} | {
        "gap": halves.get("gap")}


def halves_table(summary: dict[str, Any]) -> str | None:
    """Per bench: the best ladder-family policy on the tuning half and on the test half (the
    figure reported), routing on each, and the gap between the halves' margins."""
    rows = ["| bench | tuning: best policy | margin | gold first | test: best policy | hit "
            "rate | mean tokens | margin | gold first | gap (tuning − test) |",
            "|---|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for name, b in summary["benches"].items():
        halves = b.get("halves")
        if not halves:
            continue
        tuning, test = halves["tuning"], halves["test"]
        cells = [name]
        for half in (tuning, test):
            best = half["best"]
            cells += [best["policy"] if best else "–"]
            if half is test:
                cells += ([_pct(best["hit_rate"]), f"{best['mean_tokens']:,.0f}"] if best
                          else ["–", "–"])
            cells += [margin_text(best["curve_margin"]) if best else "–",
                      _pct(half["first_rate"])]
        gap = halves["gap"]
        cells.append(margin_text(gap) if gap is not None else "–")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) if len(rows) > 2 else None


def _lowest_in_family(ratios: dict[str, float | None]) -> dict[str, Any] | None:
    family = {n: r for n, r in ratios.items() if in_ladder_family(n) and r is not None}
    lowest = min(family, key=lambda n: family[n], default=None)
    return {"policy": lowest, "ratio": family[lowest]} if lowest else None


def _keep(follow: dict[str, dict[str, Any]], direct: dict[str, dict[str, Any]],
          best: dict[str, Any] | None) -> dict[str, Any]:
    ratios = keep_ratios(follow, direct)
    best_name = best["policy"] if best else None
    return {"policies": ratios,
            "best": {"policy": best_name, "ratio": ratios.get(best_name)} if best_name
            else None,
            "lowest": _lowest_in_family(ratios), "oracle": ratios.get(ORACLE)}


def summarize(reports: dict[str, dict[str, Any]], directs: dict[str, str | None],
              titles: dict[str, str], command: str,
              built: dict[str, str] | None = None,
              outcomes: dict[str, Outcomes] | None = None) -> dict[str, Any]:
    """The summary of every bench run (``reports``: name → report data; ``outcomes``: name
    → each question's id and hits, for the topic switches' own direct rate)."""
    first = next(iter(reports.values()), {})
    benches = {}
    for name, data in reports.items():
        direct = directs.get(name)
        paired = (switch_direct(outcomes[name], outcomes[direct])
                  if outcomes and direct and name in outcomes and direct in outcomes else None)
        benches[name] = {"title": titles.get(name, name),
                         **bench_summary(data, reports.get(direct) if direct else None,
                                         direct, paired),
                         "built": (built or {}).get(name, ""),
                         "report": f"{name}/report.md",
                         "wall_seconds": data.get("wall_seconds")}
    return {"command": command, "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "version": first.get("version"), "limit": first.get("questions", {}).get("limit"),
            "policies": list(first.get("policies", {})), "benches": benches}


def summary_table(summary: dict[str, Any]) -> str:
    """One row per bench: the best ladder-family policy and its margin, routing, keep."""
    rows = ["| bench | questions | best ladder-family policy | hit rate | mean tokens | curve "
            "margin | gold first | gold in 4 shown | several gold: first / all in 4 | keep: "
            "best policy | keep: lowest in family | keep: ladder-oracle | topic switch / same "
            "questions direct: lowest in family; whole direct bench |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, b in summary["benches"].items():
        best = b["best"]
        cells = [name, str(b["questions"])]
        cells += ([best["policy"], _pct(best["hit_rate"]), f"{best['mean_tokens']:,.0f}",
                   margin_text(best["curve_margin"])] if best else ["–", "–", "–", "–"])
        routing = b["routing"]
        cells += ([_pct(routing["first_rate"]), _pct(routing["top4_rate"])]
                  if routing["questions"] else ["–", "–"])
        several = b["several_gold"]
        cells.append(f"{_pct(several['first_rate'])} / {_pct(several['all_top4_rate'])}"
                     if several else "–")
        cells += _keep_cells(b["keep"])
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _keep_cells(keep: dict[str, Any] | None) -> list[str]:
    if keep is None:
        return ["–", "–", "–", "–"]
    if not keep["ran"]:
        return [f"(run {keep['direct']} too)"] * 4
    best, lowest = keep["best"], keep["lowest"]
    switch, whole = keep.get("switch_lowest"), keep.get("switch_lowest_whole")
    return [f"{_ratio(best['ratio'])} ({best['policy']})" if best else "–",
            f"{_ratio(lowest['ratio'])} ({lowest['policy']})" if lowest else "–",
            _ratio(keep["oracle"]),
            (f"{_ratio(switch['ratio'])} ({switch['policy']})" if switch else "–")
            + (f"; whole bench {_ratio(whole['ratio'])} ({whole['policy']})"
               if whole and whole != switch else "")]


def keep_table(summary: dict[str, Any]) -> str | None:
    """Every policy's keep ratio on each follow-up bench whose direct bench ran."""
    kept = {name: b["keep"]["policies"] for name, b in summary["benches"].items()
            if b["keep"] and b["keep"]["ran"]}
    if not kept:
        return None
    policies = list(dict.fromkeys(p for ratios in kept.values() for p in ratios))
    rows = ["| policy | " + " | ".join(f"{n} / {summary['benches'][n]['keep']['direct']}"
                                       for n in kept) + " |",
            "|---|" + "---:|" * len(kept)]
    for policy in policies:
        rows.append(f"| {policy} | " + " | ".join(
            _ratio(ratios[policy]) if policy in ratios else "–" for ratios in kept.values())
            + " |")
    return "\n".join(rows)


def split_table(summary: dict[str, Any]) -> str | None:
    """Multi-hop and several-note questions: the best ladder-family policy at ≤ 2,000
    tokens against fragments@40, per bench."""
    rows = ["| bench | questions | best ladder-family at ≤ 2,000 tokens | hit rate | mean "
            "tokens | fragments@40 | gap |", "|---|---|---|---:|---:|---:|---:|"]
    for name, b in summary["benches"].items():
        for key, label in (("multi_hop", "multi-hop"), ("multi_session", "several notes")):
            split = b.get(key)
            if not split:
                continue
            best, base = split["best"], split["fragments@40"]
            gap = (margin_text(best["hit_rate"] - base["hit_rate"]) if best and base else "–")
            rows.append(f"| {name} | {label} ({split['questions']}) | "
                        + (f"{best['policy']} | {_pct(best['hit_rate'])} | "
                           f"{best['mean_tokens']:,.0f}" if best else "– | – | –")
                        + f" | {_pct(base['hit_rate']) if base else '–'} | {gap} |")
    return "\n".join(rows) if len(rows) > 2 else None


def summary_markdown(summary: dict[str, Any]) -> str:
    limit = summary.get("limit")
    lines = ["# Visible benches: summary", "",
             f"- command: `{summary['command']}`",
             f"- date: {summary['date']}; code version: {summary['version']}",
             f"- questions: {'the first ' + str(limit) if limit else 'all'} of each bench; "
             f"policies: {', '.join(summary['policies'])}", "",
             summary_table(summary), "", KEEP_NOTE, ""]
    halves = halves_table(summary)
    if halves:
        lines += ["## Tuning and test halves", "", HALVES_NOTE, "", halves, ""]
    kept = keep_table(summary)
    if kept:
        lines += ["## Follow-ups: hit rate kept from the direct questions", "", kept, ""]
    splits = split_table(summary)
    if splits:
        lines += ["## Multi-hop and several-note answers at ≤ 2,000 tokens", "", splits, ""]
    lines += ["## Benches", ""]
    lines += [f"- `{name}` ({b['title']}): {b['built']}; {b['questions']} questions run in "
              f"{b['wall_seconds']} s; report: [{b['report']}]({b['report']})"
              for name, b in summary["benches"].items()]
    return "\n".join(lines) + "\n"


HALVES_NOTE = ("Each bench's questions are split by a hash of their id (the same question is in "
               "the same half in every shape of a source). Levers, weights and constants are "
               "chosen on the tuning half; the test half is the figure to report. A tuning "
               "margin well above the test margin is overfitting.")
KEEP_NOTE = ("Curve margin: hit rate minus the fragments curve at the policy's mean tokens, "
             "in points. Routing: over the questions with one gold note; several gold: a gold "
             "note first / every gold note within the 4 shown. Keep: the follow-up hit rate "
             "divided by the same policy's hit rate on the direct questions (the follow-up "
             "bench's best policy, the lowest ladder-family ratio, and ladder-oracle's); the "
             "topic switches' hit rate is divided by the same questions' direct hit rate "
             "(and, after it, by the whole direct bench's: a subset of other difficulty, so "
             "not the target); the example store's follow-ups have no direct version, so no keep "
             "ratio.")


def _pct(value: float) -> str:
    return f"{100 * value:.1f} %"


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f} %"
