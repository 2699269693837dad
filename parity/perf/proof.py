"""Rule 2's claim becomes advice only once it computes: "larger tiles fit" is proven like a fit.

parity.backends.ascend.perf_ub leaves on a compile's `ascend_perf` a `ub_claim`: its config's UB plan is
under a quarter of the buffer and a larger config compiles for the arch. Here the larger config runs as a
fit's config does (parity.run.fit_proof: a tier that computes, ascend-lowered for ascend-compile, in a fresh
process, compared with fp64 at the case's shape, a reordered sum judged by its rounding: parity.fit.proof's
within_rounding). Only a config that computes is a finding; one that computes wrong, or could not be run, stays
"not checked" with why, and the claim keeps its proof.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from parity.fit.candidates import label
from parity.fit.proof import BY_TOLERANCE
from parity.results import Fit, Record
from parity.run.fit_proof import prove_fit

RULE = "ub.larger_fits"


def _share(used: Any, of: Any) -> str:
    return f"{used:,} of {of:,} bits ({used / of:.0%})" if isinstance(used, int) and of else "a figure not read"


def finding(claim: Mapping[str, Any], proof: Mapping[str, Any]) -> dict[str, Any]:
    larger, now = label(claim["larger"]), label(claim["config"])
    entry = (proof.get("configs") or [{}])[0]
    # a reordered sum outside the elementwise tolerance says which rounding test held (parity.fit.proof)
    how = "" if entry.get("criterion") in (None, BY_TOLERANCE) else f" ({entry.get('detail')})"
    return {"rule": RULE, "line": None,
            "evidence": (f"larger tiles fit: {now} plans {_share(claim['used'], claim['of'])} of the UB; {larger} "
                         f"compiles at {_share(claim.get('larger_used'), claim['of'])} and computes the fp64 answer "
                         f"on {proof['tier']} at {proof['case']}{how}"
                         + (f"; {claim['held_back']}" if claim.get("held_back") else "")),
            "change": (f"use {larger} (or add it to the autotune configs): fewer, larger tiles for the same work; "
                       "static advice, no speed measured")}


def attach(records: Sequence[Record], spec: Any, case: Any, seed: int, backend: Any) -> None:
    """Prove every record's UB claim (in place). Never raises: a proof that cannot run says why."""
    for record in records:
        advice = record.get("ascend_perf")
        claim = (advice or {}).get("ub_claim")
        if not advice or not claim:
            continue
        fit: Fit = {"fitting": [{"config": dict(claim["larger"])}]}
        proof: Mapping[str, Any]
        try:
            prove_fit(fit, str((record.get("compile") or {}).get("kernel") or record.get("kernel")), spec,
                      case.params, case.id, seed, backend)
            proof = fit["proof"]  # prove_fit gives a fit with a fitting config its proof
        except Exception as exc:  # (no kernel_change: nothing was run)
            proof = {"tier": None, "case": case.id, "configs": [],
                     "why_not": f"the proof raised {type(exc).__name__}: {str(exc)[:200]}"}
        claim["proof"] = proof
        entry = (proof.get("configs") or [{}])[0]
        notes = advice.setdefault("not_checked", {})
        if entry.get("computes") is True:
            advice.setdefault("findings", []).append(finding(claim, proof))
            notes.pop(RULE, None)
        elif entry.get("computes") is False:
            notes[RULE] = (f"{label(claim['larger'])} fits but computes WRONG on {proof.get('tier')} "
                           f"({str(entry.get('detail') or '')[:160]}): not advised")
        else:
            notes[RULE] = (f"{label(claim['larger'])} fits but is not proven: "
                           f"{proof.get('why_not') or entry.get('detail') or 'it did not run'}")
