"""Perf figures: roofline arithmetic, and the --perf path end to end on the CPU."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

from parity.perf.figures import PEAKS, roofline

ROOT = Path(__file__).resolve().parents[1]


def test_roofline_reports_bandwidth_throughput_and_the_larger_share_of_peak():
    peak = PEAKS["NVIDIA H200"]
    fig = roofline(n_bytes=4.8e9, n_flops=None, ms=2.0, peak=peak, dtype="bf16")
    assert math.isclose(fig["gbps"], 2400.0) and fig["tflops"] is None
    assert math.isclose(fig["pct_of_peak"], 50.0)
    fig = roofline(n_bytes=1e6, n_flops=989e9, ms=2.0, peak=peak, dtype="bf16")
    assert math.isclose(fig["pct_of_peak"], 50.0)  # compute-bound: the math share wins


def test_unknown_device_gets_figures_but_no_share():
    fig = roofline(n_bytes=1e9, n_flops=1e9, ms=1.0, peak=None, dtype="fp32")
    assert fig["gbps"] == 1000.0 and fig["pct_of_peak"] is None


def test_perf_flag_times_cases_and_the_report_shows_them(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites/test_accuracy.py", "-q", "-p", "no:xdist",
                           "-p", "no:cacheprovider", "--backend=interpret", "--kernels=vector_add", "--perf",
                           f"--results-dir={tmp_path}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    timed = [r for r in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines()) if r["perf"]]
    assert timed and all(r["perf"]["ms"] > 0 and r["perf"]["baseline_ms"] > 0 for r in timed)
    assert all(r["perf"]["gbps"] for r in timed if r["params"]["N"])
    assert "## Performance" in (tmp_path / "REPORT.md").read_text()


def test_largest_mode_times_one_case_per_kernel_and_dtype():
    from parity.perf.figures import case_size, pick_cases

    nbytes = lambda p: p["N"] * 2  # noqa: E731
    cands = [("add", f"N={n},dtype={dt}", {"N": n, "dtype": dt}, case_size(nbytes, None, {"N": n}))
             for dt in ("fp16", "fp32") for n in (1, 4096, 17)]
    assert sorted(pick_cases(cands, "largest")) == [("add", "N=4096,dtype=fp16"), ("add", "N=4096,dtype=fp32")]
    assert len(pick_cases(cands, "all")) == 6 and pick_cases(cands, "off") == []


def test_every_baseline_runs_on_the_case_the_perf_pass_would_time():
    """The perf pass times the largest full-level case; a baseline that cannot take its shape
    (a ragged T, a varlen batch) would leave that kernel without a speedup figure."""
    from parity.perf.figures import case_size
    from parity.run.runner import build_inputs
    from parity.spec import registry
    from parity.spec.inputs import to_device

    _, specs = registry.build(["basics", "gdn", "attention"])
    for spec in specs:
        if spec.baseline is None:
            continue
        cases = [c for c in spec.cases("full") if c.params.get("dtype", "fp32") == "fp32"
                 and not (spec.device_gib and spec.device_gib(c.params))]  # 2 GiB+ cases need the device
        if not cases:
            continue
        case = max(cases, key=lambda c: case_size(spec.bytes, spec.flops, c.params))
        inputs = to_device(build_inputs(spec, case, 0), "cpu")
        spec.baseline(inputs, case.params)  # raises on a shape it cannot take


def test_perf_all_times_every_passing_case(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "--perf-all", "suites/test_accuracy.py", "-q", "-p",
                           "no:xdist", "-p", "no:cacheprovider", "--backend=interpret", "--kernels=vector_add",
                           f"--results-dir={tmp_path}"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    passed = [r for r in records if r["status"] == "passed"]
    assert passed and all(r["perf"] and r["perf"]["ms"] is not None for r in passed)
    assert "parity perf: timing" in proc.stderr


def test_every_timed_kernel_has_a_baseline_and_its_perf_cases_are_well_formed():
    """Issue 19: a baseline for every kernel; perf cases at user sizes with bytes or flops to rate them."""
    from parity.spec import registry

    _, specs = registry.build(["basics", "gdn", "attention"])
    for spec in specs:
        if spec.compile_only:
            continue
        assert spec.baseline is not None, f"{spec.name}: no baseline to time beside it"
        for case in spec.perf_cases:
            assert spec.bytes or spec.flops, f"{spec.name}: perf case without bytes or flops"
            spec.tolerance_for(case.params)
            size = max(spec.bytes(case.params) if spec.bytes else 0, spec.flops(case.params) if spec.flops else 0)
            assert size >= 2**24, f"{spec.name}[{case.id}]: {size:.3g} is no size users run"


def test_issue_19_targets_are_declared_where_the_issue_sets_them():
    from parity.spec import registry

    specs = {s.name: s for s in registry.build(["basics", "gdn", "attention"])[1]}
    for name in ("vector_add", "softmax", "rmsnorm", "cumsum", "tril_mask"):
        assert specs[name].perf_target.min_roofline_frac == 0.85 and specs[name].bound == "memory"
    assert specs["matmul"].perf_target.min_speedup_vs_baseline == 0.9
    assert specs["flash_attention_fwd"].perf_target.min_speedup_vs_baseline == 1.0
    assert specs["gdn_chunk_fwd"].perf_target.max_time_vs_peer == 1.0
    assert specs["gdn_chunk_scaled_dot_kkt"].perf_target.max_time_vs_peer == 1.0
    assert specs["gdn_solve_tril"].perf_target.max_time_vs_peer == 0.8
    assert all(s.peer and s.peer.library == "fla" and len(s.perf_cases) == 2 for s in specs.values()
               if s.family == "gdn")


def test_gdn_bench_judges_against_fla_in_the_same_run_and_prints_no_stored_figures():
    from tests import bench_module

    gdn_perf = bench_module.load("gdn_perf")
    assert not hasattr(gdn_perf, "FLA_MS") and not hasattr(gdn_perf, "TARGET_MS")
    assert gdn_perf.verdict(0.33, 0.327, 1.0) is False  # planted: 1 % slower than fla misses
    assert gdn_perf.verdict(0.78, 1.33, 0.8) is True and gdn_perf.verdict(1.0, None, 1.0) is None
    args = gdn_perf.parse_args([])
    rows = [{"kernel": "kkt (g)", "ms": 0.5, "torch_ms": None, "fla_ms": 0.25, "target_vs_fla": 1.0,
             "meets_target": False, "error": None}]
    assert "MISSES target" in gdn_perf.render(rows, args) and "2.000" in gdn_perf.render(rows, args)
