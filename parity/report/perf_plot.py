"""reports/divergence_perf.png: bars per kernel and backend, the share of each backend's own roofline.

Drawing needs matplotlib (optional, as for the heatmap): without it `draw` returns False.
"""

from __future__ import annotations

from pathlib import Path

from parity.report.perf_cross import PerfGrid


def bars(g: PerfGrid) -> tuple[list[str], dict[str, list[float]]]:
    """x labels (kernel[case], shortened) and per backend the bar heights (0 where not timed)."""
    names = [f"{k}\n{c[:40]}" for k, c in g.rows]
    heights = {label: [(s.pct_of_roofline or 0.0) if (s := row[j]) is not None else 0.0 for row in g.shares]
               for j, label in enumerate(g.labels)}
    return names, heights


def draw(g: PerfGrid, path: Path) -> bool:
    """Write the bar chart; False (and nothing written) when matplotlib is missing or nothing was timed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    if not g.rows or not g.labels:
        return False
    names, heights = bars(g)
    width = 0.8 / len(g.labels)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.0 + 0.9 * len(names)), 4.2))
    for j, (label, values) in enumerate(heights.items()):
        ax.bar([i + (j - (len(g.labels) - 1) / 2) * width for i in range(len(names))], values, width, label=label)
    for i, flagged in enumerate(g.flagged):
        if flagged:
            ax.annotate("under half", (i, max(h[i] for h in heights.values())), ha="center", va="bottom",
                        fontsize=7, color="#b00020")
    ax.axhline(100, color="#888888", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("% of own measured roofline")
    ax.set_title("share of each backend's own roofline, per kernel", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
