"""Cross-backend perf for DIVERGENCE.md: each backend's share of its own roofline, side by side.

Machines differ, so raw times do not compare; the share of what each machine measured itself
doing (copy bandwidth, bf16 matmul rate) does. A kernel is flagged where one backend reaches
under half of another's share. Pure functions; the plot is parity.report.perf_plot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from parity.perf.roofline import NO_SOURCED_PEAK
from parity.report.tables import md_escape, table
from parity.results import Record

FLAG_RATIO = 2.0  # flagged where the best share is more than twice the worst


@dataclass(frozen=True)
class Share:
    pct_of_roofline: float | None
    pct_of_datasheet: float | None
    ms: float
    roof_unit: str | None
    sourced_peak: bool  # whether the device has a datasheet figure with a source


@dataclass(frozen=True)
class PerfGrid:
    labels: list[str]
    rows: list[tuple[str, str]]  # (kernel, case)
    shares: list[list[Share | None]]  # rows × labels
    flagged: list[bool]


def share_of(r: Record) -> Share | None:
    p = r.get("perf") or {}
    if p.get("ms") is None:
        return None
    sheet = (p.get("roof_measured") or {}).get("datasheet") or {}
    return Share(p.get("pct_of_roofline"), p.get("pct_of_datasheet"), float(p["ms"]), p.get("roof_unit"),
                 bool(sheet.get("source")))


def flag(shares: Sequence[Share | None], ratio: float = FLAG_RATIO) -> bool:
    """Whether one backend's share of its roofline is under 1/ratio of another's."""
    pcts = [s.pct_of_roofline for s in shares if s is not None and s.pct_of_roofline]
    return len(pcts) >= 2 and max(pcts) > ratio * min(pcts)


def grid(labels: Sequence[str], records: Mapping[str, Sequence[Record]]) -> PerfGrid:
    """(kernel, case) rows of the timed cases, perf cases only where any column has them."""
    timed: dict[tuple[str, str], dict[str, Share]] = {}
    has_perf_suite = any(r.get("suite") == "perf" for recs in records.values() for r in recs)
    for label in labels:
        for r in records.get(label, ()):
            if has_perf_suite and r.get("suite") != "perf":
                continue
            s = share_of(r)
            if s is not None:
                timed.setdefault((r["kernel"], r["case"]), {})[label] = s
    rows = sorted(timed)
    shares = [[timed[row].get(label) for label in labels] for row in rows]
    return PerfGrid(list(labels), rows, shares, [flag(s) for s in shares])


def cell(s: Share | None) -> str:
    if s is None:
        return "–"
    roof = (s.roof_unit or "roof").partition(" ")[2] or "roof"  # "GB/s copy" -> "copy"
    main = f"{s.pct_of_roofline:.0f}% of its {roof}" if s.pct_of_roofline is not None else "no measured roof"
    sheet = f"{s.pct_of_datasheet:.0f}% of datasheet" if s.pct_of_datasheet is not None else (
        "datasheet n/a" if s.sourced_peak else NO_SOURCED_PEAK)
    return f"{main} ({s.ms:.4g} ms; {sheet})"


def render(g: PerfGrid, image: str | None) -> str | None:
    """The '## Perf across backends' body, or None when no case was timed."""
    if not g.rows:
        return None
    body = [[md_escape(k), md_escape(c, 80), *(md_escape(cell(s), 120) for s in shares),
             "**under half**" if f else ""] for (k, c), shares, f in zip(g.rows, g.shares, g.flagged, strict=True)]
    parts = ["Each backend's share of its own roofline, measured on its machine in the same run (copy bandwidth "
             "for memory-bound kernels, bf16 torch.matmul for compute-bound ones), with the datasheet share beside "
             f"it. `under half`: one backend reaches under 1/{FLAG_RATIO:g} of another's share. "
             f"{sum(g.flagged)} of {len(g.rows)} flagged.", "",
             table(body, ["kernel", "case", *g.labels, "flag"]), ""]
    if image:
        parts += [f"![share of own roofline per kernel and backend]({image})", ""]
    return "\n".join(parts)
