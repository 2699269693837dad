"""A library-style module of @triton.jit helpers, read by kernels as `tle.x` (tests/test_source_module.py).

Like FlagGems' triton_lang_extension: jit helpers (one calling another), a constexpr, and a Triton
builtin re-exported under the module's own name.
"""

import triton
import triton.language as tl

SCALE = tl.constexpr(3)
maximum = tl.maximum  # a builtin re-export: imported as itself in a repro


@triton.jit
def wide_id(axis: tl.constexpr):
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def offsets(BLOCK: tl.constexpr):
    return wide_id(0) * BLOCK + tl.arange(0, BLOCK)
