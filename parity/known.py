"""Known divergences that every spec may share: import them instead of rediscovering them.

Each is a parity.KnownDivergence with its public source; a spec lists it in `known_divergences`.
"""

from __future__ import annotations

from parity.spec import KnownDivergence

# Triton 3.6's interpreter keeps bf16 tensors as uint16 in numpy and applies some operations to the
# raw bit patterns: tl.dot multiplies them, and negation and addition are wrong too (FACTS.md,
# "Measured 2026-11-30"). Any bf16 case of a kernel that does arithmetic on bf16 tiles is affected.
INTERPRETER_BF16 = KnownDivergence(
    backend="interpret", applies=lambda p: p.get("dtype") == "bf16",
    reason="Triton's interpreter keeps bf16 as uint16 and applies tl.dot, negation and addition to the raw "
           "bit patterns",
    link="https://github.com/triton-lang/triton/issues/11584")

__all__ = ["INTERPRETER_BF16"]
