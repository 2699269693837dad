"""A planted kernel for the fit advisor's control: its only fitting tile is a specific smaller one.

On sm_86 (101,376 B of shared memory per block), launched at four stages, BM=256 needs 196,608 B and
BM=128 98,304 B (BM=256 fits only at two stages, 65,536 B); the static asserts refuse BK and BM below
128, so at the launch's own stage count the one tile that fits is BM=128, BK=128: the search must find
it by halving BM, not BK.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from parity.spec import Case, KernelSpec


@triton.jit
def planted_fit_kernel(a, c, K, BM: tl.constexpr, BK: tl.constexpr):
    tl.static_assert(BK >= 128, "planted: BK below 128 is refused")
    tl.static_assert(BM >= 128, "planted: BM below 128 is refused")
    o = tl.arange(0, BM)
    o_k = tl.arange(0, BK)
    b_acc = tl.zeros([BM, BM], dtype=tl.float32)
    for k0 in range(0, K, BK):
        b_a = tl.load(a + o[:, None] * K + (k0 + o_k)[None, :])
        b_acc = tl.dot(b_a, tl.trans(b_a), b_acc)
    tl.store(c + o[:, None] * BM + o[None, :], b_acc)


def _launch(inputs, p):
    c = torch.zeros(p["BM"] * p["BM"])
    planted_fit_kernel[(1,)](inputs["a"], c, p["K"], BM=p["BM"], BK=128, num_stages=4, num_warps=8)
    return {"c": c}


PLANTED_FIT = KernelSpec(name="planted_fit", family="planted", kernel=planted_fit_kernel, launch=_launch,
                         reference=lambda i, p: {}, cases=lambda level: [Case({"BM": 256, "K": 1024})],
                         make_inputs=lambda p, g: {"a": torch.zeros(256 * p["K"], dtype=torch.float16)},
                         compile_only=True)
