"""The stand-in torch_npu (tests/standin_npu) against torch_npu's documented API, and the ascend backend's own calls
on it: device selection, events, do_bench_npu's units, the tensors, a kernel that really computes.

Runs where the stand-in is importable: `nox -s ascend-standin` puts it on PYTHONPATH in triton-ascend's venv
with ascend-lowered's tools. Elsewhere every test skips with that command."""

from __future__ import annotations

import time

import pytest

torch_npu = pytest.importorskip("torch_npu", reason="the stand-in torch_npu runs in `nox -s ascend-standin` "
                                "(tests/standin_npu on PYTHONPATH, triton-ascend and LLVM 19 installed)")
if not getattr(torch_npu, "STANDIN", False):
    pytest.skip("this is Huawei's torch_npu, not the stand-in: these tests check the stand-in",
                allow_module_level=True)

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


def test_device_selection_follows_torch_npu():
    assert torch.npu.is_available() and torch.npu.device_count() == 1
    torch.npu.set_device(0)
    assert torch.npu.current_device() == 0
    with pytest.raises(RuntimeError, match="Invalid device"):
        torch.npu.set_device(1)
    with pytest.raises(RuntimeError, match="Invalid device"):
        torch.npu.set_device("npu:1")
    props = torch.npu.get_device_properties(0)
    assert props.total_memory > 0 and props.cube_core_num == 20 and props.vector_core_num == 40
    assert "stand-in" in torch.npu.get_device_name(0)  # never passes for a real device


def test_events_measure_milliseconds_and_refuse_untimed_ones():
    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    time.sleep(0.02)
    end.record()
    torch.npu.synchronize()
    assert 15 <= start.elapsed_time(end) <= 500
    untimed = torch.npu.Event()
    untimed.record()
    with pytest.raises(RuntimeError, match="enable_timing"):
        untimed.elapsed_time(end)


def test_tensors_on_npu_are_npu_tensors_of_host_memory():
    x = torch.arange(4.0).to("npu:0")
    assert x.device.type == "npu" and x.cpu().device.type == "cpu"
    assert torch.empty(3, device="npu").device.type == "npu"
    assert torch.equal(x.cpu(), torch.arange(4.0))


@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(out + o, tl.load(x + o, mask=m) + tl.load(y + o, mask=m), mask=m)


@triton.jit
def _add_planted(x, y, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(out + o, tl.load(x + o, mask=m) - tl.load(y + o, mask=m), mask=m)  # planted: subtracts


@pytest.mark.parametrize("kernel, right", [(_add, True), (_add_planted, False)])
def test_a_launch_on_npu_tensors_computes(kernel, right):
    x, y = torch.randn(1000).to("npu"), torch.randn(1000).to("npu")
    out = torch.full((1000,), float("nan"), device="npu")
    kernel[(triton.cdiv(1000, 256),)](x, y, out, 1000, BLOCK=256)
    torch.npu.synchronize()
    assert torch.allclose(out.cpu(), (x + y).cpu()) is right


def _sleep_2ms():
    time.sleep(0.002)


def test_do_bench_npu_is_microseconds_and_time_ms_says_milliseconds(monkeypatch):
    from triton.testing import do_bench_npu

    from parity.backends.ascend import run

    raw = float(do_bench_npu(_sleep_2ms, warmup=1, active=5))
    assert 1500 <= raw <= 50_000, raw  # op_statistic.csv's Avg Time(us)
    backend = run.AscendBackend()
    assert 1.5 <= backend.time_ms(_sleep_2ms) <= 50
    # negative control: read as milliseconds (what time_ms did before), the same call is ~1000x off
    monkeypatch.setattr(run, "DO_BENCH_NPU_MS_PER_UNIT", {})
    assert backend.time_ms(_sleep_2ms) >= 1500


def test_do_bench_npu_ms_per_unit_by_release():
    from parity.backends.ascend.run import do_bench_npu_ms_per_unit

    assert do_bench_npu_ms_per_unit("3.2.0") == 1e-3
    assert do_bench_npu_ms_per_unit("3.2.0rc1") == 1e-3
    assert do_bench_npu_ms_per_unit("3.6.0") == 1.0


def test_profiler_schedule_and_table(tmp_path):
    from torch_npu import profiler

    action = profiler.schedule(wait=0, warmup=2, active=3, repeat=1, skip_first=1)
    got = [action(i).name for i in range(7)]
    assert got == ["NONE", "WARMUP", "WARMUP", "RECORD", "RECORD", "RECORD_AND_SAVE", "NONE"]
    with profiler.profile(activities=[profiler.ProfilerActivity.NPU], schedule=action,
                          on_trace_ready=profiler.tensorboard_trace_handler(str(tmp_path))) as prof:
        for _ in range(6):
            _sleep_2ms()
            prof.step()
    table = next(tmp_path.rglob("op_statistic.csv")).read_text().splitlines()
    assert table[0].split(",")[6] == "Avg Time(us)" and table[1].split(",")[3] == "3"
    assert "ASCEND_PROFILER_OUTPUT" in str(next(tmp_path.rglob("op_statistic.csv")))


def test_autotuner_benchmarks_through_the_npu_driver():
    driver = triton.runtime.driver.active
    assert driver.get_device_interface() is torch.npu
    ms = driver.get_benchmarker()(_sleep_2ms)
    assert 1.5 <= float(ms if not isinstance(ms, list) else ms[0]) <= 50


def test_the_ascend_backend_on_the_stand_in(monkeypatch):
    from parity.backends.ascend.run import AscendBackend

    backend = AscendBackend()
    assert backend.unavailable() is None
    backend.select_device(3)
    assert backend.device == "npu:0"
    assert backend.memory_gib() == 64
    env = backend.env()
    assert env["torch_npu"].endswith("+standin") and env["target_arch"] == "Ascend910B3"
    assert env["num_aicore"] == 20 and env["cann"] is None
    monkeypatch.setenv("PARITY_STANDIN_NPU_COUNT", "2")
    backend.select_device(3)  # worker 3 on two devices: device 1
    assert backend.device == "npu:1" and torch.npu.current_device() == 1
    torch.npu.set_device(0)
