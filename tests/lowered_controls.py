"""A kernel for the ascend-lowered ABI control: int32 tensors, i32/f32/i64/i1 scalars and a 3-D grid.

Imported only after the ascend-lowered backend is prepared (the real JIT, not the interpreter).
"""

from __future__ import annotations

import triton
import triton.language as tl


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
