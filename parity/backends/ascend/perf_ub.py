"""Rule 2, UB use: a config whose UB plan uses under a quarter of the buffer while a larger config fits.

This half runs in the compile child, where the compile-only driver can compile a candidate (the fit
advisor's probe, parity.fit.probe, which reads bishengir's UB plan). Per kernel and variant of a case, the
compile with the largest tile is judged (an autotune list's smaller configs are the tuner's business):
its own UB plan first, and only where that is under a quarter of the buffer, larger configs, smallest
first, up to the first that plans a quarter (else the largest that fits): the kernel's own autotune configs
with a larger tile, and ones derived by doubling its blocks, leaving a block that already covers the
extent the kernel masks it by (`offs < N` at this launch) as it is. A fitting one is a claim, not
advice: parity.perf.proof runs it on a tier that computes (ascend-lowered) against fp64, and only a
config that computes becomes "larger tiles fit". A larger tile means fewer programs where a program id
tiles by the block (`pid * BLOCK`, grid = cdiv(N, BLOCK)): a candidate is tried only where the grid it
implies still passes the cores rule's own test (parity.backends.ascend.perf_cores.grid_findings), so the
advice never leaves cores idle that rule 1 would then flag (393,216 fp32 elements: BLOCK=16384 is 24
programs on 48 vector cores).
Probes share the fit advisor's cache, so a kernel's later cases cost nothing.
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from parity.backends.ascend.perf_cores import grid_findings
from parity.backends.ascend.perf_evidence import Evidence, block_sizes, call_name
from parity.fit import cache, candidates, search
from parity.fit.hook import FitTier, autotune_configs
from parity.fit.probe import kernel_text, named_constants
from parity.fit.proof import grid_axes, label

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
        if isinstance(node, ast.Call) and call_name(node) == "make_block_ptr":
            shape = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "shape"), None)
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


def implied_grid(grid: Sequence[int], source: str, blocks: Mapping[str, int],
                 config: Mapping[str, Any]) -> tuple[int, ...]:
    """The grid at `config` of a launcher that sizes each axis a program id tiles by a block (`pid * BLOCK`)
    as cdiv(N, BLOCK): that axis shrinks by the block's growth, rounded up (cdiv(cdiv(N, b), f) = cdiv(N, b*f)).
    Other axes (a persistent loop's, a row grid's) are kept."""
    new = [int(g) for g in grid]
    for key, old in blocks.items():
        value = config.get(key, old)
        if not isinstance(value, int) or value <= 0 or value == old:
            continue
        for axis in grid_axes(source, key):
            if axis < len(new):
                new[axis] = -(-new[axis] * old // value)
    return tuple(new)


def idles_cores(ev: Evidence | None, grid: tuple[int, ...]) -> str | None:
    """Why `grid` (a larger tile's) would not keep the arch's cores busy, by the cores rule's own test, or
    None where it would, or where it is the grid already launched (the cores rule judges that one itself)."""
    if ev is None or ev.grid is None or grid == tuple(ev.grid):
        return None
    verdict = grid_findings(dataclasses.replace(ev, grid=grid))
    if isinstance(verdict, str):
        return f"the cores rule cannot show its grid {grid} keeps the cores busy ({verdict})"
    return f"its grid {grid} would be flagged: {verdict[0].rule}, {verdict[0].evidence}" if verdict else None


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


def judge(compile_: dict[str, Any], attempt: Any, kernels: Iterable[Any], tier: FitTier,
          ev: Evidence | None = None) -> dict[str, Any]:
    """{"claim": ...} where a larger config fits, else {"not_checked": why}, {"withheld": why} (every larger
    tile would leave cores idle: `ev` is the launch's evidence) or {} (the plan is not small)."""
    src, target, options = attempt.source
    named = named_constants(src)
    blocks = {k: int(named[k]) for k in candidates.block_keys(named)}
    if not blocks:
        sized = sorted(block_sizes(ev)) if ev is not None else []
        return {"not_checked": (f"{', '.join(sized)} size tiles but are not enlarged: " if sized else "no block "
                                "constexpr to enlarge: ") + "this rule grows only the fit advisor's tile knobs by name "
                "(BLOCK*, TILE*, BK/BV/BM/BN), since a tile sized by a problem size (HEAD_DIM) or a chunk size "
                "a chunked algorithm's kernels share (BT) computes another problem when it grows"}
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
    searched, held_back = 0, None
    grid = tuple(int(g) for g in (getattr(attempt, "grid", None) or ()))
    # smallest first: the first larger config that plans at least a quarter of the buffer, else the largest
    # that fits (one that fills the buffer leaves the pipeline nothing to double-buffer with)
    own_list = autotune_configs(kernels, str(compile_.get("kernel")))
    for config in larger_candidates(blocks, own_list, sorted(grow)):
        if time.monotonic() > deadline:
            break
        idle = idles_cores(ev, implied_grid(grid, text, blocks, config)) if grid else None
        if idle:  # skipped, not compiled: an advice rule 1 would flag is no advice
            held_back = held_back or f"{label(config)} is not advised: {idle}"
            continue
        outcome = probe(config)
        searched += 1
        if not outcome.get("ok"):
            break
        larger = (config, outcome)
        if (outcome.get("used") or 0) >= UNDER_SHARE * of:
            break
    if larger is None:  # nothing larger fits (the small plan is the kernel's limit here), or keeps the cores busy
        return {"withheld": held_back} if held_back else {}
    return {"claim": {"config": blocks, "used": used, "of": of, "larger": larger[0],
                      "larger_used": larger[1].get("used"), "searched": searched, "held_back": held_back}}


def attach(compiles: Sequence[dict[str, Any]], attempts: Sequence[Any], kernels: Iterable[Any],
           tier: FitTier, evidence: Mapping[int, Evidence] | None = None) -> None:
    """Put each judged compile's claim (or why it was not checked) on its `ascend_perf`; `evidence`: each
    attempt's launch evidence by id(attempt), for the cores rule's test of a larger tile's grid."""
    kernels = list(kernels)
    for compile_, attempt in _judged(compiles, attempts).values():
        advice = compile_.get("ascend_perf")
        if advice is None:
            continue
        try:
            answer = judge(compile_, attempt, kernels, tier, (evidence or {}).get(id(attempt)))
        except Exception as exc:  # advice never costs a case its record
            answer = {"not_checked": f"the UB probe raised {type(exc).__name__}: {str(exc)[:200]}"}
        if "claim" in answer:
            advice["ub_claim"] = answer["claim"]
            advice["not_checked"][RULE] = "a larger config compiles; not yet run against fp64"
        elif "not_checked" in answer:
            advice["not_checked"][RULE] = answer["not_checked"]
        else:
            advice["not_checked"].pop(RULE, None)  # checked: the plan is not small, or nothing larger fits
            if answer.get("withheld"):
                advice["ub_withheld"] = answer["withheld"]
