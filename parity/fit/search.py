"""The search loop: compile candidates two at a time in forked children, stop once enough fit.

Pure apart from the forks: `probe(config)` is the tier's compile of one candidate (parity.fit.probe),
run in a child so a compiler that aborts costs that candidate only. Every fitting config in the answer
is one whose compile succeeded; nothing is inferred.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from parity.compile.isolate import run_isolated
from parity.results import Fit

ENOUGH = 3  # fitting configs that answer the porter's question; the search stops there
BUDGET_S = 50.0  # no candidate starts after this; a search stays under a minute
WORKERS = 2
PROBE_TIMEOUT_S = 40.0

Outcome = dict[str, Any]  # {"ok": bool|None, "used": int|None, "of": int|None, "error_kind": str|None}


def _isolated(probe: Callable[[Mapping[str, Any]], Outcome], config: Mapping[str, Any]) -> Outcome:
    result = run_isolated(lambda: probe(config), timeout_s=PROBE_TIMEOUT_S)
    if result.ok and isinstance(result.value, dict):
        return result.value
    why = "timeout" if result.timed_out else "crash"
    return {"ok": None, "used": None, "of": None, "error_kind": why}


def run_search(candidates: Sequence[Mapping[str, Any]], probe: Callable[[Mapping[str, Any]], Outcome],
               known: Mapping[str, Outcome] | None = None, cached: Callable[[Mapping[str, Any]], Outcome | None]
               = lambda c: None, remember: Callable[[Mapping[str, Any], Outcome], None] = lambda c, o: None,
               enough: int = ENOUGH, budget_s: float = BUDGET_S,
               label: Callable[[Mapping[str, Any]], str] = repr) -> list[tuple[dict[str, Any], Outcome]]:
    """(config, outcome) for every candidate looked at, in candidate order.

    `known`: outcomes by label that the case's own launch already compiled (an autotuner's configs);
    `cached`/`remember`: the probe cache. Candidates go in pairs; the search stops once `enough` fit
    or `budget_s` has passed."""
    known = known or {}
    t0 = time.monotonic()
    done: list[tuple[dict[str, Any], Outcome]] = []
    pending = list(candidates)
    with ThreadPoolExecutor(WORKERS) as pool:
        while pending and sum(1 for _, o in done if o.get("ok")) < enough:
            batch, pending = pending[:WORKERS], pending[WORKERS:]
            answers: list[Outcome | None] = [known.get(label(c)) or cached(c) for c in batch]
            # answers the case or the cache already has cost nothing; compiles stop at the budget
            todo = [i for i, a in enumerate(answers) if a is None] if time.monotonic() - t0 < budget_s else []
            for i, outcome in zip(todo, pool.map(lambda c: _isolated(probe, c), [batch[i] for i in todo]),
                                  strict=True):
                remember(batch[i], outcome)
                answers[i] = outcome
            done += [(dict(c), a) for c, a in zip(batch, answers, strict=True) if a is not None]
    return done


def fit_record(done: Sequence[tuple[Mapping[str, Any], Outcome]], arch: str, unit: Literal["bits", "bytes"],
               capacity: int | None, failing_need: int | None, cap: str | None, search_s: float) -> Fit:
    """The `fit` record (results contract): the fitting configs with their need, or the smallest need."""
    fitting = [{"config": dict(c), "used": o.get("used"), "of": o.get("of") or capacity}
               for c, o in done if o.get("ok")]
    needs = [o["used"] for _, o in done if o.get("ok") is False and o.get("used")]
    if failing_need:
        needs.append(failing_need)
    return {"searched": len(done), "fitting": fitting, "arch": arch, "unit": unit,
            "smallest_need": None if fitting or not needs else min(needs), "cap": cap,
            "search_s": round(search_s, 2)}


def launcher_cap(failing: Mapping[str, Any], fitting: Sequence[Mapping[str, Any]],
                 keys: Sequence[str]) -> str | None:
    """For a kernel whose launcher picks its block sizes: which constexpr it must cap, and at what.
    The cap is the largest value among the fitting configs that changed that constexpr."""
    caps = []
    for key in keys:
        values = [int(c[key]) for c in fitting if key in c and c[key] != failing.get(key)]
        if values and all(int(c.get(key, 0)) <= int(failing[key]) for c in fitting):
            caps.append(f"{key} <= {max(values)} (it passed {failing[key]})")
    return " or ".join(caps) or None


def row_advice(constants: Mapping[str, Any], rows: Sequence[str], splits: Sequence[tuple[Mapping[str, Any], Outcome]],
               unit: str) -> str:
    """What the launcher must change when the kernel has no tile constexpr: a block of its rows, where a
    compile of one fit (the largest that did), else that row blocks do not help either."""
    passed = ", ".join(f"{r}={constants[r]}" for r in rows)
    fits = [(c, o) for c, o in splits if o.get("ok")]
    if not fits:
        smallest = min((c[rows[0]] for c, _ in splits), default=None)
        tried = f" down to {smallest}" if smallest is not None else ""
        return f"no tile constexpr to shrink, and row blocks{tried} do not fit either (it passed {passed})"
    config, outcome = fits[0]
    used = outcome.get("used")
    figure = f", {used:,} of {outcome.get('of'):,} {unit}" if used and outcome.get("of") else ""
    block = ", ".join(f"{r}={v}" for r, v in config.items())
    return (f"tile the rows: the launcher must pass a row block and a grid over it (a compile at {block} fits"
            f"{figure}; it passed {passed}), where its rows are independent")
