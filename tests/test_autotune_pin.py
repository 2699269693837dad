"""Accuracy runs pin autotuned kernels to one config: stable, spread across specializations, restored."""

from __future__ import annotations

import triton
import triton.language as tl

from parity.run.autotune_pin import autotuners, pinned, specialization_key

CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in (16, 32, 64) for w in (1, 2)]


@triton.heuristics({"EVEN": lambda args: args["n"] % 2 == 0})
@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit
def scaled_copy(x, y, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + o, tl.load(x + o, mask=o < n), mask=o < n)


def test_the_autotuner_is_found_under_heuristics_and_pinned_to_one_config_then_restored():
    (tuner,) = autotuners([scaled_copy])
    with pinned([scaled_copy], "dtype=fp16,K=64") as picks:
        assert len(tuner.configs) == 1 and picks == {"scaled_copy": str(tuner.configs[0])}
    assert tuner.configs == CONFIGS


def test_the_pick_is_stable_and_different_specializations_cover_several_configs():
    def chosen(key: str) -> str:
        with pinned([scaled_copy], key) as picks:
            return picks["scaled_copy"]

    assert chosen("dtype=fp16,K=64") == chosen("dtype=fp16,K=64")
    assert len({chosen(f"dtype=fp16,K={k}") for k in range(40)}) == len(CONFIGS)


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
