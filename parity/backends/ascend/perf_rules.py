"""Ascend performance advice from what a compile shows: pure functions over one launch's evidence.

The porting note behind this project gives four tuning rules for Triton on Ascend (use every core, tile
to stay inside the unified buffer, keep block accesses contiguous, avoid degenerate shapes) and names
mixing cube and vector work as the advanced step. Each rule here reads only what exists without an NPU:
the launch grid, the arch's core counts (parity.backends.ascend.arch), bishengir's core type for the
kernel (aic, aiv or mix), the kernel's source (its strided loops, block pointers, block constexprs) and
the launch's own tensors and integers. A finding names the line, the evidence and the change; it is
static advice, never a measured speed. A rule that had nothing to read says so in `not_checked`.

The rules live one family per module (perf_cores, perf_shapes, perf_contiguity; the cube-and-vector note
here); their evidence and shared source helpers in perf_evidence.
"""

from __future__ import annotations

import dataclasses

from parity.backends.ascend.perf_contiguity import check_contiguity
from parity.backends.ascend.perf_cores import check_cores
from parity.backends.ascend.perf_evidence import (
    Advice,
    Evidence,
    Finding,
    SourceText,
    TensorArg,
    live_source,
    tl_calls,
    where,
)
from parity.backends.ascend.perf_shapes import check_shapes

__all__ = ["RULES", "Advice", "Evidence", "Finding", "SourceText", "TensorArg", "advise"]

# tl calls that run on the vector cores of a mix kernel (reductions, transcendental and select work)
VECTOR_CALLS = frozenset({"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid", "softmax", "max", "min", "sum",
                          "maximum", "minimum", "where", "cumsum", "cumprod", "abs", "fma", "erf", "tanh"})
RULES = ("cores.idle", "cores.last_wave", "cores.hard_coded", "shape.block_of_one", "shape.under_32_bytes",
         "shape.one_program", "contiguity.block_ptr", "contiguity.tensor", "cv.mix", "ub.larger_fits")


# --- the advanced step: cube and vector in one kernel ---------------------------------------------------------

def check_cube_vector(ev: Evidence, advice: Advice) -> None:
    if ev.core_type is None:
        advice.not_checked["cv.mix"] = "bishengir's core type was not recorded (the compile did not reach it)"
        return
    if ev.core_type != "mix":
        return
    dots = [(s, line) for s in ev.sources for _, line in tl_calls(s, {"dot"})]
    vector = [(s, name, line) for s in ev.sources for name, line in tl_calls(s, VECTOR_CALLS)]
    if not dots or not vector:
        return
    ops = sorted({name for _, name, _ in vector})
    advice.findings.append(Finding(
        "cv.mix", where(*dots[0]),
        f"a cube-and-vector kernel (bishengir: mix): {len(dots)} tl.dot on the cube cores; {len(vector)} vector "
        f"calls ({', '.join(ops)}) on the vector cores, two per cube core",
        "advice only, no speedup claimed: tune the two parts together (triton-ascend's tile_mix_cube_loop, "
        "tile_mix_vector_loop, enable_hivm_auto_cv_balance options) and keep each tl.dot's tiles >= 16"))


def advise(ev: Evidence) -> Advice:
    """Every rule over one launch's evidence: the kernel's source as this launch compiles it (a constexpr
    `if` its constants rule out is not read: a block pointer under `if USE_G:` is not built when g is None).
    Helpers keep their text: their parameters need not carry the kernel's names."""
    if ev.sources:
        ev = dataclasses.replace(ev, sources=(live_source(ev.sources[0], ev.constants), *ev.sources[1:]))
    advice = Advice()
    check_cores(ev, advice)
    check_shapes(ev, advice)
    check_contiguity(ev, advice)
    check_cube_vector(ev, advice)
    # rule 2 needs compiles of larger configs and a run against fp64: parity.backends.ascend.perf_ub (in the
    # compile child) judges each kernel's largest-tile compile of a case, parity.perf.proof proves its claim
    advice.not_checked.setdefault("ub.larger_fits", "judged on the kernel's largest-tile compile of the case only")
    return advice
