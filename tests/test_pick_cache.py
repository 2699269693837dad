"""The perf pass reuses autotune picks across runs (parity.perf.pick_cache).

A planted autotuned kernel runs under the interpreter with a benchmarker that counts its calls and
prefers one config. The first run times every config and stores the pick; a second run (a fresh
Autotuner cache, as a new process has) launches the stored pick without timing one config. Negative
controls: --retune, a changed config list and a changed kernel source each time the configs again.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from parity.perf import pick_cache
from parity.perf.pick_cache import PickStore

KERNEL = '''
import triton
import triton.language as tl

BENCHED = []


def bench(kernel_call, quantiles=None, **kwargs):
    """Counts each config timed; BLOCK=32 is the fastest, so the pick differs from the first config."""
    kernel_call()
    BENCHED.append(1)
    ms = 1.0 if CURRENT[0] == 32 else 2.0
    return [ms] * len(quantiles) if quantiles else ms


CURRENT = [0]


def note(nargs):
    CURRENT[0] = nargs["BLOCK"]


CONFIGS = [triton.Config({{"BLOCK": b}}, pre_hook=note) for b in {blocks}]


@triton.autotune(configs=CONFIGS, key=["n"], do_bench=bench)
@triton.jit
def scale(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK){edit}
    tl.store(out + o, 2.0 * tl.load(x + o, mask=o < n), mask=o < n)
'''


def load(tmp_path: Path, name: str, blocks: tuple[int, ...] = (16, 32, 64), edit: str = "") -> ModuleType:
    path = tmp_path / f"{name}.py"
    path.write_text(KERNEL.format(blocks=list(blocks), edit=edit))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the jit decorator reads the source through the module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path / "cache"))
    yield


def launch(module: ModuleType, n: int = 100) -> torch.Tensor:
    x = torch.arange(n, dtype=torch.float32)
    out = torch.full_like(x, float("nan"))
    module.scale[lambda meta: ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)](x, out, n)
    return out


def run(module: ModuleType, *, retune: bool = False) -> tuple[int, PickStore, Any]:
    """One perf pass's worth: a fresh in-memory autotune cache, then a launch inside reusing_picks."""
    module.scale.cache.clear()
    module.BENCHED.clear()
    store = PickStore(device="Fake GPU", triton_version="3.x", retune=retune)
    with pick_cache.reusing_picks(store):
        out = launch(module)
    assert torch.equal(out, 2.0 * torch.arange(100, dtype=torch.float32))
    (picked,) = module.scale.cache.values()
    return len(module.BENCHED), store, picked


def test_a_second_run_reuses_the_pick_and_times_no_config(tmp_path):
    module = load(tmp_path, "planted_pick_a")
    benched, store, picked = run(module)
    assert benched == 3 and store.counts() == {"reused": 0, "tuned": 1} and picked.kwargs == {"BLOCK": 32}
    benched, store, again = run(module)
    assert benched == 0 and store.counts() == {"reused": 1, "tuned": 0}
    assert again is module.CONFIGS[1]  # the tuner's own config object, pre_hook and all


def test_negative_control_retune_times_every_config_again(tmp_path):
    module = load(tmp_path, "planted_pick_b")
    run(module)
    benched, store, _ = run(module, retune=True)
    assert benched == 3 and store.counts() == {"reused": 0, "tuned": 1}


def test_negative_control_a_changed_config_list_tunes_afresh(tmp_path):
    run(load(tmp_path, "planted_pick_c"))
    benched, store, picked = run(load(tmp_path, "planted_pick_c", blocks=(16, 32)))
    assert benched == 2 and store.tuned == 1 and picked.kwargs == {"BLOCK": 32}


def test_negative_control_a_changed_kernel_source_tunes_afresh(tmp_path):
    run(load(tmp_path, "planted_pick_d"))
    benched, store, _ = run(load(tmp_path, "planted_pick_d", edit="\n    o = o + 0"))
    assert benched == 3 and store.tuned == 1


def test_another_device_or_triton_version_is_another_key(tmp_path):
    module = load(tmp_path, "planted_pick_e")
    a = PickStore(device="NVIDIA H200", triton_version="3.6.0")
    assert a.path(module.scale) != PickStore(device="NVIDIA H100", triton_version="3.6.0").path(module.scale)
    assert a.path(module.scale) != PickStore(device="NVIDIA H200", triton_version="3.7.0").path(module.scale)


def test_a_torn_store_file_is_a_miss_not_a_crash(tmp_path):
    module = load(tmp_path, "planted_pick_f")
    run(module)
    store = PickStore(device="Fake GPU", triton_version="3.x")
    store.path(module.scale).write_text("{not json")
    benched, _, _ = run(module)
    assert benched == 3


def test_the_key_is_the_autotuners_own():
    class Tuner:
        arg_names, keys = ["x", "n", "BLOCK"], ["n"]

    x = torch.zeros(3, dtype=torch.bfloat16)
    assert pick_cache.tuning_key(Tuner(), (x, 7), {"grid": None}) == (7, "torch.bfloat16")


def test_the_perf_pass_reuses_the_pick_on_its_second_run_and_says_so(tmp_path):
    """End to end through perf_pass.run: the record of a perf case counts what its autotuners did."""
    from parity import KernelSpec, nan_empty
    from parity.backends.base import Backend
    from parity.cases import by_level, product
    from parity.perf import stage as perf_pass

    module = load(tmp_path, "planted_pick_g")

    class FakeDevice(Backend):
        name, mode = "fakedev", "run"

        def time_ms(self, fn: Any) -> float:
            fn()
            return 1.0

    def launch_spec(inputs: Any, p: Any) -> dict[str, torch.Tensor]:
        x = inputs["x"]
        out = nan_empty(x.shape, x.dtype, x.device)
        module.scale[lambda meta: ((x.numel() + meta["BLOCK"] - 1) // meta["BLOCK"],)](x, out, x.numel())
        return {"out": out}

    spec = KernelSpec(name="planted_scale", family="planted", kernel=module.scale, launch=launch_spec,
                      reference=lambda inputs, p: {"out": 2.0 * inputs["x"]},
                      cases=by_level(product(N=[16], dtype=["fp32"])),
                      make_inputs=lambda p, gen: {"x": torch.randn(p["N"], generator=gen)},
                      perf_cases=tuple(product(N=[100], dtype=["fp32"])))

    def perf_run(retune: bool = False) -> tuple[int, dict[str, Any]]:
        module.scale.cache.clear()
        module.BENCHED.clear()
        records: list[dict[str, Any]] = []
        perf_pass.run({}, records, FakeDevice(), seed=0, mode="largest", specs=[spec], use_perf_cases=True,
                      progress=lambda line: None, roof_probe=lambda b: None, retune=retune)
        (record,) = records
        assert record["status"] == "passed" and record["perf"]["ms"] == 1.0  # still timed in this run
        picks = record["perf"]["autotune_picks"]
        assert list(picks) == ["scale"] and "BLOCK: " in picks["scale"], picks  # what it ran with, tuned or reused
        return len(module.BENCHED), record["perf"]["autotune"]

    assert perf_run() == (3, {"reused": 0, "tuned": 1})
    assert perf_run() == (0, {"reused": 1, "tuned": 0})
    assert perf_run(retune=True) == (3, {"reused": 0, "tuned": 1})


def test_an_accuracy_worker_compiles_only_the_stored_pick(tmp_path, monkeypatch):
    """parity.perf.warm: where a pick is stored the perf pass launches that alone, so warming compiles it
    alone; with --retune (or no pick) every config the autotuner would time."""
    from parity.perf import warm

    module = load(tmp_path, "planted_pick_h")
    run(module)
    compiled: list[int] = []
    monkeypatch.setattr(module.scale.fn, "warmup", lambda *a, **k: compiled.append(k["BLOCK"]))
    x = torch.zeros(100)
    args, kwargs = (x, x, 100), {"grid": (1,), "warmup": False}

    def warm_compile(store: PickStore) -> list[bool]:  # what perf_configs does with one autotuner's arguments
        configs = warm.planned(module.scale, args, kwargs, store)
        return [warm.compile_one(module.scale, args, kwargs, c) for c in configs]

    assert warm_compile(PickStore(device="Fake GPU", triton_version="3.x")) == [True] and compiled == [32]
    compiled.clear()
    warm_compile(PickStore(device="Fake GPU", triton_version="3.x", retune=True))
    assert compiled == [16, 32, 64]
