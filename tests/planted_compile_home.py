"""A kernel that compiles for sm_90 without a GPU: run as a script, it compiles once, so Triton writes its
cache wherever TRITON_CACHE_DIR / TRITON_HOME (or, without them, ~/.triton) say."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def copy(X, Y, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(Y + o, tl.load(X + o))


if __name__ == "__main__":
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    src = ASTSource(fn=copy, signature={"X": "*fp32", "Y": "*fp32", "BLOCK": "constexpr"}, constexprs={"BLOCK": 16})
    triton.compile(src, target=GPUTarget("cuda", 90, 32))
    print("compiled")
