"""reports/divergence.png: kernel × backend, coloured by the worst err_ratio over its tolerance.

The grid is computed by a pure function; drawing needs matplotlib, which is optional:
without it `draw` returns False and the report says how to get the picture.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from parity.report.divergence import RUN_MODES, classify_error
from parity.report.err_tol import err_over_tol
from parity.results import Record, Status

INSTALL_HINT = "matplotlib is not installed: `pip install matplotlib` (the `nox -s report` session installs it)"


@dataclass(frozen=True)
class Grid:
    kernels: list[str]
    labels: list[str]
    values: list[list[float | None]]  # worst err/tol per cell; None: no numeric result
    # "C" compile failure, "K" known compile divergence, "E" rejected as expected, "L" launch refused,
    # "R" error while running (neither a compile nor a launch message), "D" the process died (crashed),
    # "✗" numeric failure, "ok" compiled
    marks: list[list[str]]


def _cell(records: Sequence[Record]) -> tuple[float | None, str]:
    worst: float | None = None
    marks = set()
    for r in records:
        compile_ = r.get("compile") or {}
        if compile_.get("ok") is False and r["status"] == Status.SKIPPED:
            pass  # a config the Autotuner drops while another fits: the tier's report skips it too
        elif compile_.get("ok") is False:
            # a rejection the spec demands (probes) or a known divergence is not a new failure
            if r.get("expected_compile_error") and r["status"] == Status.PASSED:
                marks.add("E")
            else:
                marks.add("K" if r["status"] == Status.XFAILED else "C")
        elif compile_.get("ok"):
            marks.add("ok")
        if compile_.get("launch_error"):
            marks.add("L")
        if r["status"] == Status.CRASHED:  # never coloured by figures recorded before the death
            marks.add("D")
            continue
        if r["status"] == Status.ERROR:
            marks.add({"launch": "L", "compile": "C"}.get(classify_error(r.get("reason")), "R"))
        if r.get("mode") in RUN_MODES:
            if r["status"] == Status.FAILED:
                marks.add("✗")
            value = err_over_tol(r) if r["status"] != Status.XFAILED else None  # known: not scored
            if value is not None and (worst is None or value > worst):
                worst = value
    if worst is not None or marks & {"C", "K", "E", "L", "R", "D", "✗"}:
        marks.discard("ok")  # "compiled" only labels cells with nothing else to show
    return worst, "".join(m for m in ("C", "K", "E", "L", "R", "D", "✗", "ok") if m in marks)


def grid(labels: Sequence[str], records: Mapping[str, Sequence[Record]]) -> Grid:
    kernels = sorted({r["kernel"] for recs in records.values() for r in recs})
    values, marks = [], []
    for kernel in kernels:
        row_v, row_m = [], []
        for label in labels:
            v, m = _cell([r for r in records.get(label, ()) if r["kernel"] == kernel])
            row_v.append(v)
            row_m.append(m)
        values.append(row_v)
        marks.append(row_m)
    return Grid(kernels, list(labels), values, marks)


def draw(g: Grid, path: Path) -> bool:
    """Write the heatmap PNG; False (and nothing written) when matplotlib is missing or there is no data."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import LogNorm
    except ImportError:
        return False
    if not g.kernels or not g.labels:
        return False
    import numpy as np

    data = np.array([[math.nan if v is None else min(max(v, 1e-4), 1e4) for v in row] for row in g.values])
    fig, ax = plt.subplots(figsize=(max(5.5, 3.0 + 1.2 * len(g.labels)), 1.6 + 0.38 * len(g.kernels)))
    cmap = plt.get_cmap("RdYlGn_r").with_extremes(bad="#dddddd")
    # imshow masks the NaN cells itself (matplotlib.cbook.safe_masked_invalid), drawn in the `bad` colour
    image = ax.imshow(data, cmap=cmap, norm=LogNorm(vmin=1e-4, vmax=1e2), aspect="auto")
    ax.set_xticks(range(len(g.labels)), g.labels, rotation=30, ha="right")
    ax.set_yticks(range(len(g.kernels)), g.kernels)
    for i, row in enumerate(g.marks):
        for j, mark in enumerate(row):
            if mark:
                ax.text(j, i, mark.replace("✗", "x"), ha="center", va="center", fontsize=8,
                        fontweight="normal" if mark == "ok" else "bold")
    fig.colorbar(image, ax=ax, label="worst err / tol (>1 fails)")
    ax.set_title("worst error over tolerance, kernel × backend", fontsize=10)
    ax.set_xlabel("C compile failure · K known divergence · E rejected as expected · L launch refused · "
                  "R error while running · D process died · x fails fp64 · ok compiled", fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
