"""Kernels for the ascend-lowered controls: the ABI (int32 tensors, i32/f32/i64/i1 scalars, a 3-D grid), bf16
arithmetic, tl.debug_barrier, a boolean tl.cumsum and a scalar tl.device_print.

Imported only after the ascend-lowered backend is prepared (the real JIT, not the interpreter).
"""

from __future__ import annotations

import triton
import triton.language as tl

try:  # triton-ascend's own libdevice (absent from upstream triton, where these controls skip)
    from triton.language.extra.ascend import libdevice
except ImportError:
    libdevice = None


@triton.jit(do_not_specialize=["n", "offset", "negate"])
def abi_kernel(x, out, n, scale, offset, negate, BLOCK: tl.constexpr):
    i_x, i_y, i_z = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    i_p = (i_z * tl.num_programs(1) + i_y) * tl.num_programs(0) + i_x
    o_x = i_p * BLOCK + tl.arange(0, BLOCK)
    m_x = o_x < n
    b_x = tl.load(x + o_x, mask=m_x, other=0)
    b_v = b_x.to(tl.float32) * scale + (offset % 1000).to(tl.float32)
    if negate:
        b_v = -b_v
    tl.store(out + o_x, b_v, mask=m_x)


@triton.jit
def bf16_kernel(x, y, out, n, BLOCK: tl.constexpr):
    """int->bf16 cast and bf16 arithmetic: LLVM computes each in f32 and calls __truncsfbf2 to round back."""
    o_x = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m_x = o_x < n
    b_i = tl.load(x + o_x, mask=m_x, other=0).to(tl.bfloat16)
    b_y = tl.load(y + o_x, mask=m_x, other=0.0)
    tl.store(out + o_x, b_i * b_y + b_y, mask=m_x)


@triton.jit
def barrier_kernel(x, scratch, out, BLOCK: tl.constexpr):
    """Each lane reads what the mirrored lane stored before the barrier: right only if the barrier orders them."""
    i_p = tl.program_id(0)
    o_x = i_p * BLOCK + tl.arange(0, BLOCK)
    tl.store(scratch + o_x, tl.load(x + o_x) * 2.0)
    tl.debug_barrier()
    tl.store(out + o_x, tl.load(scratch + i_p * BLOCK + (BLOCK - 1 - tl.arange(0, BLOCK))))


@triton.jit
def bool_cumsum_kernel(x, out, BLOCK: tl.constexpr):
    """tl.cumsum over a boolean tile (triton-ascend rejects it at compile time)."""
    o_x = tl.arange(0, BLOCK)
    tl.store(out + o_x, tl.cumsum(tl.load(x + o_x) > 0, 0).to(tl.int32))


@triton.jit
def print_kernel(x, out, BLOCK: tl.constexpr):
    """A leftover scalar tl.device_print: prints on every program, computes as without it."""
    i_p = tl.program_id(0)
    tl.device_print(" i_p: ", i_p)
    o_x = i_p * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o_x, tl.load(x + o_x) + 1.0)


@triton.jit
def ascend_libdevice_kernel(x, out, BLOCK: tl.constexpr):
    """triton-ascend's own libdevice: each call lowers to a bishengir `__hmf_*` scalar function."""
    o_x = tl.arange(0, BLOCK)
    b_x = tl.load(x + o_x)
    b_y = libdevice.log1p(tl.abs(b_x)) + libdevice.tan(b_x * 0.5) + libdevice.atan(b_x) + libdevice.tanh(b_x)
    tl.store(out + o_x, b_y + libdevice.reciprocal(b_x + 10.0) + libdevice.relu(b_x))


@triton.jit
def sort_gather_kernel(x, idx, sorted_out, gathered_out, R: tl.constexpr, C: tl.constexpr):
    """tl.sort along the rows (descending) and tl.gather along the columns of an [R, C] tile."""
    o_r, o_c = tl.arange(0, R), tl.arange(0, C)
    o_x = o_r[:, None] * C + o_c[None, :]
    b_x = tl.load(x + o_x)
    tl.store(sorted_out + o_x, tl.sort(b_x, 1, descending=True))
    tl.store(gathered_out + o_x, tl.gather(b_x, tl.load(idx + o_x), 0))


@triton.jit
def block_ptr_add_kernel(x, b, y, M, N, sxm, sbm, BM: tl.constexpr, BN: tl.constexpr):
    """y = x + b over [M, N] tiles through block pointers; b may be a broadcast row (sbm = 0)."""
    pid = tl.program_id(0)
    xp = tl.make_block_ptr(x, (M, N), (sxm, 1), (pid * BM, 0), (BM, BN), order=(1, 0))
    bp = tl.make_block_ptr(b, (M, N), (sbm, 1), (pid * BM, 0), (BM, BN), order=(1, 0))
    yp = tl.make_block_ptr(y, (M, N), (sxm, 1), (pid * BM, 0), (BM, BN), order=(1, 0))
    tl.store(yp, tl.load(xp, boundary_check=(0, 1)) + tl.load(bp, boundary_check=(0, 1)), boundary_check=(0, 1))
