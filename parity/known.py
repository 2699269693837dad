"""Known divergences that every spec may share: import them instead of rediscovering them.

Each is a parity.KnownDivergence with its public source; a spec lists it in `known_divergences`.
A tier's own defects need no opting in: parity.triage.limits applies them to every kernel (with a probe
that retires each once the installed version is fixed); INTERPRETER_BF16 stays for the specs that name it.
The published silent wrong results of triton-ascend on a real NPU, which no CPU tier reproduces, are parity.known_npu:
a pass with one's pattern names it instead of becoming a known divergence.
"""

from __future__ import annotations

from parity.backends import tiers_where
from parity.spec import KnownDivergence

# Triton 3.6's interpreter keeps bf16 tensors as uint16 in numpy and applies some operations to the
# raw bit patterns: tl.dot multiplies them, and negation and addition are wrong too (measured with
# triton 3.6.0; the link below). Any bf16 case of a kernel that does arithmetic on bf16 tiles is affected.
INTERPRETER_BF16 = KnownDivergence(
    backend="interpret", applies=lambda p: p.get("dtype") == "bf16",
    reason="Triton's interpreter keeps bf16 as uint16 and applies tl.dot, negation and addition to the raw "
           "bit patterns",
    link="https://github.com/triton-lang/triton/issues/11584")

# the tiers that build with triton-ascend, as the backends declare them
ASCEND_BACKENDS = tiers_where(language="triton-ascend")

# triton-ascend 3.2.0's frontend reads options.default_dot_input_precision when tl.dot gets
# input_precision=None as a constexpr (a launcher passing its fp32 precision through for every dtype);
# NPUOptions has no such field. Shared by matmul, matmul_tma and matmul_persistent.
ASCEND_DOT_DEFAULT_PRECISION = tuple(
    KnownDivergence(backend=b, applies=lambda p: p.get("dtype") != "fp32",
                    reason="triton-ascend 3.2.0's NPUOptions has no default_dot_input_precision, so "
                           "tl.dot with input_precision=None fails in the frontend",
                    link="https://github.com/triton-lang/triton-ascend/pull/617")
    for b in ASCEND_BACKENDS)

# fp32 tl.dot on Ascend takes "ieee" or "hf32"; "tf32" is rejected with a message naming hf32.
ASCEND_REJECTS_TF32 = tuple(
    KnownDivergence(backend=b, applies=lambda p: p.get("precision") == "tf32",
                    reason="triton-ascend accepts only ieee and hf32 for fp32 tl.dot and rejects tf32 "
                           "(hf32 is the Ascend counterpart)",
                    link="https://github.com/triton-lang/triton-ascend/pull/1265")
    for b in ASCEND_BACKENDS)

__all__ = ["ASCEND_BACKENDS", "ASCEND_DOT_DEFAULT_PRECISION", "ASCEND_REJECTS_TF32", "INTERPRETER_BF16"]
