"""Accuracy runs pin autotuned kernels to one config: stable, spread across binaries, restored."""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl

from parity.run.autotune_pin import CONFIGS_PER_BINARY, autotuners, pinned, specialization_key

CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in (16, 32, 64) for w in (1, 2)]


@triton.heuristics({"EVEN": lambda args: args["n"] % 2 == 0})
@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def scaled_copy(x, y, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + o, tl.load(x + o, mask=o < n), mask=o < n)


@pytest.fixture
def launches(monkeypatch):
    """Autotuner.run replaced by a stand-in that records the configs each launch sees (no device needed)."""
    from triton.runtime.autotuner import Autotuner

    seen: list[list] = []
    monkeypatch.setattr(Autotuner, "run", lambda self, *a, **k: seen.append(list(self.configs)))
    return seen


def _launch(dtype: torch.dtype, n: int, even: bool) -> None:
    (tuner,) = autotuners([scaled_copy])
    x = torch.zeros(4, dtype=dtype)
    tuner.run(x, x, n, EVEN=even)  # what Heuristics hands the Autotuner: the call's args, EVEN by keyword


def test_the_autotuner_is_found_under_heuristics_and_pinned_at_launch_then_restored(launches):
    (tuner,) = autotuners([scaled_copy])
    with pinned([scaled_copy], "dtype=fp16,K=64") as picks:
        _launch(torch.float16, 64, True)
    assert len(launches[0]) == 1 and picks == {"scaled_copy": str(launches[0][0])}
    assert tuner.configs == CONFIGS


def chosen(specialization: str, dtype: torch.dtype, n: int, even: bool) -> str:
    with pinned([scaled_copy], specialization) as picks:
        _launch(dtype, n, even)
    return picks["scaled_copy"]


def test_the_pick_is_stable_and_different_binaries_cover_several_configs(launches):
    assert chosen("K=64", torch.float16, 64, True) == chosen("K=64", torch.float16, 64, True)
    binaries = [(dtype, n, even) for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64,
                                               torch.int32, torch.int64) for n in (1, 64, 100) for even in (0, 1)]
    assert len({chosen("K=64", *b) for b in binaries}) == len(CONFIGS)


def test_cases_that_share_a_binary_share_at_most_a_few_configs(launches):
    """A case's batch size or seed (not part of the binary) must not buy a compile of its own; the negative
    control: the same cases on different binaries do spread."""
    same_binary = {chosen(f"B={b}", torch.float16, 64, True) for b in range(40)}
    assert 1 <= len(same_binary) <= CONFIGS_PER_BINARY
    assert len({chosen(f"B={b}", dtype, 64, True) for b in range(40)
                for dtype in (torch.float16, torch.float32, torch.int32)}) > CONFIGS_PER_BINARY


def test_dynamic_args_do_not_change_the_specialization():
    a = specialization_key({"T": 63, "K": 64, "dtype": "fp16"}, ("T",))
    b = specialization_key({"T": 1000, "K": 64, "dtype": "fp16"}, ("T",))
    assert a == b != specialization_key({"T": 63, "K": 128, "dtype": "fp16"}, ("T",))


class WarpSpecConfig:
    """Triton 3.2's Config shape: Hopper warp-specialization fields that its interpreter passes on."""

    def __init__(self) -> None:
        self.kwargs, self.num_warps, self.num_buffers_warp_spec = {"BLOCK": 16}, 4, 0

    def all_kwargs(self) -> dict:
        extra = {"num_buffers_warp_spec": self.num_buffers_warp_spec} if self.num_buffers_warp_spec is not None else {}
        return {**self.kwargs, "num_warps": self.num_warps, **extra}


def test_configs_lose_the_fields_the_interpreter_would_pass_to_the_kernel(monkeypatch):
    from triton.runtime import interpreter

    from parity.run.autotune_pin import interpretable

    monkeypatch.setattr(interpreter, "RESERVED_KWS", ["num_warps", "num_stages", "num_ctas", "grid"], raising=False)
    config = WarpSpecConfig()
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    fixed = interpretable(config)
    assert fixed.all_kwargs() == {"BLOCK": 16, "num_warps": 4} and config.num_buffers_warp_spec == 0
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert interpretable(config) is config  # compiled tiers keep the config as it is
    assert interpretable(CONFIGS[0]) is CONFIGS[0]


def test_an_autotuner_the_spec_does_not_list_is_pinned_when_the_launch_reaches_it(monkeypatch):
    """A library's helper kernels are autotuned too; a spec rarely lists them all (fla's GDN forward
    reaches a dozen), and an accuracy pass must not run their autotuning (minutes on a GPU)."""
    from triton.runtime.autotuner import Autotuner

    (tuner,) = autotuners([scaled_copy])
    seen: list[int] = []
    monkeypatch.setattr(Autotuner, "run", lambda self, *a, **k: seen.append(len(self.configs)))
    with pinned([], "dtype=fp16,K=64") as picks:  # listed: nothing
        tuner.run()
        tuner.run()
    assert seen == [1, 1] and list(picks) == ["scaled_copy"]
    assert tuner.configs == CONFIGS  # restored
    tuner.run()  # control: outside a pinned launch the Autotuner sees every config
    assert seen[-1] == len(CONFIGS)


def test_a_pin_never_picks_a_config_the_autotuners_own_prune_drops(launches, monkeypatch):
    (tuner,) = autotuners([scaled_copy])
    seen_by_prune: list = []

    def only_block_16(configs, named_args, **kwargs):
        seen_by_prune.append((sorted(named_args), sorted(kwargs)))
        return [c for c in configs if c.kwargs["BLOCK"] == 16]

    monkeypatch.setattr(tuner, "early_config_prune", only_block_16)
    picked = {chosen("K=64", dtype, n, even) for dtype in (torch.float16, torch.float32, torch.int32)
              for n in (1, 64, 100) for even in (0, 1)}
    assert {p.split(",")[0] for p in picked} == {"BLOCK: 16"}, picked
    assert seen_by_prune[0] == (["n", "x", "y"], ["EVEN"])  # as Triton calls it: args by name, the rest as keywords
    assert all(len(seen) == 1 for seen in launches)
    # a prune that leaves one config: that one runs, untimed (not the tuner's whole list)
    monkeypatch.setattr(tuner, "early_config_prune", lambda configs, named, **kw: configs[:1])
    launches.clear()
    with pinned([scaled_copy], "K=64"):
        _launch(torch.float16, 64, True)
    assert launches[-1] == CONFIGS[:1]
    monkeypatch.setattr(tuner, "early_config_prune", None)  # negative control: unpruned, the pins spread again
    assert len({chosen("K=64", dtype, n, 1) for dtype in (torch.float16, torch.float32, torch.int32)
                for n in (1, 64, 100)}) > 2
