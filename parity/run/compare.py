"""Comparison with the fp64 reference: pure functions from tensors to metrics."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch

from parity.spec import Tolerance


@dataclass(frozen=True)
class Metrics:
    max_abs_err: float
    max_rel_err: float
    err_ratio: float  # rms(out - ref) / rms(ref)
    mismatch_frac: float
    nan_count: int  # elements whose NaN-ness differs from the reference
    worst_index: list[int] | None
    region: str
    passed: bool
    output: str = ""
    numel: int = 0
    # the output and reference values at worst_index: the element a reader should look at
    worst_out: float | None = None
    worst_ref: float | None = None
    # max over elements of |out - ref| / (atol + rtol·|ref|): above 1 is a mismatch
    max_tol_ratio: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _finite_or_none(x: float) -> float:
    return x if math.isfinite(x) else float("inf")


def nonfinite_mismatch(out: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
    """Where out and ref disagree on NaN, or on an infinity and its sign."""
    nan_diff = torch.isnan(out) != torch.isnan(ref)
    inf_diff = (torch.isinf(out) | torch.isinf(ref)) & (out != ref) & ~torch.isnan(out) & ~torch.isnan(ref)
    return nan_diff | inf_diff


def _range_text(dim: str, lo: int, hi: int, size: int) -> str | None:
    """A phrase for indices lo..hi (the first and last with a True) along one dim, or None when they span
    most of it."""
    if lo == hi:
        return f"{dim} {lo} only"
    if hi - lo + 1 > size // 2:
        return None
    if hi == size - 1:
        return f"tail {dim}>={lo}"
    if lo == 0:
        return f"leading {dim}<{hi + 1}"
    return f"{dim} in [{lo}, {hi}]"


def _span(mask: torch.Tensor, axis: int) -> tuple[int, int]:
    """The first and last index along `axis` with any True: a reduction, where listing the True elements
    (nonzero) costs an index per element and was a third of comparing a GDN output."""
    others = tuple(d for d in range(mask.dim()) if d != axis)
    hit = (mask.any(dim=others) if others else mask).nonzero()
    return int(hit[0]), int(hit[-1])


def _triangle(mask: torch.Tensor) -> str | None:
    """Where every True of the last two (square) dims lies relative to the diagonal."""
    n = mask.shape[-1]
    rows = torch.arange(n, device=mask.device)[:, None]
    cols = torch.arange(n, device=mask.device)[None, :]
    for name, inside in (("upper triangle", cols > rows), ("strict lower triangle", cols < rows),
                         ("diagonal", cols == rows)):
        if not bool((mask & ~inside).any()):
            return name
    return None


def describe_region(mask: torch.Tensor, dims: Sequence[str] | None = None, n_bad: int | None = None) -> str:
    """A short phrase for where the True elements of `mask` sit (`n_bad`: their count, where known).

    Examples: "tail t>=1024", "head 3 only", "upper triangle", "scattered (4.0%)".
    """
    n_bad = int(mask.sum()) if n_bad is None else n_bad
    if n_bad == 0:
        return "none"
    names = list(dims) if dims and len(dims) == mask.dim() else [f"dim{i}" for i in range(mask.dim())]
    if mask.dim() == 0:
        return "scalar"
    if n_bad == mask.numel():  # every element: no triangle, and every span is the whole axis
        return "everywhere"
    parts: list[str] = []
    if mask.dim() >= 2 and mask.shape[-1] == mask.shape[-2] and mask.shape[-1] > 1:
        triangle = _triangle(mask)
        if triangle is not None:
            parts.append(triangle)
    for axis, name in enumerate(names):
        if mask.shape[axis] <= 1:
            continue
        text = _range_text(name, *_span(mask, axis), mask.shape[axis])
        if text is not None and not (parts and axis >= mask.dim() - 2 and "triangle" in parts[0]):
            parts.append(text)
    if parts:
        return ", ".join(parts)
    frac = n_bad / mask.numel()
    # "everywhere" only where every element is (above): 95 % is not every element
    return f"nearly everywhere ({100 * frac:.1f}%)" if frac > 0.9 else f"scattered ({100 * frac:.1f}%)"


def compare(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance, dims: Sequence[str] | None = None,
            valid: torch.Tensor | None = None, name: str = "", device: str = "cpu") -> Metrics:
    """Metrics of one output against its fp64 reference, restricted to `valid` when given.

    `device` is where the fp64 arithmetic runs (Backend.compare_device). The statistics are over the
    elements finite in both; a disagreement on NaN-ness or an infinity is counted apart (nan_count) and
    is a mismatch. Nearly every case is finite everywhere: the statistics are taken as if it were, and
    taken again with the non-finite elements left out only where one is not.
    """
    if out.shape != ref.shape:
        raise ValueError(f"output {name!r} has shape {tuple(out.shape)}, reference has {tuple(ref.shape)}")
    out = out.detach().to(device=device, dtype=torch.float64)
    ref = ref.detach().to(device=device, dtype=torch.float64)
    if valid is not None:
        valid = valid.to(device=out.device, dtype=torch.bool).expand_as(out)
    metrics = (_statistics(out, ref, tol, dims, valid, name, None)
               or _statistics(out, ref, tol, dims, valid, name, nonfinite_mismatch(out, ref)))
    assert metrics is not None  # with `nonfinite` given, _statistics always has an answer
    return metrics


def _statistics(out: torch.Tensor, ref: torch.Tensor, tol: Tolerance, dims: Sequence[str] | None,
                valid: torch.Tensor | None, name: str, nonfinite: torch.Tensor | None) -> Metrics | None:
    """The metrics over the kept elements (valid, and finite in both where `nonfinite`, the NaN/infinity
    disagreements, is given). With `nonfinite` None every element is taken as finite, and None comes back
    where a kept one is not (max |Δ| is then NaN or infinite).

    Elements left out are zeroed rather than dropped: every statistic is a max of non-negative values or
    a sum, which zeros leave as they are (a zeroed |Δ| is never outside its bound), so there are no masked
    copies. Few passes and few temporaries, reused in place (on the CPU each fresh one costs its page
    faults: half the time of one pass per statistic on 1M elements), and the scalars move in one
    transfer (one sync on a device).
    """
    keep = valid
    if nonfinite is not None:
        finite = torch.isfinite(out) & torch.isfinite(ref)
        keep = finite if valid is None else finite & valid
        nonfinite = nonfinite if valid is None else nonfinite & valid
    abs_diff = (out - ref).abs_()
    abs_ref = ref.abs()
    if keep is not None:
        abs_diff.masked_fill_(~keep, 0.0)
        abs_ref.masked_fill_(~keep, 0.0)
    bound = abs_ref.mul(tol.rtol).add_(tol.atol)  # atol + rtol·|ref|
    bad = abs_diff > bound
    if nonfinite is not None:
        bad |= nonfinite  # a NaN or infinity where the other has none is a mismatch
    if tol.atol > 0:  # every bound is positive
        over = abs_diff.div(bound)
    else:
        over = torch.where(bound > 0, abs_diff / bound.clamp_min(1e-300),
                           torch.where(abs_diff != 0, float("inf"), 0.0))
    maxima = []
    if out.numel():  # a max over no element is 0
        max_abs, max_over = abs_diff.max(), over.max()
        rel = over.copy_(abs_diff).div_(abs_ref).masked_fill_(abs_ref == 0, 0.0)  # after over.max(), in stream order
        maxima = [max_abs, rel.max(), max_over]
    flat_diff, flat_ref = abs_diff.reshape(-1), abs_ref.reshape(-1)
    numel = torch.tensor(float(out.numel()), device=out.device, dtype=torch.float64)
    counts = [valid.sum(dtype=torch.float64) if valid is not None else numel,
              keep.sum(dtype=torch.float64) if keep is not None else numel,
              nonfinite.sum(dtype=torch.float64) if nonfinite is not None else numel.new_zeros(())]
    sums = [torch.dot(flat_ref, flat_ref), torch.dot(flat_diff, flat_diff), bad.sum(dtype=torch.float64)]
    n_total, n_kept, nan_count, sum_ref2, sum_diff2, n_bad, *found = torch.stack(counts + sums + maxima).tolist()
    if nonfinite is None and found and not math.isfinite(found[0]):
        return None
    max_abs, max_rel, max_tol_ratio = found or [0.0, 0.0, 0.0]
    scale = 1.0 if nonfinite is None else (n_total / n_kept if n_kept else 0.0)  # rms over the kept elements
    scalars = [max_abs, max_rel, max_tol_ratio, sum_ref2 * scale, sum_diff2 * scale, n_bad]
    return _metrics(name, dims, out, ref, tol, bad, nonfinite, int(nan_count), int(n_total), scalars, abs_diff)


def _metrics(name: str, dims: Sequence[str] | None, out: torch.Tensor, ref: torch.Tensor, tol: Tolerance,
             bad: torch.Tensor, nonfinite: torch.Tensor | None, nan_count: int, n_total: int, scalars: list[float],
             abs_diff: torch.Tensor) -> Metrics:
    """Metrics from [max |Δ|, max |Δ|/|ref|, max tol ratio, Σref², ΣΔ², bad count] over the `n_total` kept elements."""
    max_abs, max_rel, max_tol_ratio, sum_ref2, sum_diff2, n_bad_f = scalars
    n_bad = int(n_bad_f)
    rms_ref = math.sqrt(sum_ref2 / n_total) if n_total else 0.0
    rms_diff = math.sqrt(sum_diff2 / n_total) if n_total else 0.0
    err_ratio = rms_diff / rms_ref if rms_ref > 0 else (0.0 if rms_diff == 0 else float("inf"))
    worst: list[int] | None = None
    if nan_count and nonfinite is not None:  # (a count of non-finite elements comes only with their mask)
        worst = [int(i) for i in nonfinite.nonzero()[0]]
    elif n_bad:
        worst = unravel(int(_worst_bad(abs_diff, bad, tol, nonfinite is None)), out.shape)
    worst_out = float(out[tuple(worst)]) if worst is not None else None
    worst_ref = float(ref[tuple(worst)]) if worst is not None else None
    if tol.max_err_ratio is not None:
        passed = nan_count == 0 and (err_ratio <= tol.max_err_ratio or max_abs <= tol.atol)
    else:
        passed = n_bad == 0
    return Metrics(
        max_abs_err=_finite_or_none(max_abs),
        max_rel_err=_finite_or_none(max_rel),
        err_ratio=_finite_or_none(err_ratio),
        mismatch_frac=n_bad / n_total if n_total else 0.0,
        nan_count=nan_count,
        worst_index=worst,
        region=describe_region(bad, dims, n_bad) if n_bad else "none",
        passed=passed,
        output=name,
        numel=n_total,
        worst_out=worst_out,
        worst_ref=worst_ref,
        max_tol_ratio=_finite_or_none(max_tol_ratio),
    )


def unravel(flat: int, shape: Sequence[int]) -> list[int]:
    """The index of element `flat` of a C-contiguous tensor of `shape`. Not torch.unravel_index: its
    argument check imports sympy, which took 2.5 s to 3.6 s in each worker of the H200 runs, at the first
    case with a mismatch."""
    index = []
    for size in reversed(shape):
        flat, rest = divmod(flat, size)
        index.append(rest)
    return index[::-1]


def worst_of(metrics: Sequence[Metrics]) -> Metrics:
    """The output that decides a case: the first failing one, else the largest err_ratio."""
    failing = [m for m in metrics if not m.passed]
    pool = failing or list(metrics)
    return max(pool, key=lambda m: (m.nan_count, m.err_ratio))


def _worst_bad(abs_diff: torch.Tensor, bad: torch.Tensor, tol: Tolerance, finite: bool) -> torch.Tensor:
    """The flat index of the largest |Δ| among the mismatches (the first, on ties). With rtol 0 the bound is
    atol everywhere, so the largest |Δ| overall is a mismatch whenever there is one (fla-criterion outputs,
    where nearly every element is outside the elementwise bound): one pass instead of three."""
    if tol.rtol == 0 and tol.atol >= 0 and finite:
        return abs_diff.argmax()
    return torch.where(bad, abs_diff.nan_to_num(0.0), -1.0).argmax()
