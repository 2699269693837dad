"""A random kernel's outputs judged as distributions, not element by element.

A kernel that calls tl.rand / tl.randn / tl.randint draws from a seeded stream that each compiler may generate its
own way (upstream Triton's own test_rand checks only the distribution). Where such a case fails element by element,
this says whether its outputs are the reference's distribution anyway:

- the kept fraction (elements that are not 0, a dropout's keep mask) agrees within five standard errors of two
  binomial samples of that size;
- where both keep an element, its value agrees at the case's tolerance (a dropout's x / (1 - p));
- an output with no zeros on either side (the random values themselves) agrees in mean and standard deviation,
  each within five standard errors.

Pure over tensors; the record keeps the figures (`random_stream`), and triage decides the owner
(parity.triage.random_stream).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch

SIGMAS = 5.0  # standard errors a statistic may move between two draws of the same distribution
MIN_ELEMENTS = 64  # fewer say nothing about a distribution


def _moments_agree(o: torch.Tensor, r: torch.Tensor) -> tuple[bool, str]:
    n = o.numel()
    mo, mr, so, sr = o.mean().item(), r.mean().item(), o.std().item(), r.std().item()
    mean_bound = SIGMAS * math.sqrt(2.0 / n) * max(sr, 1e-30)
    std_bound = SIGMAS * math.sqrt(1.0 / n) * max(sr, 1e-30)  # each std has standard error ~ sigma / sqrt(2n)
    ok = abs(mo - mr) <= mean_bound and abs(so - sr) <= std_bound
    return ok, f"mean {mo:.4g} vs {mr:.4g} (±{mean_bound:.2g}), std {so:.4g} vs {sr:.4g} (±{std_bound:.2g})"


def compare_one(out: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float) -> dict[str, Any]:
    """The distribution figures of one output against its reference, with `agrees` and a line saying why."""
    o, r = out.detach().cpu().double().flatten(), ref.detach().cpu().double().flatten()
    finite = torch.isfinite(o) & torch.isfinite(r)
    o, r = o[finite], r[finite]
    n = o.numel()
    if n < MIN_ELEMENTS or n != out.numel():  # too few to judge, or NaN/inf: no distribution to speak of
        return {"agrees": False, "elements": n, "why": f"{out.numel() - n} non-finite of {out.numel()}, or under "
                f"{MIN_ELEMENTS} elements: not judged as a distribution"}
    keep_o, keep_r = o != 0, r != 0
    p_o, p_r = keep_o.double().mean().item(), keep_r.double().mean().item()
    bound = SIGMAS * math.sqrt(2.0 * p_r * (1.0 - p_r) / n) + 1.0 / n
    fig: dict[str, Any] = {"elements": n, "kept": round(p_o, 6), "kept_ref": round(p_r, 6), "kept_bound": bound,
                           "mask_differs": round((keep_o != keep_r).double().mean().item(), 6)}
    if abs(p_o - p_r) > bound:
        return {**fig, "agrees": False, "why": f"kept fraction {p_o:.4f} vs the reference's {p_r:.4f} (±{bound:.2g})"}
    both = keep_o & keep_r
    if p_r < 1.0 or p_o < 1.0:  # a mask: where both keep an element, its value is the reference's
        if not both.any():
            return {**fig, "agrees": False, "why": "no element kept on both sides: no kept values to compare"}
        diff = (o[both] - r[both]).abs()
        fig["kept_max_abs_err"] = diff.max().item()
        ok = bool((diff <= atol + rtol * r[both].abs()).all())
        why = (f"kept fraction {p_o:.4f} vs {p_r:.4f} (±{bound:.2g}); where both keep an element "
               f"({int(both.sum())}), max |err| {fig['kept_max_abs_err']:.3g} "
               + ("within" if ok else "beyond") + f" the tolerance (rtol {rtol:g}, atol {atol:g})")
        return {**fig, "agrees": ok, "why": why}
    ok, why = _moments_agree(o, r)
    return {**fig, "agrees": ok, "why": why}


def compare(outputs: Mapping[str, torch.Tensor], ref: Mapping[str, torch.Tensor],
            tolerance: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every output that the reference has, judged as a distribution: {"agrees", "outputs": {name: figures}}."""
    rtol = float((tolerance or {}).get("rtol") or 1e-5)
    atol = float((tolerance or {}).get("atol") or 1e-6)
    per = {name: compare_one(outputs[name], r, rtol, atol) for name, r in ref.items() if name in outputs}
    return {"agrees": bool(per) and all(f["agrees"] for f in per.values()), "outputs": per}
