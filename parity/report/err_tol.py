"""One definition of `err/tol`, shared by REPORT.md, DIVERGENCE.md and the heatmap.

err/tol is the largest |out − ref| / (atol + rtol·|ref|) over every element of every
output (compare.Metrics.max_tol_ratio); for a kernel judged on err_ratio it is err_ratio
over its limit; for a case the accumulation error model judged (its spec chose no tolerance:
parity.run.rounding) it is the largest |out − ref| over the model's bound at the elements the model
was taken at. Each way a case fails exactly when its err/tol is above 1, so the number can sit
beside the pass counts without contradicting them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from parity.results import Record, Status


def as_float(value: Any) -> float | None:
    """Numbers as stored in records: JSON keeps inf as the string "inf"."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _ratio_judged(m: Mapping[str, Any], tol: Mapping[str, Any]) -> float | None:
    # compare passes these when err_ratio <= limit OR max_abs <= atol: the smaller
    # of the two ratios is above 1 exactly when the case fails
    err, limit = as_float(m.get("err_ratio")), as_float(tol["max_err_ratio"])
    if err is None or not limit:
        return None
    by_ratio = err / limit
    max_abs, atol = as_float(m.get("max_abs_err")), as_float(tol.get("atol"))
    by_abs = max_abs / atol if max_abs is not None and atol else math.inf
    return min(by_ratio, by_abs)


def err_over_tol(record: Record) -> float | None:
    """A case's err/tol (see the module doc), or None where it has no metrics."""
    m, tol = record.get("metrics") or {}, record.get("tolerance") or {}
    if not m or not tol:
        return None
    if m.get("nan_count"):
        return math.inf  # a NaN where the reference is finite is outside every bound
    if tol.get("max_err_ratio"):
        return _ratio_judged(m, tol)
    model = record.get("rounding") or {}
    if model.get("judged"):  # the bound judged the mismatches, not the elementwise tolerance
        ratios: list[float] = [p["err"] / p["probabilistic"] for out in model.get("outputs") or []
                               for p in out.get("probes") or [] if p.get("probabilistic")]
        if ratios:
            return max(ratios)
    return as_float(m.get("max_tol_ratio"))


def worst_err_over_tol(records: Iterable[Record]) -> float | None:
    """The largest err/tol over the scored cases; xfailed ones are known, shown apart."""
    values = [v for r in records if r.get("status") != Status.XFAILED for v in [err_over_tol(r)] if v is not None]
    return max(values, default=None)
