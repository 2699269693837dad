"""REPORT.md's performance section: pure functions from records to markdown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parity.perf.roofline import roof_line
from parity.report.tables import fmt_num, md_escape, table
from parity.report.targets import judge, verdict_word
from parity.results import Record

PERF_HEADERS = ["kernel", "case", "check", "ms", "baseline ms", "x baseline", "peer", "peer ms", "x peer time",
                "GB/s", "TFLOP/s", "bound", "% of roofline", "% of datasheet"]
TARGET_HEADERS = ["kernel", "case", "target", "figure", "verdict", "why"]
PICK_HEADERS = ["kernel", "case", "autotuned kernel", "config it ran"]


def perf_of(r: Record) -> dict[str, Any]:
    """A record's perf block (every record `timed` returns has one)."""
    return r.get("perf") or {}


def timed(records: Sequence[Record]) -> list[Record]:
    """Records with a perf block that has a time: perf cases first, then timed accuracy cases."""
    out = [r for r in records if perf_of(r).get("ms") is not None]
    return sorted(out, key=lambda r: (r.get("suite") != "perf", r["kernel"], r["case"]))


def perf_row(r: Record) -> list[Any]:
    p = perf_of(r)
    ms, base, peer_ms = p["ms"], p.get("baseline_ms"), p.get("peer_ms")
    peer = p.get("peer") or ""
    if peer and peer_ms is None:
        peer += f" ({md_escape(p.get('peer_skipped') or p.get('peer_error'), 80)})"
    check = r["status"] if r.get("suite") == "perf" else "accuracy case"
    return [r["kernel"], md_escape(r["case"], 80), check, fmt_num(ms, 4), fmt_num(base, 4),
            fmt_num(base / ms if base and ms else None), peer, fmt_num(peer_ms, 4),
            fmt_num(ms / peer_ms if peer_ms and ms else None), fmt_num(p.get("gbps")), fmt_num(p.get("tflops")),
            p.get("bound") or "", fmt_num(p.get("pct_of_roofline")), fmt_num(p.get("pct_of_datasheet"))]


def target_rows(records: Sequence[Record]) -> list[list[Any]]:
    rows = []
    for r in timed(records):
        v = judge(perf_of(r))
        if v is not None:
            why = (perf_of(r).get("target") or {}).get("why")
            rows.append([r["kernel"], md_escape(r["case"], 80), md_escape(v.goal), md_escape(v.figure, 160),
                         f"**{verdict_word(v)}**", md_escape(why, 120)])
    return rows


def pick_rows(records: Sequence[Record]) -> list[list[Any]]:
    """One row per perf case and autotuned kernel: the config the timed launches used."""
    return [[r["kernel"], md_escape(r["case"], 80), name, md_escape(config, 160)]
            for r in timed(records) if r.get("suite") == "perf"
            for name, config in sorted((perf_of(r).get("autotune_picks") or {}).items())]


def measured_roof(records: Sequence[Record]) -> Mapping[str, Any] | None:
    return next((perf_of(r)["roof_measured"] for r in timed(records) if perf_of(r).get("roof_measured")), None)


def perf_section(records: Sequence[Record]) -> str | None:
    """The '## Performance' body, or None when nothing was timed."""
    rows = timed(records)
    if not rows:
        return None
    roof = measured_roof(records)
    parts = ["Timed after the accuracy pass, one case at a time with nothing else on the device, with the "
             "backend's timer (do_bench with an L2 flush on cuda; a call of 50 ms or more: the median of three "
             "calls, of 200 ms or more: one call); "
             "output buffers skip their NaN prefill while timed. Perf cases run at the sizes users run and are "
             "checked once against fp64 on the device "
             "(`check`). `% of roofline` is against what this machine measured in the same run (a device-to-device "
             "copy for memory-bound kernels, torch.matmul in bf16 for compute-bound ones); `% of datasheet` against "
             "the vendor's figure. `x peer time` is the kernel's time over the peer library's (below 1 is faster).",
             "", roof_line(roof) if roof else "No roof was measured (not a device run).", "",
             table([perf_row(r) for r in rows], PERF_HEADERS), ""]
    targets = target_rows(records)
    if targets:
        met = sum(1 for row in targets if row[4] == "**met**")
        parts += ["### Targets", "",
                  f"Goals printed, never asserted: {met} of {len(targets)} met.", "",
                  table(targets, TARGET_HEADERS), ""]
    picks = pick_rows(records)
    if picks:
        parts += ["### Autotune picks", "",
                  "The config each autotuned kernel of a perf case ran with when timed, the peer library's "
                  "included (its autotuner's pick, tuned in this run or reused from an earlier one: `--retune` "
                  "tunes afresh).", "",
                  table(picks, PICK_HEADERS), ""]
    return "\n".join(parts)
