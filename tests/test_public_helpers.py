"""Public helpers every spec module may use: parity.known's shared divergences and
parity.current_backend(), which tells a launcher which backend it runs for."""

from __future__ import annotations

import torch

import parity
from parity import KernelSpec, known
from parity.backends.interpret import InterpretBackend
from parity.cases import by_level, product
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from parity.spec.context import backend_scope
from parity.spec.registry import build


def test_interpreter_bf16_covers_bf16_interpret_cases_only():
    assert known.INTERPRETER_BF16.matches("interpret", {"dtype": "bf16"})
    assert not known.INTERPRETER_BF16.matches("interpret", {"dtype": "fp16"})  # control: other dtypes
    assert not known.INTERPRETER_BF16.matches("cuda", {"dtype": "bf16"})  # control: other backends
    assert "negation and addition" in known.INTERPRETER_BF16.reason


def test_the_gdn_kernels_use_the_public_divergence():
    _, specs = build(["gdn"])
    users = [s.name for s in specs if known.INTERPRETER_BF16 in s.known_divergences]
    assert {"gdn_chunk_scaled_dot_kkt", "gdn_chunk_fwd", "gdn_chunk_fwd_o"} <= set(users), users


def _spec(seen: list) -> KernelSpec:
    def launch(inputs, p):
        seen.append((parity.current_backend(), parity.current_target()))
        return {"out": inputs["x"].clone()}

    return KernelSpec(name="which_backend", family="controls", kernel=object(), launch=launch,
                      reference=lambda inputs, p: {"out": inputs["x"]}, cases=by_level(product(N=[4])),
                      make_inputs=lambda p, gen: {"x": torch.ones(p["N"])})


def test_a_launch_is_told_its_backend(tmp_path):
    seen: list = []
    spec = _spec(seen)
    case = spec.cases("quick")[0]
    assert parity.current_backend() is None  # control: outside a run nobody claims a backend
    record, _ = run_case(spec, case, InterpretBackend(), seed=0, cache=ReferenceCache(tmp_path, enabled=False))
    assert record["status"] == "passed" and seen == [("interpret", None)]
    with backend_scope("ascend-compile"):
        assert (parity.current_backend(), parity.current_target()) == ("ascend-compile", "ascend")
    assert parity.current_backend() is None


def test_an_unlisted_autotuned_kernel_runs_under_the_interpreter(tmp_path):
    # a library launcher reaches autotuned kernels the spec does not list (so parity pins none)
    from tests.planted_autotune import twice_kernel

    def launch(inputs, p):
        x = inputs["x"]
        out = torch.empty_like(x)
        twice_kernel[lambda meta: ((x.numel() + meta["BLOCK"] - 1) // meta["BLOCK"],)](x, out, x.numel())
        return {"out": out}

    spec = KernelSpec(name="unlisted_tuner", family="controls", kernel=object(), launch=launch,
                      reference=lambda inputs, p: {"out": 2 * inputs["x"]}, cases=by_level(product(N=[64])),
                      make_inputs=lambda p, gen: {"x": torch.ones(p["N"])})
    backend = InterpretBackend()
    backend.prepare()
    try:
        record, _ = run_case(spec, spec.cases("quick")[0], backend, seed=0,
                             cache=ReferenceCache(tmp_path, enabled=False))
    finally:
        backend.restore()  # torch.cuda answers for a device only inside this case
    # before: "0 active drivers". Now the unlisted Autotuner is pinned like a listed one, so a case lands
    # on twice_kernel's planted BLOCK=32 config, which drops the last element, or on the good one
    pick = (record.get("autotune_pinned") or {}).get("twice_kernel", "")
    assert pick.startswith("BLOCK: "), record
    if pick.startswith("BLOCK: 32"):
        assert record["status"] == "failed" and "dim0 63 only" in record["reason"], record["reason"]
    else:
        assert record["status"] == "passed", record["reason"]
