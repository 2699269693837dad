"""Kernels that fail to compile, and a generator of their compile repros (run in a fresh process).

Not collected (no test_ prefix): tests/test_compile_repro.py runs `python -m
tests.compile_repro_controls OUT BACKEND` with the interpreter off, because the engine
self-tests turn it on for their whole process.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from parity.driver import pipeline
from parity.results.files import plain
from parity.spec import Case, KernelSpec


@triton.jit
def index_by_tensor_kernel(x, out, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    b_x = tl.load(x + o)
    tl.store(out + o, b_x[o])  # the frontend rejects indexing a tensor by a tensor


@triton.jit
def big_tile_kernel(a, c, K, B: tl.constexpr, BK: tl.constexpr):
    o = tl.arange(0, B)
    o_k = tl.arange(0, BK)
    b_acc = tl.zeros([B, B], dtype=tl.float32)
    for k0 in range(0, K, BK):
        b_a = tl.load(a + o[:, None] * K + (k0 + o_k)[None, :])
        b_acc = tl.dot(b_a, tl.trans(b_a), b_acc)
    tl.store(c + o[:, None] * B + o[None, :], b_acc)


def _index_launch(inputs, p):
    out = torch.empty_like(inputs["x"])
    index_by_tensor_kernel[(1,)](inputs["x"], out, BLOCK=p["n"])
    return {"out": out}


def _device_typed_launch(inputs, p):
    """A launcher that, like mojo's swa, only goes on for tensors of the target's device type."""
    if inputs["x"].device.type != "cuda":
        raise RuntimeError(f"expected cuda tensors, got {inputs['x'].device.type}")
    return _index_launch(inputs, p)


def _tile_launch(inputs, p):
    c = torch.empty(p["B"] * p["B"])
    big_tile_kernel[(1,)](inputs["a"], c, p["K"], B=p["B"], BK=p["BK"], num_stages=p["stages"], num_warps=8)
    return {"out": c}


def _spec(name, kernel, launch, case, make_inputs):
    return KernelSpec(name=name, family="controls", kernel=kernel, launch=launch, reference=lambda i, p: {},
                      cases=lambda level: [case], make_inputs=make_inputs, compile_only=True)


CUDA_SPECS = [
    _spec("ctl_index", index_by_tensor_kernel, _index_launch, Case({"n": 16}),
          lambda p, g: {"x": torch.zeros(p["n"])}),
    _spec("ctl_device_typed", index_by_tensor_kernel, _device_typed_launch, Case({"n": 16}),
          lambda p, g: {"x": torch.zeros(p["n"])}),
    _spec("ctl_big_tile", big_tile_kernel, _tile_launch, Case({"B": 256, "BK": 128, "K": 1024, "stages": 4}),
          lambda p, g: {"a": torch.zeros(p["B"] * p["K"], dtype=torch.float16)}),
]


def ascend_specs() -> list[KernelSpec]:
    """A 256x256 fp16 matmul tile overflows a local buffer in UB (tests/ascend_controls.py)."""
    from dataclasses import replace

    from tests import ascend_controls  # only once the compile-only driver is installed

    return [replace(ascend_controls.MATMUL, cases=lambda level: [Case({"size": 512, "tile": 256})],
                    make_inputs=lambda p, g: {"a": torch.zeros(p["size"], p["size"], dtype=torch.float16)})]


def generate(out: Path, backend_name: str) -> list[dict]:
    """Run each spec's case through the compile tier and write its repros under out."""
    from parity.backends import get_backend
    from parity.run.compile_judge import compile_records
    from parity.run.runner import build_inputs

    backend = get_backend(backend_name)
    backend.prepare()
    reason = backend.unavailable()
    if reason:
        return [{"skip": reason}]
    specs = CUDA_SPECS if backend_name == "cuda-compile" else ascend_specs()
    records = []
    for spec in specs:
        case = spec.cases("quick")[0]
        inputs = build_inputs(spec, case, 0)
        recs = compile_records(backend.name, spec, case, backend.compile_case(spec, case, inputs))
        pipeline.judge_and_repro_compiles(recs, spec, case, backend, inputs, out)
        records += recs
    return records


if __name__ == "__main__":
    print(json.dumps(plain(generate(Path(sys.argv[1]), sys.argv[2]))))  # typed owners serialise at the results edge
