"""Before the fit advisor calls a config a fix, it runs it: each fit's configs on a tier that computes.

A compile tier's fit search proves only that a config compiles. Here every fit of a case (parity.fit's
`fit` on its overflowing records) gets a `proof` (parity.fit.proof): its fitting configs run on the
first tier the compile tier names in `Backend.proves_on` that is installed here (ascend-lowered for
ascend-compile where LLVM 19's tools are, else Triton's interpreter), in a fresh process
(parity.run.fit_proof_run), and are compared with the fp64 reference at the case's own shape. A config that
computes wrong turns the advice into the kernel change it needs (parity.fit.proof.kernel_change).
`PARITY_NO_PROOF=1` skips the runs; the advice then says it is not proven.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

from parity import settings
from parity.backends import backend_class
from parity.fit import cache
from parity.fit.proof import kernel_change
from parity.results import Fit, Record
from parity.results.record import Proof
from parity.run.fit_proof_run import PROOF_MARK

PROOF_TIMEOUT_S = 180.0  # one child proves every config of a fit; the case's own timeout is 900 s
# the proofs this process ran, by (spec, kernel, configs): the other cases of the kernel with the same answer
# reuse the first one's proof, which names the case it ran (advice is per kernel; a proof per case would cost
# a run of the tier that computes for every overflowing case)
_PROVEN: dict[str, Proof] = {}


def disabled() -> bool:
    return settings.current().no_proof


def proof_tier(backend: Any) -> tuple[str | None, str]:
    """(the tier that proves this compile tier's advice, or None; why it is that one, or why none)."""
    tried = []
    for name in getattr(backend, "proves_on", ()):
        missing = _missing(backend_class(name))
        if missing is None:
            return name, ""
        tried.append(f"{name}: {missing}")
    return None, "; ".join(tried) or f"{backend.name} names no tier that computes its configs"


def _missing(cls: type) -> str | None:
    """Why a tier cannot run here, without preparing it in this process (a compile tier is active)."""
    probe = getattr(cls, "installed", None)
    return probe() if callable(probe) else None


def spec_location(spec: Any) -> tuple[str, str | None]:
    """(module, file) of the module whose SPECS holds `spec`: the child imports it again."""
    for name, module in list(sys.modules.items()):
        specs = getattr(module, "SPECS", None)
        if isinstance(specs, (list, tuple)) and any(s is spec for s in specs):
            return name, getattr(module, "__file__", None)
    launcher: str = getattr(spec.launch, "__module__", None) or ""
    return launcher, getattr(sys.modules.get(launcher), "__file__", None)


def _child_env(tier: str) -> dict[str, str]:
    env = settings.child_env()
    env.pop("TRITON_INTERPRET", None)
    if backend_class(tier).mode == "interpret":
        env["TRITON_INTERPRET"] = "1"  # read when @triton.jit decorates, before the spec module imports
    paths = [os.getcwd(), *[p for p in sys.path if p and os.path.isdir(p)]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def run_proof(tier: str, spec: Any, params: Mapping[str, Any], seed: int, kernel: str,
              configs: Sequence[Mapping[str, Any]], timeout_s: float = PROOF_TIMEOUT_S) -> dict[str, Any]:
    """The child's answer: {"configs": [...]} or {"error": why}."""
    module, file = spec_location(spec)
    request = {"backend": tier, "module": module, "file": file, "spec": spec.name, "params": repr(dict(params)),
               "seed": seed, "kernel": kernel, "configs": [dict(c) for c in configs]}
    try:
        done = subprocess.run([sys.executable, "-m", "parity.run.fit_proof_run"],
                              input=json.dumps(request, default=str), capture_output=True, text=True,
                              timeout=timeout_s, env=_child_env(tier), check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"no answer within {timeout_s:g} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(PROOF_MARK):
            answer: dict[str, Any] = json.loads(line[len(PROOF_MARK):])  # fit_proof_run's answer object
            return answer
    tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
    return {"error": f"the proof's child exited {done.returncode} without an answer: {' | '.join(tail)[:300]}"}


def kernel_source(spec: Any, kernel: str) -> str:
    from parity.compile.counter import base_jit_function, kernel_name
    from parity.fit.proof import source_text as source_of

    for k in spec.kernels:
        if kernel_name(k) == kernel:
            return source_of(base_jit_function(k))
    return ""


def _launcher_text(spec: Any) -> str:
    """The launcher's source, for the proof cache's key: it decides the grid and what else the kernel gets."""
    import inspect

    try:
        return inspect.getsource(spec.launch)
    except (OSError, TypeError):
        return repr(spec.launch)


def prove_fit(fit: Fit, kernel: str, spec: Any, params: Mapping[str, Any], case_id: str, seed: int,
              backend: Any) -> None:
    """Give one fit its `proof` (in place)."""
    if not fit.get("fitting"):
        return  # nothing is called a fix (row blocks compute another problem: the porter judges those)
    tier, why = proof_tier(backend)
    proof: Proof = {"tier": tier, "case": case_id, "configs": [], "kernel_change": None, "why_not": None}
    if disabled():
        proof["why_not"] = "PARITY_NO_PROOF is set"
    elif getattr(spec, "compile_only", False):
        proof["why_not"] = f"{spec.name} is a compile-only probe: it has no output to compare with fp64"
    elif tier is None:
        proof["why_not"] = f"no tier that computes is installed here ({why})"
    else:
        configs = [f["config"] for f in fit["fitting"]]
        memo = json.dumps([tier, spec.name, kernel, configs], sort_keys=True, default=str)
        if memo in _PROVEN:
            fit["proof"] = _PROVEN[memo].copy()
            return
        key = cache.probe_key("proof:" + tier, spec.name, kernel_source(spec, kernel) + _launcher_text(spec),
                              repr(dict(params)),
                              {"configs": json.dumps(configs, sort_keys=True, default=str), "seed": seed})
        answer = cache.read(key) or run_proof(tier, spec, params, seed, kernel, configs)
        if answer.get("configs") and all(e.get("computes") is not None for e in answer["configs"]):
            cache.write(key, {**answer, "ok": True})  # definite answers only: a failed run is tried again
        if answer.get("error"):
            proof["why_not"] = f"{tier}: {answer['error']}"
        proof["configs"] = answer.get("configs") or []
        wrong = next((e for e in proof["configs"] if e.get("computes") is False), None)
        if wrong is not None:
            proof["kernel_change"] = kernel_change(kernel_source(spec, kernel), wrong)
        if not proof["why_not"]:
            _PROVEN[memo] = proof
    fit["proof"] = proof


def attach(records: Sequence[Record], compiles: Sequence[Mapping[str, Any]], spec: Any, case: Any,
           seed: int, backend: Any) -> None:
    """Prove every distinct fit of a case's records (the records of `compiles`, in order). Never raises:
    a proof that cannot run says why in its `why_not`."""
    done: set[int] = set()
    for record, compile_ in zip(records, compiles, strict=False):
        fit = record.get("fit")
        if not fit or id(fit) in done:
            continue
        done.add(id(fit))
        t0 = time.monotonic()
        try:
            prove_fit(fit, str(compile_.get("kernel")), spec, case.params, case.id, seed, backend)
        except Exception as exc:
            fit["proof"] = {"tier": None, "case": case.id, "configs": [], "kernel_change": None,
                            "why_not": f"the proof raised {type(exc).__name__}: {str(exc)[:200]}"}
        # the seconds this case spent proving (0 where it reused a proof): "where the time went" counts them
        record.setdefault("timing", {})["proof_s"] = round(time.monotonic() - t0, 3)
