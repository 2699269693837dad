"""The perf pass at perf sizes, on the CPU with a fake device and fake timings.

A planted spec stands for a kernel: its perf case is checked against fp64 "on the device"
(the CPU here), timed beside its baseline and peer, and judged against its target. Negative
controls: a wrong kernel fails its check, a slow one misses its target, a missing peer is skipped
with its reason, and a spec without perf cases falls back to its largest accuracy case.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest
import torch

from parity import Case, KernelSpec, Peer, PerfTarget, nan_empty
from parity.backends.base import Backend
from parity.cases import by_level, product
from parity.perf import stage as perf_pass
from parity.perf.roofline import Roof
from parity.report.targets import judge

ROOF = Roof("Fake GPU", copy_gbps=1000.0, matmul_tflops=100.0, datasheet={"hbm_gbps": 1200.0})


class FakeDevice(Backend):
    """A run-mode backend on the CPU whose timer answers from a script: kernel, baseline, peer, ..."""

    name = "fakedev"
    mode = "run"

    def __init__(self, script: list[float]) -> None:
        super().__init__()
        self.script = list(script)

    def time_ms(self, fn: Callable[[], Any]) -> float:
        fn()  # the thunk must really run: a broken baseline or peer has to raise here
        return self.script.pop(0)


def scale_launch(factor: float) -> Callable[[Mapping[str, Any], Mapping[str, Any]], dict[str, torch.Tensor]]:
    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        out = nan_empty(inputs["x"].shape, inputs["x"].dtype, inputs["x"].device)
        out.copy_(inputs["x"] * factor)
        return {"out": out}
    return launch


def spec(*, factor: float = 2.0, peer: Peer | None = None, target: PerfTarget | None = None,
         perf_cases: tuple[Case, ...] = tuple(product(N=[4096], dtype=["fp32"])), name: str = "double") -> KernelSpec:
    return KernelSpec(
        name=name, family="planted", kernel=object(), launch=scale_launch(factor),
        reference=lambda inputs, p: {"out": 2.0 * inputs["x"]},
        cases=by_level(product(N=[16, 256], dtype=["fp32"])),
        make_inputs=lambda p, gen: {"x": torch.randn(p["N"], generator=gen)},
        bytes=lambda p: 8 * p["N"], baseline=lambda inputs, p: inputs["x"] * 2,
        perf_cases=perf_cases, bound="memory", peer=peer, perf_target=target)


def run(specs: list[KernelSpec], script: list[float], records: list[dict[str, Any]] | None = None,
        use_perf_cases: bool = True) -> tuple[list[dict[str, Any]], list[str]]:
    records = records if records is not None else []
    cases = {(s.name, c.id): (s, c) for s in specs for c in s.cases("quick")}
    lines: list[str] = []
    perf_pass.run(cases, records, FakeDevice(script), seed=0, mode="largest", specs=specs,
                  use_perf_cases=use_perf_cases, progress=lines.append, roof_probe=lambda b: ROOF)
    return records, lines


def test_a_perf_case_is_checked_timed_against_the_measured_roof_and_judged():
    target = PerfTarget(min_roofline_frac=0.85)
    (record,), lines = run([spec(target=target)], [0.032, 0.064])
    assert record["suite"] == "perf" and record["status"] == "passed" and record["case"] == "N=4096,dtype=fp32"
    p = record["perf"]
    assert p["ms"] == 0.032 and p["baseline_ms"] == 0.064 and p["bound"] == "memory"
    assert p["gbps"] == pytest.approx(8 * 4096 / 0.032 / 1e6)
    assert p["pct_of_roofline"] == pytest.approx(100 * p["gbps"] / 1000.0)
    assert p["pct_of_datasheet"] == pytest.approx(100 * p["gbps"] / 1200.0)
    assert p["roof_measured"]["copy_gbps"] == 1000.0
    assert judge(p).met is False  # 1.0 GB/s of a 1000 GB/s roof
    assert any("roof of" in line for line in lines)


def test_a_fast_kernel_meets_its_roofline_target():
    (record,), _ = run([spec(target=PerfTarget(min_roofline_frac=0.85))], [8 * 4096 / 950.0 / 1e6, 1.0])
    assert judge(record["perf"]).met is True  # 950 of 1000 GB/s


def test_planted_slow_kernel_misses_its_baseline_target():
    target = PerfTarget(min_speedup_vs_baseline=0.9)
    (record,), _ = run([spec(target=target)], [10.0, 1.0])
    verdict = judge(record["perf"])
    assert verdict.met is False and verdict.figure.startswith("0.100x")


def test_planted_wrong_kernel_fails_its_check_at_perf_size_and_is_still_timed():
    (record,), _ = run([spec(factor=3.0)], [1.0, 1.0])
    assert record["status"] == "failed" and "output 'out'" in record["reason"]
    assert record["perf"]["ms"] == 1.0


def test_peer_is_timed_beside_the_kernel_and_judged():
    ran = []
    peer = Peer("fakelib", prepare=lambda inputs, p: lambda: ran.append(p["N"]))
    (record,), _ = run([spec(peer=peer, target=PerfTarget(max_time_vs_peer=0.8))], [1.0, 2.0, 1.0])
    p = record["perf"]
    assert ran and p["peer"] == "fakelib" and p["peer_ms"] == 1.0
    assert judge(p).met is False  # 1.0x the peer's time against a goal of 0.8x


def test_missing_peer_is_skipped_with_its_reason_and_the_target_is_not_measured():
    peer = Peer("fla", prepare=lambda inputs, p: lambda: None,
                unavailable=lambda: "fla-core is not installed here; `pip install fla-core==0.6.0`")
    (record,), _ = run([spec(peer=peer, target=PerfTarget(max_time_vs_peer=1.0))], [1.0, 1.0])
    p = record["perf"]
    assert p["peer_ms"] is None and "pip install fla-core" in p["peer_skipped"]
    assert judge(p).met is None


def test_broken_baseline_costs_only_its_own_column():
    broken = spec()
    broken.baseline = lambda inputs, p: inputs["missing"]
    (record,), _ = run([broken], [1.0])
    assert record["perf"]["ms"] == 1.0 and record["perf"]["baseline_ms"] is None
    assert "KeyError" in record["perf"]["baseline_error"]


def test_spec_without_perf_cases_times_its_largest_passing_accuracy_case():
    plain = spec(perf_cases=(), name="plain")
    accuracy = [{"kernel": "plain", "case": c.id, "params": dict(c.params), "suite": "accuracy", "status": "passed"}
                for c in plain.cases("quick")]
    records, _ = run([plain], [1.0, 1.0], records=accuracy)
    timed = [r for r in records if r.get("perf")]
    assert [r["case"] for r in timed] == ["N=256,dtype=fp32"] and len(records) == 2
    assert timed[0]["perf"]["pct_of_roofline"] == pytest.approx(100 * 8 * 256 / 1.0 / 1e6 / 1000.0)


def test_host_tiers_never_time_perf_sizes():
    """interpret with an explicit --perf: perf cases would mean 2^28 elements through the interpreter."""
    assert perf_pass.perf_case_plan([spec()], use_perf_cases=False) == []
    records, _ = run([spec()], [], use_perf_cases=False)
    assert records == []


def test_perf_cases_follow_the_declared_order_and_skip_compile_probes():
    two = spec(perf_cases=tuple(product(N=[64, 128], dtype=["fp32"])))
    probe = spec(name="probe")
    probe.compile_only = True
    assert [c.id for _, c in perf_pass.perf_case_plan([two, probe], True)] == ["N=64,dtype=fp32", "N=128,dtype=fp32"]


SHRUNK_RUN = """
import dataclasses, json, sys
from parity.spec import registry
from parity.backends.base import Backend
from parity.perf.case import run_perf_case
from parity.perf.roofline import Roof
from parity.spec import Case

class Fake(Backend):
    name, mode = "interpret", "run"
    def time_ms(self, fn):
        fn()
        return 1.0

out = []
for spec in registry.build(["vector_add", "tril_mask", "flash_attention_fwd"])[1]:
    case = Case({**spec.perf_cases[-1].params, **json.loads(sys.argv[1])[spec.name]})
    r = run_perf_case(spec, case, Fake(), seed=0, roof=Roof("Fake", 1000.0, 100.0))
    out.append([spec.name, r["status"], r["reason"], r["perf"]["baseline_ms"], r["perf"]["bound"]])
print(json.dumps(out))
"""


def test_real_kernels_run_their_perf_cases_shrunk_under_the_interpreter():
    """The perf-case path with real kernels, references (flash's head-grouped one too) and baselines."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    shrink = {"vector_add": {"N": 4099, "dtype": "fp32"},
              "tril_mask": {"B": 1, "T": 130, "H": 2, "dtype": "fp32"},
              "flash_attention_fwd": {"B": 1, "T": 64, "H": 10, "D": 32, "dtype": "fp32"}}
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", SHRUNK_RUN, json.dumps(shrink)], cwd=root, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "TRITON_INTERPRET": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    rows.sort()
    assert [r[0] for r in rows] == ["flash_attention_fwd", "tril_mask", "vector_add"]
    assert all(status == "passed" and base == 1.0 for _, status, _, base, _ in rows), rows
    assert [r[4] for r in rows] == ["compute", "memory", "memory"]


def test_an_untimed_spec_is_left_out_of_both_perf_plans_and_named():
    """KernelSpec.timed=False: neither its perf cases nor its passing accuracy cases are timed."""
    untimed = spec(name="probe_only")
    untimed.timed = False
    accuracy = [{"kernel": "probe_only", "case": c.id, "params": dict(c.params), "suite": "accuracy",
                 "status": "passed"} for c in untimed.cases("quick")]
    assert perf_pass.perf_case_plan([untimed], True) == []
    records, lines = run([untimed, spec()], [1.0, 1.0, 1.0, 1.0], records=accuracy)
    assert {r["kernel"] for r in records if r.get("perf")} == {"double"}
    assert any("not timed" in line and "probe_only" in line for line in lines)


def test_peers_are_preloaded_once_each_in_the_background_and_a_failing_one_is_left_for_the_perf_pass():
    loaded: list[str] = []

    def broken() -> None:
        raise ImportError("planted: the library's import fails")

    fla_like = Peer("lib", lambda i, p: (lambda: None), preload=lambda: loaded.append("lib"))
    failing = Peer("bad", lambda i, p: (lambda: None), preload=broken)
    specs = [spec(peer=fla_like, name="a"), spec(peer=fla_like, name="b"), spec(peer=failing, name="c"),
             spec(name="no_peer")]
    thread = perf_pass.preload_peers(specs)
    thread.join(timeout=10)
    assert loaded == ["lib"] and not thread.is_alive()
    # negative control: nothing to preload, no thread
    assert perf_pass.preload_peers([spec(name="no_peer")]) is None
