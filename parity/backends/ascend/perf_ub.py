"""Rule 2, UB use: a config whose UB plan uses under a quarter of the buffer while a larger config fits.

This half runs in the compile child, where the compile-only driver can compile a candidate (the fit
advisor's probe, parity.fit.probe, which reads bishengir's UB plan). Per kernel and variant of a case, the
compile with the largest tile is judged (an autotune list's smaller configs are the tuner's business):
its own UB plan first, and only where that is under a quarter of the buffer, larger configs, smallest
first, up to the first that plans a quarter (else the largest that fits): the kernel's own autotune configs
with a larger tile, and ones derived by doubling its blocks, leaving a block that already covers the
extent the kernel masks it by (`offs < N` at this launch) as it is. A fitting one is a claim, not
advice: parity.perf.proof runs it on a tier that computes (ascend-lowered) against fp64, and only a
config that computes becomes "larger tiles fit".
Probes share the fit advisor's cache, so a kernel's later cases cost nothing.
"""

from __future__ import annotations

import ast
import textwrap
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from parity.fit import cache, candidates, search
from parity.fit.hook import FitTier, autotune_configs
from parity.fit.probe import kernel_text, named_constants

UNDER_SHARE = 0.25  # a UB plan under this share of the buffer leaves room for a larger tile
MAX_DOUBLINGS = 6  # derived candidates: the blocks times 64, 32, ... 2
RULE = "ub.larger_fits"


def extents(source: str) -> set[str]:
    """Names a kernel bounds its offsets by (`offs < N`, `N > offs`, a block pointer's shape): its extents."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            if isinstance(node.ops[0], ast.Lt) and isinstance(node.comparators[0], ast.Name):
                found.add(node.comparators[0].id)
            elif isinstance(node.ops[0], ast.Gt) and isinstance(node.left, ast.Name):
                found.add(node.left.id)
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, (ast.Attribute, ast.Name)) and (getattr(func, "attr", None) or getattr(func, "id", None)) \
                == "make_block_ptr":
            shape = node.args[1] if len(node.args) > 1 else next(  # type: ignore[attr-defined]
                (k.value for k in node.keywords if k.arg == "shape"), None)  # type: ignore[attr-defined]
            if isinstance(shape, (ast.Tuple, ast.List)):
                found |= {e.id for e in shape.elts if isinstance(e, ast.Name)}
    return found


def growable(blocks: Mapping[str, int], source: str, values: Mapping[str, Any]) -> dict[str, int]:
    """The blocks not already as large as an extent the kernel masks by at this launch (`values`: its ints
    and constexprs): a block that covers its row (softmax's BN = next_power_of_2(N), a block pointer's
    BK = K) does no more work when it grows, only more masked lanes."""
    bounds = [v for k, v in values.items() if k in extents(source) and isinstance(v, int) and not isinstance(v, bool)]
    return {k: v for k, v in blocks.items() if not any(v >= b for b in bounds)}


def larger_candidates(blocks: Mapping[str, int], own: Sequence[Mapping[str, Any]],
                      grow: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Configs with a larger tile than `blocks`, smallest first: the autotune list's, and `blocks` with the
    `grow` keys (all by default) doubled up to MAX_DOUBLINGS times."""
    keys = sorted(blocks)
    grow = keys if grow is None else list(grow)
    now = candidates.tile(blocks, keys)
    listed = [dict(c) for c in own if candidates.tile(c, keys) > now]
    covered = [{k: c.get(k) for k in keys} for c in listed]
    derived = [{k: int(v) * (2 ** i if k in grow else 1) for k, v in blocks.items()}
               for i in range(1, MAX_DOUBLINGS + 1)]
    found = listed + [d for d in derived if d not in covered and d != dict(blocks)]
    return sorted(found, key=lambda c: candidates.tile(c, keys))


def _judged(compiles: Sequence[dict[str, Any]], attempts: Sequence[Any]) -> dict[str, tuple[dict[str, Any], Any]]:
    """Per kernel and variant, the compile that built with the largest tile (and its attempt)."""
    best: dict[str, tuple[int, dict[str, Any], Any]] = {}
    for compile_, attempt in zip(compiles, attempts, strict=False):
        if not compile_.get("ok") or compile_.get("launch_error") or getattr(attempt, "source", None) is None:
            continue
        named = named_constants(attempt.source[0])
        keys = candidates.block_keys(named)
        size = candidates.tile(named, keys) if keys else 0
        group = str(compile_.get("kernel")) + repr(sorted((compile_.get("variant") or {}).items()))
        if group not in best or size > best[group][0]:
            best[group] = (size, compile_, attempt)
    return {g: (c, a) for g, (_, c, a) in best.items()}


def judge(compile_: dict[str, Any], attempt: Any, kernels: Iterable[Any], tier: FitTier) -> dict[str, Any]:
    """{"claim": ...} where a larger config fits, else {"not_checked": why} or {} (the plan is not small)."""
    src, target, options = attempt.source
    named = named_constants(src)
    blocks = {k: int(named[k]) for k in candidates.block_keys(named)}
    if not blocks:
        return {"not_checked": "no block constexpr (BLOCK*, TILE*, BK/BV/BM/BN) to enlarge"}
    text, signature = kernel_text(src), repr(sorted(named.items())) + repr(sorted(src.signature.items()))

    def probe(config: Mapping[str, Any]) -> dict[str, Any]:
        key = cache.probe_key(tier.name, tier.arch, text, signature, dict(config))
        found = search.run_search([config], lambda c: tier.probe(src, target, options, c), cached=lambda c:
                                  cache.read(key), remember=lambda c, o: cache.write(key, o), enough=1)
        return found[0][1] if found else {"ok": None, "used": None}

    own = probe(blocks)
    used, of = own.get("used"), own.get("of") or tier.capacity
    if not used or not of:
        why = own.get("error_kind") or "none read"
        return {"not_checked": f"no UB plan figure for {candidates.label(blocks)} ({why})"}
    if used >= UNDER_SHARE * of:
        return {}
    scalars = (getattr(attempt, "launch_args", None) or {}).get("scalars") or {}
    grow = growable(blocks, text, {**scalars, **named})
    if not grow:
        return {}  # every block already covers the extent it is masked by: nothing larger to do per program
    deadline = time.monotonic() + (search.BUDGET_S if tier.deadline is None
                                   else min(search.BUDGET_S, tier.deadline - time.monotonic()))
    larger: tuple[dict[str, Any], dict[str, Any]] | None = None
    searched = 0
    # smallest first: the first larger config that plans at least a quarter of the buffer, else the largest
    # that fits (one that fills the buffer leaves the pipeline nothing to double-buffer with)
    own_list = autotune_configs(kernels, str(compile_.get("kernel")))
    for config in larger_candidates(blocks, own_list, sorted(grow)):
        if time.monotonic() > deadline:
            break
        outcome = probe(config)
        searched += 1
        if not outcome.get("ok"):
            break
        larger = (config, outcome)
        if (outcome.get("used") or 0) >= UNDER_SHARE * of:
            break
    if larger is None:
        return {}  # nothing larger fits: the small plan is the kernel's limit here
    return {"claim": {"config": blocks, "used": used, "of": of, "larger": larger[0],
                      "larger_used": larger[1].get("used"), "searched": searched}}


def attach(compiles: Sequence[dict[str, Any]], attempts: Sequence[Any], kernels: Iterable[Any],
           tier: FitTier) -> None:
    """Put each judged compile's claim (or why it was not checked) on its `ascend_perf`."""
    kernels = list(kernels)
    for compile_, attempt in _judged(compiles, attempts).values():
        advice = compile_.get("ascend_perf")
        if advice is None:
            continue
        try:
            answer = judge(compile_, attempt, kernels, tier)
        except Exception as exc:  # advice never costs a case its record
            answer = {"not_checked": f"the UB probe raised {type(exc).__name__}: {str(exc)[:200]}"}
        if "claim" in answer:
            advice["ub_claim"] = answer["claim"]
            advice["not_checked"][RULE] = "a larger config compiles; not yet run against fp64"
        elif "not_checked" in answer:
            advice["not_checked"][RULE] = answer["not_checked"]
        else:
            advice["not_checked"].pop(RULE, None)  # checked: the plan is not small, or nothing larger fits
