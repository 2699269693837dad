"""fp32 tl.dot's precision mode across the two targets: TF32 on NVIDIA by default, IEEE (or HF32 when asked) on
Ascend. A failure that TF32's rounding explains is the author's choice of precision, not a bug (the limit
cuda-tf32-dot); this says so with the compile's own evidence and the bound it was judged by.

The bound: TF32 keeps 10 of fp32's 23 mantissa bits, so each operand carries a relative rounding of at most 2^-11;
a product carries two, and over K products the errors add as a random walk, so the rms error relative to an
rms-sized result stays within 2 * 2^-11 * sqrt(K) = 2^-10 * sqrt(K) (parity.triage.limit_fits.tf32_bound).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parity.backends import backend_class
from parity.results import OwnerKind, Record

LIMIT = "cuda-tf32-dot"
NOTE = ("fp32 tl.dot runs as TF32 on NVIDIA (cuda-compile TTIR: inputPrecision = tf32), IEEE on Ascend: results "
        "differ by ~1e-3 relative by design; pass input_precision='ieee' for bit-comparable fp32")


def compiled_tf32(others: Mapping[str, Record]) -> Mapping[str, Any] | None:
    """The `tf32_dots` of the same case on an upstream compile tier (cuda-compile), where it saw an fp32 dot
    compiled as TF32. Tiers are told by what their Backend declares, never by name."""
    for tier, record in others.items():
        cls = backend_class(tier)
        found = record.get("tf32_dots") or {}
        if cls.mode == "compile" and cls.tracker.owner is OwnerKind.TRITON and found.get("tf32"):
            return found
    return None


def explain(record: Record, others: Mapping[str, Record], bound: str) -> str:
    """The precision-mode evidence: the error against the bound, the compile's TTIR line, the fix."""
    ratio = (record.get("metrics") or {}).get("err_ratio")
    seen = compiled_tf32(others)
    ttir = (f"cuda-compile TTIR: {seen.get('tf32')} of {seen.get('fp32_dots')} fp32 dots inputPrecision = tf32"
            if seen else "its tl.dot pins no input_precision, and tf32 is NVIDIA's default")
    return (f"precision mode, not a bug: fp32 tl.dot runs as TF32 on NVIDIA ({ttir}), ieee or hf32 on Ascend; "
            f"err_ratio {ratio:.2g} vs fp64 is within TF32's rounding ({bound}). Fix: tl.dot(..., "
            'input_precision="ieee") for full fp32, or an fp32 tolerance with that reason')


def kernels_with_tf32(records: Mapping[str, Sequence[Record]]) -> list[str]:
    """The kernels some compile record of which saw an fp32 tl.dot compiled as TF32, for the report's note."""
    return sorted({str(r.get("kernel")) for recs in records.values() for r in recs
                   if (r.get("tf32_dots") or {}).get("tf32")})
