"""The rounding a correct kernel may show: an error model for accumulation.

A kernel that computes an output element as a sum of n terms in a floating-point type of unit roundoff u,
in any order (a loop, a tree, atomics into one element, a dot's K), is off from the exact sum by at most
γ_n·Σ|terms| with γ_n = n·u/(1 − n·u) (the worst case), and, with rounding errors modelled as independent
and of mean zero, by at most γ̃_n(λ)·Σ|terms| with γ̃_n(λ) = exp(λ·√n·u + n·u²/(1 − u)) − 1 ≈ λ·√n·u with
probability at least 1 − 2n·exp(−λ²(1 − u)²/2) (Higham & Mary, "A New Approach to Probabilistic Rounding
Error Analysis", SIAM J. Sci. Comput. 41(5), 2019). λ is chosen for a failure probability of DELTA per element.

For an output element y = f(x) of the fp64 reference, the terms and their count come from f itself: Σ|terms|
is the componentwise sensitivity Σ_i |∂y/∂x_i · x_i| of one input, the largest over the inputs (for a sum Σ|x_i|,
for a dot Σ|a_k·b_k|: each operand of a product sees the same terms), n the largest number of elements of one
input y depends on (the reduction length). Both come from
one backward pass of the reference per element, so the model is taken at a few elements: the ones farthest
outside the tolerance, the largest errors, and a seeded sample of the rest. A correct kernel accumulates in
fp32 (fp64 where the outputs are fp64) and rounds once to the output's dtype, which adds u_out·|y|.

What it decides is left to the callers: a case whose spec gives no tolerance of its own is judged by the
probabilistic bound (parity.run.runner); a failure inside it, under a tolerance the spec chose, is the
tolerance's (parity.triage), never a kernel's or a vendor's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch

from parity.run.compare import nonfinite_mismatch, unravel
from parity.spec import Tolerance

DELTA = 1e-6  # the probability, per element, that a correct kernel's rounding exceeds the probabilistic bound
PROBES_FARTHEST = 6  # elements farthest outside the tolerance, by |Δ| / (atol + rtol·|ref|)
PROBES_LARGEST = 3  # largest |Δ|
PROBES_SAMPLED = 3  # a seeded sample of the other mismatches

UNIT_ROUNDOFF = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8, torch.float32: 2.0 ** -24,
                 torch.float64: 2.0 ** -53}
DTYPE_NAMES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32", torch.float64: "fp64"}


@dataclass(frozen=True)
class Probe:
    """The model at one output element."""

    index: tuple[int, ...]
    err: float  # |out − ref|
    terms: int  # n: the reduction length
    magnitude: float  # Σ|terms|
    probabilistic: float  # λ(n)·√n·u_acc·Σ|terms| (the exact γ̃) + u_out·|ref|
    worst_case: float  # γ_n·Σ|terms| + u_out·|ref|


@dataclass(frozen=True)
class Rounding:
    """The model's answer for one output: whether every probed mismatch is inside the probabilistic bound."""

    output: str
    accumulate: str  # the accumulation dtype a correct kernel uses, e.g. "fp32"
    mismatches: int  # elements outside the tolerance
    probes: tuple[Probe, ...]
    within: bool  # every probe inside its probabilistic bound
    within_worst_case: bool  # every probe inside its worst-case bound

    @property
    def decisive(self) -> Probe:
        """The probe nearest its bound (the one a verdict quotes)."""
        return max(self.probes, key=lambda p: p.err / p.probabilistic if p.probabilistic > 0 else math.inf)

    def sentence(self) -> str:
        p = self.decisive
        ratio = p.err / p.probabilistic if p.probabilistic > 0 else math.inf
        where = (f"{self.mismatches} element(s) outside the tolerance, the model taken at each"
                 if len(self.probes) == self.mismatches else
                 f"{self.mismatches:,} elements outside the tolerance, the model taken at {len(self.probes)} of them: "
                 "the farthest out, the largest errors and a seeded sample")
        head = (f"output {self.output!r}: within {self.accumulate} rounding for a {p.terms:,}-term sum"
                if self.within else
                f"output {self.output!r}: beyond {self.accumulate} rounding for a {p.terms:,}-term sum")
        return (f"{head} ({where}): at {list(p.index)} |err| {p.err:.3g} is {ratio:.2g}x the probabilistic bound "
                f"{p.probabilistic:.3g} (λ√n·u·Σ|terms|, Σ|terms| {p.magnitude:.3g}); worst-case bound "
                f"n·u·Σ|terms| {p.worst_case:.3g}")

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sentence"] = self.sentence()
        d["probes"] = [{**asdict(p), "index": list(p.index)} for p in self.probes]
        return d


def lam(n: int) -> float:
    """λ for which 2n·exp(−λ²/2) = DELTA (the (1 − u)² factor is 1 to within u)."""
    return math.sqrt(2.0 * math.log(2.0 * max(n, 1) / DELTA))


def bounds(terms: int, magnitude: float, ref_abs: float, u_acc: float, u_out: float) -> tuple[float, float]:
    """(probabilistic, worst-case) bounds on |out − ref| for one element."""
    n = max(terms, 1)
    prob = math.expm1(lam(n) * math.sqrt(n) * u_acc + n * u_acc * u_acc / (1 - u_acc))
    worst = n * u_acc / (1 - n * u_acc) if n * u_acc < 1 else math.inf
    rounding_out = u_out * ref_abs if u_out > u_acc else 0.0  # the final rounding to a narrower output dtype
    return prob * magnitude + rounding_out, worst * magnitude + rounding_out


def accumulation_dtype(out_dtype: torch.dtype, input_dtypes: Sequence[torch.dtype]) -> torch.dtype:
    """What a correct kernel accumulates in: fp64 where the output or every floating input is fp64, else fp32."""
    floats = [d for d in input_dtypes if d.is_floating_point]
    if out_dtype == torch.float64 or (floats and all(d == torch.float64 for d in floats)):
        return torch.float64
    return torch.float32


def probe_indices(out: torch.Tensor, ref: torch.Tensor, bad: torch.Tensor, tol_bound: torch.Tensor,
                  seed: int = 0) -> list[int]:
    """Flat indices to take the model at: the mismatches farthest outside the tolerance, the largest |Δ|, and a
    seeded sample of the rest (no more than PROBES_* of each)."""
    flat_bad = bad.reshape(-1)
    n_bad = int(flat_bad.sum())
    if n_bad == 0:
        return []
    diff = (out - ref).abs().reshape(-1).nan_to_num(0.0)
    over = torch.where(flat_bad, diff / tol_bound.reshape(-1).clamp_min(1e-300), -1.0)
    chosen: list[int] = []
    for scores, k in ((over, PROBES_FARTHEST), (torch.where(flat_bad, diff, -1.0), PROBES_LARGEST)):
        # the scores of elements inside the tolerance are -1: the top n_bad are all mismatches
        top = torch.topk(scores, min(k + len(chosen), n_bad)).indices.tolist()
        chosen += [i for i in top if i not in chosen][:k]
    rest = [i for i in flat_bad.nonzero().reshape(-1).tolist()[:100_000] if i not in chosen]
    if rest:
        gen = torch.Generator().manual_seed(seed)
        for j in torch.randperm(len(rest), generator=gen)[:PROBES_SAMPLED].tolist():
            chosen.append(rest[j])
    return chosen


Reference = Callable[[Mapping[str, Any], Mapping[str, Any]], Mapping[str, torch.Tensor]]


class NotDifferentiable(Exception):
    """The reference cannot be differentiated (it leaves autograd, or computes on integers)."""


def element_terms(reference: Reference, inputs: Mapping[str, Any], params: Mapping[str, Any], output: str,
                  flat: Sequence[int]) -> list[tuple[int, float]]:
    """(n, Σ|terms|) at each flat index of one output of the fp64 reference, by one backward pass each."""
    leaves = {k: v.detach().to(torch.float64).clone().requires_grad_(True)
              for k, v in inputs.items() if isinstance(v, torch.Tensor) and v.is_floating_point()}
    if not leaves:
        raise NotDifferentiable("the reference has no floating-point input")
    # the reference sees non-leaf copies, so an in-place op of its own does not touch a leaf
    fed = {k: (leaves[k] * 1.0 if k in leaves else v) for k, v in inputs.items()}
    with torch.enable_grad():
        try:
            y = reference(fed, params)[output]
        except Exception as exc:  # a reference that leaves autograd (numpy, .item(), in-place on a view)
            raise NotDifferentiable(f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(y, torch.Tensor) or not y.requires_grad:
            raise NotDifferentiable(f"output {output!r} does not depend on the inputs through autograd (a replay's "
                                    "recorded output, or a reference that leaves autograd)")
        y_flat = y.reshape(-1)
        found = []
        names = list(leaves)
        for i in flat:
            grads = torch.autograd.grad(y_flat[i], [leaves[k] for k in names], retain_graph=True, allow_unused=True)
            terms, magnitude = 0, 0.0
            for name, g in zip(names, grads, strict=True):
                if g is None:
                    continue
                magnitude = max(magnitude, float((g * leaves[name].detach()).abs().sum()))
                terms = max(terms, int((g != 0).sum()))
            found.append((terms, magnitude))
    return found


def judge_output(name: str, out: torch.Tensor, ref: torch.Tensor, tol: Tolerance, valid: torch.Tensor | None,
                 reference: Reference, inputs: Mapping[str, Any], params: Mapping[str, Any]) -> Rounding | None:
    """The model for one output judged elementwise, or None where it has nothing to say: no mismatch, an integer
    output, or a NaN/infinity where the other has none (never rounding)."""
    if not out.is_floating_point() or tol.max_err_ratio is not None:
        return None
    out64, ref64 = out.detach().to(torch.float64), ref.detach().to(torch.float64)
    if bool(nonfinite_mismatch(out64, ref64).any()):
        return None
    tol_bound = ref64.abs() * tol.rtol + tol.atol
    bad = ((out64 - ref64).abs() > tol_bound) & torch.isfinite(ref64)
    if valid is not None:
        bad &= valid.to(torch.bool).expand_as(bad)
    if not bool(bad.any()):
        return None
    input_dtypes = [v.dtype for v in inputs.values() if isinstance(v, torch.Tensor)]
    acc = accumulation_dtype(out.dtype, input_dtypes)
    u_acc = UNIT_ROUNDOFF[acc]
    u_out = UNIT_ROUNDOFF.get(out.dtype, u_acc)
    flat = probe_indices(out64, ref64, bad, tol_bound)
    fp64_inputs = {k: (v.to(torch.float64) if isinstance(v, torch.Tensor) and v.is_floating_point() else v)
                   for k, v in inputs.items()}
    found = element_terms(reference, fp64_inputs, params, name, flat)
    probes = []
    out_flat, ref_flat = out64.reshape(-1), ref64.reshape(-1)
    for i, (terms, magnitude) in zip(flat, found, strict=True):
        ref_abs = abs(float(ref_flat[i]))
        prob, worst = bounds(terms, magnitude, ref_abs, u_acc, u_out)
        index = tuple(unravel(i, out.shape))
        probes.append(Probe(index, abs(float(out_flat[i]) - float(ref_flat[i])), terms, magnitude, prob, worst))
    return Rounding(name, DTYPE_NAMES[acc], int(bad.sum()), tuple(probes),
                    all(p.err <= p.probabilistic for p in probes), all(p.err <= p.worst_case for p in probes))


def judge_case(reference: Reference, inputs: Mapping[str, Any], params: Mapping[str, Any],
               outputs: Mapping[str, torch.Tensor], ref: Mapping[str, torch.Tensor], tol: Tolerance,
               failing: Sequence[str], valid: Callable[[str, torch.Tensor], torch.Tensor | None],
               judged: bool) -> dict[str, Any] | None:
    """The model over a case's failing outputs (record key `rounding`), or None where it has nothing to say.

    `within` is true when every failing output's probes lie inside the probabilistic bound; `judged` says the
    model decides the status (the spec chose no tolerance): then such a case passes.
    """
    found: list[Rounding] = []
    for name in failing:
        try:
            verdict = judge_output(name, outputs[name], ref[name], tol, valid(name, ref[name]), reference, inputs,
                                   params)
        except NotDifferentiable as exc:
            return {"within": False, "judged": judged, "outputs": [],
                    "not_checked": f"the fp64 reference cannot be differentiated ({str(exc)[:200]}): no error model"}
        if verdict is None:  # a NaN or an infinity, or an err_ratio criterion: not a matter of rounding
            return None
        found.append(verdict)
    if not found:
        return None
    return {"within": all(r.within for r in found), "judged": judged, "outputs": [r.as_dict() for r in found],
            "sentence": "; ".join(r.sentence() for r in found)}
