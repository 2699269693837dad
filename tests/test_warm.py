"""The perf cases' autotune configs, compiled by an accuracy worker (parity.perf.warm).

The planted autotuned kernel runs under the interpreter; its warm-up (compile without launch) is
recorded instead of run. The worker must compile exactly the configs the autotuner would time, with
the arguments the library passed, run nothing at the perf size, and leave the autotuner as it was.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import torch
import triton

from parity.backends.base import Backend
from parity.cases import product
from parity.perf import warm
from parity.spec.perf import Peer
from tests import planted_autotune as planted


class FakeDevice(Backend):
    name = "fakedev"
    mode = "run"


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch) -> None:
    """Each test its own parity cache: a finished share leaves a marker there (warm.warmed_marker)."""
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def compiled(monkeypatch) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def warmup(*args: Any, **kwargs: Any) -> None:
        calls.append({"args": args, **kwargs})

    monkeypatch.setattr(planted.twice_kernel.fn, "warmup", warmup)
    return calls


SPEC = replace(planted.twice, perf_cases=tuple(product(N=[100], variant=[0], dtype=["fp32"])))
CASES = SPEC.cases("quick")  # the perf case is one of them, as a library op's largest full case is


def test_every_config_the_autotuner_would_time_is_compiled_with_the_launch_arguments(compiled):
    out = warm.perf_configs(SPEC, FakeDevice(), seed=0)
    assert out["configs"] == 2 and out["failed"] == 0 and "errors" not in out
    assert sorted(c["BLOCK"] for c in compiled) == [16, 32]
    for call in compiled:  # the perf-size tensors are gone by now: stand-ins keep what a compile reads
        x, _, n = call["args"]
        assert x.dtype == torch.float32 and x.numel() < n == 100 and "grid" in call and "warmup" not in call
    assert len(planted.twice_kernel.configs) == 2  # the pin is undone: the perf pass autotunes both


def test_negative_control_a_config_the_autotuner_prunes_is_not_compiled(compiled, monkeypatch):
    monkeypatch.setattr(planted.twice_kernel, "early_config_prune",
                        lambda configs, nargs, **kw: [c for c in configs if c.kwargs["BLOCK"] == 16])
    out = warm.perf_configs(SPEC, FakeDevice(), seed=0)
    assert out["configs"] == 0 and [c["BLOCK"] for c in compiled] == []  # one config left: nothing to time


def test_a_config_that_does_not_build_is_counted_not_raised(monkeypatch):
    def warmup(*args: Any, **kwargs: Any) -> None:
        if kwargs["BLOCK"] == 32:
            raise triton.CompilationError("planted", None, None)

    monkeypatch.setattr(planted.twice_kernel.fn, "warmup", warmup)
    assert warm.perf_configs(SPEC, FakeDevice(), seed=0)["failed"] == 1


def test_the_peers_autotuners_are_warmed_too(compiled, monkeypatch):
    peer_calls: list[int] = []
    monkeypatch.setattr(planted.peer_twice_kernel.fn, "warmup", lambda *a, **kw: peer_calls.append(kw["BLOCK"]))
    spec = replace(SPEC, peer=Peer("planted-lib", planted.peer_prepare))
    out = warm.perf_configs(spec, FakeDevice(), seed=0)
    assert out["configs"] == 2 + 3 and "errors" not in out
    assert sorted(peer_calls) == [8, 64, 128] and len(planted.peer_twice_kernel.configs) == 3


def test_negative_control_a_peer_that_is_unavailable_is_not_launched(compiled, monkeypatch):
    peer_calls: list[int] = []
    monkeypatch.setattr(planted.peer_twice_kernel.fn, "warmup", lambda *a, **kw: peer_calls.append(kw["BLOCK"]))
    spec = replace(SPEC, peer=Peer("planted-lib", planted.peer_prepare, lambda: "not installed"))
    assert warm.perf_configs(spec, FakeDevice(), seed=0)["configs"] == 2 and peer_calls == []


def test_workers_split_the_configs_in_the_order_the_launch_reaches_them(compiled):
    # one autotuner with two configs: one each; a third share gets nothing
    assert warm.perf_configs(SPEC, FakeDevice(), seed=0, part=(1, 2))["configs"] == 1
    assert warm.perf_configs(SPEC, FakeDevice(), seed=0, part=(0, 2))["configs"] == 1
    assert [c["BLOCK"] for c in compiled] == [32, 16]
    assert warm.perf_configs(SPEC, FakeDevice(), seed=0, part=(2, 3))["configs"] == 0


def test_a_stand_in_keeps_the_dtype_device_and_alignment_a_compile_reads():
    big = torch.zeros(1000, dtype=torch.bfloat16)
    for view in (big, big[1:], big[8:]):
        small = warm.stand_in(view)
        assert small.dtype == view.dtype and small.device == view.device and small.numel() < 100
        assert small.data_ptr() % 16 == view.data_ptr() % 16
    assert warm.stand_in(7) == 7 and warm.stand_in(None) is None


@pytest.mark.parametrize(("change", "expected"), [
    ({}, (0, 4)),
    ({"case": CASES[1]}, (1, 4)),  # four shares, from cases spread over the spec's six
    ({"case": CASES[2]}, None),
    ({"worker": "main"}, None),  # alone in one process, nothing runs beside it
    ({"perf": "off"}, None),
    ({"spec": replace(SPEC, perf_cases=())}, None),
    # a perf size no accuracy case has: warmed too, nothing of it is launched (dry_launches)
    ({"spec": replace(SPEC, perf_cases=tuple(product(N=[1 << 20], variant=[0], dtype=["fp32"])))}, (0, 4)),
])
def test_spread_cases_workers_warm_and_only_when_the_perf_pass_times_on_a_device(change, expected):
    args = {"spec": SPEC, "case": CASES[0], "perf": "largest", "worker": "gw0", **change}
    spec, case = args.pop("spec"), args.pop("case")
    assert warm.share(spec, case, FakeDevice(), cases=CASES, **args) == expected


def test_a_spec_with_several_autotuners_splits_them_over_cases_spread_through_its_list():
    spec = replace(SPEC, kernel=(planted.twice_kernel,) * 6)
    shares = [warm.share(spec, c, FakeDevice(), cases=CASES, perf="largest", worker="gw1") for c in CASES]
    assert shares == [(0, 4), (1, 4), None, (2, 4), (3, 4), None]


def test_a_dry_run_launches_no_kernel_and_a_real_one_does():

    from parity.run.autotune_pin import pinned_case
    from parity.run.runner import build_inputs

    case = SPEC.perf_cases[0]
    inputs = build_inputs(SPEC, case, 0)
    with warm.dry_launches(SPEC) as seen:
        dry = SPEC.launch(inputs, case.params)["out"]
    assert torch.isnan(dry).all() and len(seen) == 1  # the autotuner saw its arguments and ran nothing
    with pinned_case(SPEC, case.params) as picks:  # negative control: outside, the kernel writes its output
        real = SPEC.launch(inputs, case.params)["out"]
    assert not torch.isnan(real[:99]).any() and picks


def test_a_share_an_earlier_run_finished_is_skipped_until_what_it_compiled_from_changes(compiled):
    first = warm.perf_configs(SPEC, FakeDevice(), seed=0)
    assert first["configs"] == 2 and "skipped" not in first
    again = warm.perf_configs(SPEC, FakeDevice(), seed=0)
    assert again["configs"] == 0 and "earlier run" in again["skipped"] and len(compiled) == 2
    # negative controls: another share, or other perf cases, are not the finished one
    assert "skipped" not in warm.perf_configs(SPEC, FakeDevice(), seed=0, part=(1, 2))
    bigger = replace(SPEC, perf_cases=tuple(product(N=[200], variant=[0], dtype=["fp32"])))
    assert "skipped" not in warm.perf_configs(bigger, FakeDevice(), seed=0)


def test_a_share_with_errors_leaves_no_marker(monkeypatch):
    def broken(inputs, params):
        raise RuntimeError("planted launcher error")

    spec = replace(SPEC, launch=broken)
    assert warm.perf_configs(spec, FakeDevice(), seed=0)["errors"]
    assert "skipped" not in warm.perf_configs(spec, FakeDevice(), seed=0)


def test_a_device_slot_is_held_by_one_worker_at_a_time(tmp_path):
    """Workers hold perf-size inputs only inside a slot; with one slot the second waits for the first
    (flock conflicts between open files, so two threads stand for two workers)."""
    import threading

    order: list[str] = []
    second_in = threading.Event()

    def second(slots: int = 1) -> None:
        with warm.device_slot(tmp_path, slots=slots):
            order.append("second in")
            second_in.set()

    with warm.device_slot(tmp_path, slots=1):
        order.append("first in")
        waiter = threading.Thread(target=second)
        waiter.start()
        assert not second_in.wait(0.6)  # still held: the second worker waits
        order.append("first out")
    waiter.join(timeout=10)
    assert order == ["first in", "first out", "second in"]
    # negative control: with two slots the second gets in while the first still holds one
    second_in.clear()
    with warm.device_slot(tmp_path, slots=2):
        waiter = threading.Thread(target=second, args=(2,))
        waiter.start()
        assert second_in.wait(5)
    waiter.join(timeout=10)
