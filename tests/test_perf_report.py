"""Perf arithmetic and rendering as pure functions, on fake figures: the roofline, targets, REPORT.md's
performance section, and DIVERGENCE.md's cross-backend perf (with its plot).

Negative controls: a slow kernel reads "missed", equal shares are not flagged, a device without a
sourced datasheet says so instead of borrowing another's.
"""

from __future__ import annotations

from typing import Any

import pytest

from parity import KernelSpec, Peer, PerfTarget, SpecError
from parity.cases import product
from parity.perf.roofline import NO_SOURCED_PEAK, Roof, bound_of, datasheet_for, figures, roof_line
from parity.report import perf_cross, perf_md, perf_plot
from parity.report.divergence import Column, gather, perf
from parity.report.targets import judge
from parity.results import Status

H200 = Roof("NVIDIA H200", copy_gbps=4000.0, matmul_tflops=800.0, datasheet=datasheet_for("NVIDIA H200"))
NPU = Roof("Ascend910B3", copy_gbps=1000.0, matmul_tflops=200.0, datasheet=datasheet_for("Ascend910B3"))


def test_memory_bound_share_is_against_the_measured_copy_bandwidth():
    fig = figures(n_bytes=3.6e9, n_flops=None, ms=1.0, roof=H200, dtype="bf16")
    assert fig["bound"] == "memory" and fig["gbps"] == pytest.approx(3600.0)
    assert fig["pct_of_roofline"] == pytest.approx(90.0)  # of 4000 measured
    assert fig["pct_of_datasheet"] == pytest.approx(75.0)  # of 4800 on the datasheet


def test_compute_bound_share_is_against_the_measured_bf16_matmul():
    n = 8192
    fig = figures(n_bytes=3 * n * n * 2, n_flops=2 * n**3, ms=2 * n**3 / 400e9, roof=H200, dtype="bf16")
    assert fig["bound"] == "compute" and fig["pct_of_roofline"] == pytest.approx(50.0)
    assert fig["pct_of_datasheet"] == pytest.approx(100 * 400 / 989)


def test_bound_follows_the_machine_balance_unless_declared():
    balance = 800e12 / 4000e9  # 200 flops per byte
    assert bound_of(1e9, 100 * 1e9, H200, "bf16") == "memory"
    assert bound_of(1e9, 2 * balance * 1e9, H200, "bf16") == "compute"
    assert bound_of(1e9, 2 * balance * 1e9, H200, "bf16", declared="memory") == "memory"
    assert bound_of(None, 1e9, H200, "bf16") == "compute" and bound_of(1e9, None, H200, "bf16") == "memory"


def test_fp32_math_has_no_measured_roof_and_no_share_is_invented():
    fig = figures(n_bytes=1.0, n_flops=1e12, ms=1.0, roof=H200, dtype="fp32", declared="compute")
    assert fig["pct_of_roofline"] is None and fig["pct_of_datasheet"] == pytest.approx(100 * 1000 / 67)


def test_without_a_roof_only_raw_figures_remain():
    fig = figures(n_bytes=1e9, n_flops=None, ms=1.0, roof=None, dtype="bf16")
    assert fig["gbps"] == 1000.0 and fig["pct_of_roofline"] is None and fig["bound"] is None


def test_unsourced_device_says_so_beside_its_measured_roof():
    assert NPU.datasheet == {}
    line = roof_line(NPU.as_dict())
    assert "copy 1000 GB/s (no sourced peak)" in line and "bf16 matmul 200 TFLOP/s (no sourced peak)" in line
    assert "datasheet 4800" in roof_line(H200.as_dict()) and "nvidia.com" in roof_line(H200.as_dict())


@pytest.mark.parametrize(("target", "perf", "met"), [
    (dict(min_roofline_frac=0.85), dict(ms=1.0, pct_of_roofline=91.0, roof=4000.0, roof_unit="GB/s copy"), True),
    (dict(min_roofline_frac=0.85), dict(ms=1.0, pct_of_roofline=40.0, roof=4000.0, roof_unit="GB/s copy"), False),
    (dict(min_speedup_vs_baseline=1.0), dict(ms=2.0, baseline_ms=2.1), True),
    (dict(min_speedup_vs_baseline=0.9), dict(ms=4.0, baseline_ms=1.0), False),  # planted slow matmul
    (dict(max_time_vs_peer=0.8), dict(ms=0.78, peer_ms=1.33, peer="fla"), True),
    (dict(max_time_vs_peer=1.0), dict(ms=3.998, peer_ms=3.829, peer="fla"), False),  # issue 19's 1.044x
    (dict(max_time_vs_peer=1.0), dict(ms=1.0, peer_ms=None, peer="fla", peer_skipped="not installed"), None),
    (dict(min_roofline_frac=0.85), dict(ms=1.0), None),
])
def test_targets_are_met_missed_or_not_measured(target: dict[str, Any], perf: dict[str, Any], met: bool | None):
    assert judge({**perf, "target": target}).met is met


def test_a_perf_target_takes_exactly_one_bound_and_a_peer_target_needs_a_peer():
    with pytest.raises(ValueError, match="exactly one"):
        PerfTarget(min_roofline_frac=0.85, max_time_vs_peer=1.0)
    with pytest.raises(ValueError, match="exactly one"):
        PerfTarget()
    base = dict(name="k", family="f", kernel=object(), launch=lambda i, p: {}, reference=lambda i, p: {},
                cases=lambda level: [], make_inputs=lambda p, g: {})
    with pytest.raises(SpecError, match="no `peer`"):
        KernelSpec(**base, perf_target=PerfTarget(max_time_vs_peer=1.0))
    with pytest.raises(SpecError, match="bound"):
        KernelSpec(**base, bound="latency")
    with pytest.raises(SpecError, match="duplicate perf case"):
        KernelSpec(**base, perf_cases=product(N=[1, 1]))
    KernelSpec(**base, peer=Peer("lib", lambda i, p: lambda: None), perf_target=PerfTarget(max_time_vs_peer=1.0))
    assert KernelSpec(**base).perf_cases == ()  # every perf field is optional


def record(kernel: str, case: str, perf: dict[str, Any] | None, suite: str = "perf",
           status: Status = Status.PASSED) -> dict[str, Any]:
    return {"kernel": kernel, "case": case, "suite": suite, "status": status, "mode": "run", "params": {},
            "perf": perf}


def fast_and_slow() -> list[dict[str, Any]]:
    roof = H200.as_dict()
    return [
        record("vector_add", "N=268435456,dtype=bf16",
               dict(ms=0.45, baseline_ms=0.47, pct_of_roofline=89.5, pct_of_datasheet=74.6, roof=4000.0,
                    roof_unit="GB/s copy", bound="memory", gbps=3580.0, roof_measured=roof,
                    target=dict(min_roofline_frac=0.85))),
        record("matmul", "M=8192,N=8192,K=8192,dtype=bf16",
               dict(ms=4.0, baseline_ms=1.4, pct_of_roofline=34.4, roof=800.0, roof_unit="TFLOP/s bf16 matmul",
                    bound="compute", roof_measured=roof, target=dict(min_speedup_vs_baseline=0.9))),
        record("softmax", "M=37,N=4099,dtype=fp32", dict(ms=0.01), suite="accuracy"),
    ]


def test_report_section_lists_perf_cases_first_with_the_roof_and_each_verdict():
    text = perf_md.perf_section(fast_and_slow())
    assert text is not None and "Measured on NVIDIA H200: copy 4000 GB/s (datasheet 4800)" in text
    figures, targets = text.split("### Targets")
    rows = [line for line in figures.splitlines() if line.startswith(("| matmul", "| softmax"))]
    assert rows[0].startswith("| matmul") and "accuracy case" in rows[-1]
    assert "1 of 2 met" in text
    matmul_target = next(line for line in targets.splitlines() if line.startswith("| matmul"))
    assert "**missed**" in matmul_target
    assert "0.350x" in matmul_target  # the planted slow matmul: 1.4 ms of torch against 4.0 ms


def test_autotune_picks_are_listed_per_perf_case_and_absent_without_any():
    records = fast_and_slow()
    assert "### Autotune picks" not in perf_md.perf_section(records)  # negative control: no picks recorded
    records[1]["perf"]["autotune_picks"] = {"matmul_kernel": "BM: 128, BN: 256, num_warps: 8, num_stages: 3"}
    records[2]["perf"]["autotune_picks"] = {"softmax_kernel": "BLOCK: 1024"}  # an accuracy case: not listed
    picks = perf_md.perf_section(records).split("### Autotune picks")[1]
    assert "| matmul " in picks and r"BM: 128, BN: 256, num\_warps: 8" in picks and "softmax" not in picks


def test_report_section_is_absent_when_nothing_was_timed():
    assert perf_md.perf_section([record("x", "c", None)]) is None


def cross_records(npu_pct: float) -> dict[str, list[dict[str, Any]]]:
    def rec(pct: float, roof: Roof) -> dict[str, Any]:
        return record("softmax", "M=32768,N=4096,dtype=bf16",
                      dict(ms=1.0, pct_of_roofline=pct, roof_unit="GB/s copy", roof_measured=roof.as_dict(),
                           pct_of_datasheet=pct * 0.8 if roof.datasheet else None))
    return {"cuda": [rec(88.0, H200)], "ascend": [rec(npu_pct, NPU)]}


def test_cross_backend_perf_flags_a_backend_under_half_of_the_other():
    g = perf_cross.grid(["cuda", "ascend"], cross_records(30.0))
    assert g.flagged == [True]
    text = perf_cross.render(g, "divergence_perf.png")
    assert "**under half**" in text and NO_SOURCED_PEAK in text and "divergence_perf.png" in text


def test_cross_backend_perf_does_not_flag_comparable_shares():
    assert perf_cross.grid(["cuda", "ascend"], cross_records(60.0)).flagged == [False]


def test_perf_divergence_compares_shares_of_each_machines_own_roof():
    recs = cross_records(30.0)
    per = {label: (Column(label, label, "run", {}), gather(rs)[("softmax", "M=32768,N=4096,dtype=bf16")])
           for label, rs in recs.items()}
    d = perf("softmax", "M=32768,N=4096,dtype=bf16", per, 2.0)
    assert d is not None and "share of own roofline differs 2.9x" in d.summary
    recs = cross_records(60.0)
    per = {label: (Column(label, label, "run", {}), gather(rs)[("softmax", "M=32768,N=4096,dtype=bf16")])
           for label, rs in recs.items()}
    assert perf("softmax", "M=32768,N=4096,dtype=bf16", per, 2.0) is None


def test_perf_plot_bars_are_the_shares_and_the_png_is_written(tmp_path):
    g = perf_cross.grid(["cuda", "ascend"], cross_records(30.0))
    names, heights = perf_plot.bars(g)
    assert names == ["softmax\nM=32768,N=4096,dtype=bf16"] and heights == {"cuda": [88.0], "ascend": [30.0]}
    pytest.importorskip("matplotlib", reason="pip install matplotlib")
    assert perf_plot.draw(g, tmp_path / "p.png") and (tmp_path / "p.png").stat().st_size > 1000
    assert not perf_plot.draw(perf_cross.grid(["cuda"], {}), tmp_path / "none.png")


def test_divergence_report_carries_the_perf_table_and_plot_beside_the_heatmap(tmp_path):
    import json

    from parity import cli
    from parity.results import empty_record

    for backend, recs in cross_records(30.0).items():
        d = tmp_path / backend
        d.mkdir()
        rows = [{**empty_record(backend, "run", r["kernel"], r["case"], {}), "suite": "perf", "status": Status.PASSED,
                 "perf": r["perf"]} for r in recs]
        (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (d / "env.json").write_text(json.dumps({"backend": backend}))
    out = tmp_path / "DIVERGENCE.md"
    cli.report([tmp_path / "cuda", tmp_path / "ascend"], out, 2.0)
    text = out.read_text()
    assert "## Perf across backends" in text and "**under half**" in text
    assert "share of own roofline differs" in text  # the perf divergence, on the roofline shares
    pytest.importorskip("matplotlib", reason="pip install matplotlib")
    assert (tmp_path / "divergence_perf.png").exists() and "divergence_perf.png" in text
