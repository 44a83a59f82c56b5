"""The plot of a bench run: hit rate (with its 95 % interval) against mean tokens, one point
per policy, the fragments curve drawn through its policies. matplotlib (the ``plot`` extra) is
imported only here, by :func:`write_plot`, with the Agg backend.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.bench.curve import curve_points, is_fragments, margin_text


def write_plot(data: dict[str, Any], path: Path) -> bool:
    """Hit rate (with its 95 % interval) against mean tokens, one point per policy; False
    when matplotlib (the ``plot`` extra) is not installed."""
    try:
        import matplotlib
    except ImportError:
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.4), dpi=120)
    colours = plt.get_cmap("tab20")
    for backend, points in curve_points(data["policies"]).items():
        ax.plot([p.tokens for p in points], [100 * p.rate for p in points], "-", color="grey",
                linewidth=1.2, alpha=0.7, zorder=1,
                label="fragments curve" + (f" [{backend}]" if backend else ""))
    labels = []  # (x, y, text, colour) of every policy off the curve
    for number, (name, f) in enumerate(data["policies"].items()):
        if not f["questions"]:
            continue
        x, y = max(f["mean_tokens"], 1.0), 100 * f["hit_rate"]
        low, high = (100 * v for v in f["wilson95"])
        ax.errorbar([x], [y], yerr=[[y - low], [high - y]], fmt=_marker(name), capsize=3,
                    markersize=7, color=colours(number % 20), label=name, zorder=2)
        if f.get("curve_margin") is not None and not is_fragments(name):
            dark = tuple(0.7 * c for c in colours(number % 20)[:3])  # readable as text
            labels.append((x, y, f"{name} {margin_text(f['curve_margin'])}", dark))
    ax.set_xscale("log")
    ax.set_xlabel("mean tokens read per question (cl100k, log scale)")
    ax.set_ylabel("hit rate, % (95 % Wilson interval)")
    ax.set_ylim(0, 105)
    ax.set_title(f"Evidence reached per token: {Path(data['bench']).name} "
                 f"({data['questions']['run']} questions); labels: margin over the fragments "
                 "curve, points", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, borderaxespad=0)
    fig.tight_layout()
    # labels beside their points, moved up or down (with a leader line) until none overlaps
    placed: list[tuple[float, float, float, float]] = []
    points_per_pixel = 72 / fig.dpi
    for x, y, text, colour in sorted(labels, key=lambda label: -label[1]):
        px, py = ax.transData.transform((x, y))
        width, height = 0.55 * 7 / points_per_pixel * len(text), 9 / points_per_pixel
        left = px + 8 + width > ax.get_window_extent().x1  # no room on the right
        start = px - 8 - width if left else px + 8
        for shift in (0, -1, 1, -2, 2, -3, 3, -4, 4, -5, 5):
            box = (start, py + shift * height - height / 2, start + width,
                   py + shift * height + height / 2)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3]
                       for b in placed):
                break
        placed.append(box)
        ax.annotate(text, (x, y), xytext=((-8 if left else 8) * points_per_pixel,
                                          shift * height * points_per_pixel),
                    textcoords="offset points", fontsize=7, color=colour, va="center",
                    ha="right" if left else "left",
                    arrowprops={"arrowstyle": "-", "lw": 0.5, "color": colour} if shift
                    else None)
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return True


def _marker(policy: str) -> str:
    if policy.startswith("fragments"):
        return "s"
    if policy.startswith("ladder"):
        return "o"
    return {"hybrid": "D", "full": "^"}.get(policy, "v")
