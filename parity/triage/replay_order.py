"""A replay's numeric failure that two correct fp32 computations explain: the recording's device and this tier
summed in different orders, or the recording's dots ran as TF32.

A replay compares this tier's outputs with the ones the recording left, not with an fp64 reference: the
accumulation error model (parity.run.rounding) has no reference function to take Σ|terms| from. So:

- the recording came from an NVIDIA device and the kernel's fp32 dots compiled as TF32 there (cuda-compile's TTIR
  of the same launch), and the difference is TF32's rounding in size: the recording's precision mode (the limit
  cuda-tf32-dot), settled; without the TTIR, provisional;
- the kernel reduces (tl.sum, tl.dot, tl.atomic_add, ...) and the outputs agree as a whole to within
  ORDER_ERR_RATIO (rms of the difference over rms of the output): the replay's tolerance, provisional, settled by
  a spec with an fp64 reference, which the error model then judges.

Either is never the kernel's nor a vendor's on this evidence: both tiers' answers may be right.
"""

from __future__ import annotations

from collections.abc import Mapping

import parity.triage.precision as precision
import parity.triage.source_facts as source_facts
from parity.backends import backend_class
from parity.results import Owner, OwnerKind, Record
from parity.triage.limit_fits import is_numeric, tf32_bound
from parity.triage.owner import make_owner

# fp32 results of different summation orders over up to ~2^20 terms agree to about this, as a whole (measured:
# a K=512 dot 1e-7, a 2^20-element sum with cancellation 7e-5); a dropped term or a wrong tile is far above it
ORDER_ERR_RATIO = 2.0 ** -13
SETTLE = ("a KernelSpec with an fp64 reference for this kernel, run on this tier: parity then judges its rounding "
          "by the accumulation error model (parity.run.rounding)")


def replay_owner(record: Record, others: Mapping[str, Record], source: str) -> Owner | None:
    """The owner of a replay's fp32 mismatch that summation order or the recording's TF32 explains, else None."""
    recorded = str((record.get("replay") or {}).get("recorded_on") or "")
    metrics = record.get("metrics") or {}
    ratio = metrics.get("err_ratio")
    if (recorded in ("", "unknown", record.get("backend")) or not is_numeric(record) or metrics.get("nan_count")
            or (record.get("params") or {}).get("out") != "fp32" or not isinstance(ratio, (int, float))):
        return None
    facts = source_facts.read(record, source)
    reductions = facts.get("reductions") or []
    device = backend_class(recorded)
    tier = record.get("backend")
    if device.mode == "run" and device.tracker.owner is OwnerKind.TRITON and "tl.dot" in reductions \
            and 0 < ratio <= tf32_bound(record)[0]:
        seen = precision.compiled_tf32(others)
        how = (f"cuda-compile's TTIR of this launch: {seen.get('tf32')} of {seen.get('fp32_dots')} fp32 dots "
               "inputPrecision = tf32" if seen else "a tl.dot that may pin no input_precision, NVIDIA's default tf32")
        return make_owner(OwnerKind.AUTHOR, "kernel author",
                          f"precision mode of the recording, not a bug: it ran on {recorded} ({how}), and {tier} "
                          f"computes fp32 dots in ieee; err_ratio {ratio:.2g} against the recording is within TF32's "
                          f"rounding ({tf32_bound(record)[1]}). Pass input_precision=\"ieee\" for bit-comparable fp32",
                          provisional=seen is None, limit=precision.LIMIT,
                          settle=None if seen else "the same replay on cuda-compile (its TTIR shows each dot's "
                          "precision), then the report")
    if reductions and ratio <= ORDER_ERR_RATIO:
        return make_owner(OwnerKind.TOLERANCE, "the replay's tolerance",
                          f"{tier} and the recording ({recorded}) agree to err_ratio {ratio:.2g} (max |Δ| "
                          f"{metrics.get('max_abs_err', 0):.3g}), and the kernel reduces ({', '.join(reductions)}): "
                          "two correct fp32 results in different summation orders differ this way, and a replay has no "
                          "fp64 reference to bound the rounding by", provisional=True, settle=SETTLE)
    return None
