"""Kernels of a small "workload" no spec describes: an autotuned scale and a plain row sum."""

import triton
import triton.language as tl


# one config: the interpreter has no benchmarker to time several (on a GPU, list more)
@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
@triton.heuristics({"EVEN": lambda a: a["n"] % 128 == 0})
@triton.jit
def scale_kernel(x, out, n, alpha, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) * alpha, mask=m)


@triton.jit
def row_sum_kernel(x, out, N, stride, BN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BN)
    v = tl.load(x + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(out + row, tl.sum(v, axis=0).to(out.dtype.element_ty))
