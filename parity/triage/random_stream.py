"""A differing random stream is its own kind of divergence: not a bug, not the author's, no vendor draft.

A kernel that calls tl.rand / tl.randn / tl.randint / tl.randint4x draws from a seeded stream; triton-ascend's
lowering generates another stream than upstream Triton's interpreter and GPU (about half of a dropout's keep mask
differs), and upstream's own test_rand checks only the distribution. So a numeric failure of such a kernel whose
outputs are the reference's distribution (the run's `random_stream` figures, parity.run.distribution) is owned by
"random": the evidence says what differs, and that bit-equal masks need the mask passed in as a tensor. A failure
whose distribution differs too (a keep probability inverted) is left to the other rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import parity.triage.source_facts as source_facts
from parity.results import Record
from parity.triage.limit_fits import is_numeric

LIMIT = "random-stream"  # its entry in parity.triage.limits (link, words); matched only here
NAME = "random stream"
ADVICE = "for bit-equal masks on every backend, draw the mask outside the kernel (torch) and pass it in as a tensor"


def evidence(record: Record, source: str) -> str | None:
    """The owner's evidence where the case's values fail but its random outputs' distribution agrees; else None."""
    if not is_numeric(record) or (record.get("metrics") or {}).get("nan_count"):
        return None
    calls = source_facts.read(record, source).get("random")
    stream = record.get("random_stream") or {}
    if not calls or stream.get("agrees") is not True:
        return None
    figures = "; ".join(_figures(name, f) for name, f in (stream.get("outputs") or {}).items())
    return (f"{', '.join(calls)}: {record.get('backend')} generates its own stream; the values differ element by "
            f"element, the distribution agrees ({figures}). Not a bug: {ADVICE}")


def _figures(name: str, f: Mapping[str, Any]) -> str:
    if "kept_max_abs_err" not in f:  # random values themselves: their moments
        return f"{name}: {f.get('why')}"
    return (f"{name}: kept {float(f['kept']):.3f} vs {float(f['kept_ref']):.3f}, {float(f['mask_differs']):.0%} of the "
            "mask differs, values kept on both sides agree")
