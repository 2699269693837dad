"""Kernels that Triton's frontend rejects, for the key-line controls: the reason sits in a jit helper (the
call site's CompilationError carries only the source and a caret; the reason is its __cause__), or in the
kernel itself (the reason follows the caret)."""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def missing_attribute(x):
    return x.no_such_attribute  # planted: a tensor has no such attribute


@triton.jit
def calls_a_broken_helper(X, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(X + o, missing_attribute(tl.load(X + o)))


@triton.jit
def broken_itself(X, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(X + o, tl.load(X + o).no_such_attribute)


@triton.jit
def zeros_not_power_of_2(X, BLOCK: tl.constexpr):
    N_BLOCKS: tl.constexpr = BLOCK // 5  # planted: 3 rows
    b = tl.zeros((N_BLOCKS, 16), dtype=tl.float32)
    tl.store(X + tl.arange(0, 16), tl.sum(b, 0))


def frontend_error(kernel) -> BaseException:
    """The exception Triton's frontend raises compiling `kernel` for sm_90 (no GPU needed)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    src = ASTSource(fn=kernel, signature={"X": "*fp32", "BLOCK": "constexpr"}, constexprs={"BLOCK": 16})
    try:
        triton.compile(src, target=GPUTarget("cuda", 90, 32))
    except Exception as exc:
        return exc
    raise AssertionError(f"{kernel.__name__} compiled: the control plants nothing")


if __name__ == "__main__":  # run without TRITON_INTERPRET (the tests' process has it): the key lines as JSON
    import json
    import sys

    from parity.errors import error_text
    from parity.reasons import key_line
    from parity.report.findings import key_line as row_key

    exc = frontend_error(globals()[sys.argv[1]])
    text = error_text(exc)
    print(json.dumps({"own": str(exc), "text": text, "key": key_line(text), "row": row_key(text)}))
