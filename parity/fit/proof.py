"""Advice is proven by computing: what a fit's proof says, and the change it asks for. Pure functions.

A config that fits is only a fix if the kernel still computes the right answer with it. parity.run.fit_proof
runs each fitting config on a tier that computes (ascend-lowered where it is installed, else Triton's
interpreter) and compares it with the fp64 reference; its answer is the fit's `proof`:

    {"tier": "ascend-lowered", "case": "M=4,N=65536,dtype=fp32",
     "configs": [{"config": {"BLOCK": 16384}, "was": {"BLOCK": 65536}, "computes": false,
                  "detail": "output 'out': ...", "grid_scaled": {}}],
     "kernel_change": "the kernel assumes one block covers the row: ...", "why_not": null}

`computes` is True (the fp64 answer within the spec's tolerance), False (wrong), or None (not run: the
tier could not run it, or the launch never passed the constexpr); `why_not` says why nothing was run.
The kernel source tells which change a wrong answer asks for (`kernel_change`): a block constexpr that no
loop steps by and no program id scales assumes one block covers its whole extent.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def _parse(source: str) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _program_id_axis(node: ast.AST) -> int | None:
    """The axis of a `tl.program_id(axis)` call, or None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name))):
        return None
    func = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
    if func != "program_id":
        return None
    arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "axis"), None)
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, int) else None


def grid_axes(source: str, name: str) -> set[int]:
    """The grid axes whose program id the kernel multiplies by the constexpr `name` (`pid * BLOCK`):
    a launcher that sizes its grid from `name` launches more programs along them as `name` shrinks."""
    tree = _parse(source)
    if tree is None:
        return set()
    pids: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            axis = _program_id_axis(node.value)
            if axis is not None:
                pids[node.targets[0].id] = axis
    axes = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for a, b in ((node.left, node.right), (node.right, node.left)):
                if _is_name(b, name):
                    axis = _program_id_axis(a)
                    if axis is None and isinstance(a, ast.Name):
                        axis = pids.get(a.id)
                    if axis is not None:
                        axes.add(axis)
    return axes


def loops_over(source: str, name: str) -> bool:
    """Whether a loop of the kernel uses `name` in its range (`for start in range(0, N, BLOCK)`)."""
    tree = _parse(source)
    if tree is None:
        return True  # unknown: never claim the kernel lacks a loop
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)):
            header = node.iter if isinstance(node, ast.For) else node.test
            if any(_is_name(n, name) for n in ast.walk(header)):
                return True
    return False


def kernel_change(source: str, wrong: Mapping[str, Any]) -> str:
    """The change a config that fits but computes wrong asks of the kernel (`wrong`: a proof entry)."""
    changed = [k for k, v in (wrong.get("config") or {}).items() if (wrong.get("was") or {}).get(k) != v]
    was = wrong.get("was") or {}
    config = ", ".join(f"{k}={v}" for k, v in (wrong.get("config") or {}).items())
    for key in changed if source.strip() else ():  # without the source, claim no missing loop
        if not loops_over(source, key) and not grid_axes(source, key):
            return (f"the kernel assumes one block covers the row: no loop steps by {key} and no program id is "
                    f"scaled by it, so at {config} (it passed {key}={was.get(key)}) each program reads only the first "
                    f"{wrong['config'][key]} elements of its row; add a loop over the row in steps of {key} "
                    f"(for start in range(0, N, {key})), then cap {key}")
    return (f"at {config} the kernel computes a different answer, so a smaller tile is no fix as it stands: "
            f"its result depends on {', '.join(changed) or 'the config'} beyond the tile size")


# How much more a reordered sum may round than the original config and still be called right. A blocked fp32
# sum of n terms in B lanes rounds by about n/sqrt(B) terms' worth of ulps: a block 16 times smaller (the fit
# advisor's 4 halvings) rounds 4 times more, and the max over a few rows varies by about 2x between orders.
# A wrong answer (a dropped tail, a stray element) is off by the size of the terms, orders of magnitude more.
REORDER_FACTOR = 16.0

# which test held for a proof entry's `computes` (its `criterion`): the spec's elementwise tolerance, the
# accumulation bound, or the original config's own error
BY_TOLERANCE, BY_BOUND, BY_ORIGINAL = "tolerance", "bound", "original"

# the accumulation bound's seam (parity.run.rounding, once it lands): the failing outputs' metrics ->
# (within the bound, its sentence), or None where it has no answer
Bound = Callable[[Mapping[str, Mapping[str, Any]]], "tuple[bool, str] | None"]


def within_rounding(per_output: Mapping[str, Mapping[str, Any]], original: Mapping[str, Mapping[str, Any]] | None,
                    was: str = "the original config", factor: float = REORDER_FACTOR,
                    bound: Bound | None = None) -> tuple[bool | None, str, str]:
    """Whether a config computes the fp64 answer, judged by rounding, never by a bare elementwise tolerance:
    (computes, criterion, sentence). `per_output`: the config's metrics by output (runner's `per_output`,
    values finite); `original`: the original config's, from the same inputs on the same tier. Criteria in
    order: the spec's tolerance; the accumulation bound (`bound`), decisive either way where it could be taken;
    only where it could not (a reference outside autograd), not worse than `factor` times the original config's
    own error. None where nothing can judge it (the original is outside the tolerance itself, or exact)."""
    failing = {k: m for k, m in per_output.items() if not m.get("passed")}
    if not failing:
        return True, BY_TOLERANCE, "within the spec's tolerance"
    said = bound(failing) if bound is not None else None
    if said is not None:  # the model was taken: beyond the bound no reordering explains the error
        return (True, BY_BOUND, f"within the accumulation bound: {said[1]}") if said[0] else \
            (False, BY_BOUND, f"beyond the accumulation bound: {said[1]}")
    if original is None:
        return None, BY_ORIGINAL, f"outside the spec's tolerance, and {was} gave no errors to judge it by"
    ratios = []
    for name, m in sorted(failing.items()):
        own = original.get(name)
        if own is None or not own.get("passed"):
            return None, BY_ORIGINAL, (f"output {name!r} is outside the spec's tolerance and so is {was}'s: no error "
                                      "of a right answer to judge it by")
        err, base = float(m.get("max_abs_err") or 0.0), float(own.get("max_abs_err") or 0.0)
        if base <= 0.0:
            return None, BY_ORIGINAL, (f"output {name!r}: max_abs_err {err:.3g}, while {was} computes it exactly "
                                      "here: no rounding to judge it by")
        ratios.append((err / base, name, err, base))
    ratio, name, err, base = max(ratios)
    words = f"output {name!r}: max_abs_err {err:.3g} is {ratio:.3g}x {was}'s {base:.3g} on the same inputs"
    if ratio > factor:
        return False, BY_ORIGINAL, f"{words}, over the {factor:g}x a reordered sum may round by"
    return True, BY_ORIGINAL, (f"within the rounding of {was}: {words} (at most {factor:g}x), though outside the "
                              "spec's elementwise tolerance")


def proven_configs(proof: Mapping[str, Any] | None) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]],
                                                             list[Mapping[str, Any]]]:
    """(those that compute the fp64 answer, those that compute wrong, those not run)."""
    entries = list((proof or {}).get("configs") or [])
    return ([e for e in entries if e.get("computes") is True], [e for e in entries if e.get("computes") is False],
            [e for e in entries if e.get("computes") is None])


def verdict_words(proof: Mapping[str, Any] | None) -> str:
    """What the proof found, in a few words, for the fit's answer."""
    if not proof:
        return "compiled only; not run on a tier that computes"
    if proof.get("why_not"):
        return f"compiled only; not run: {proof['why_not']}"
    right, wrong, unrun = proven_configs(proof)
    tier, case = proof.get("tier"), proof.get("case")
    if wrong:
        shown = ", ".join(label(e["config"]) for e in wrong)
        return f"computes WRONG on {tier} at {case} ({shown})"
    rounded = "".join(f"; {label(e['config'])}: {e.get('detail')}" for e in right
                      if e.get("criterion") not in (None, BY_TOLERANCE))  # which test held, and by how much
    if right and not unrun:
        return f"each computes the fp64 answer on {tier} at {case}{rounded}"
    if right:
        return (f"{len(right)} of {len(right) + len(unrun)} compute the fp64 answer on {tier} at {case}; "
                f"not run: {unrun[0].get('detail')}")
    return f"compiled only; not run on {tier}: {unrun[0].get('detail') if unrun else 'no config'}"


def label(config: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items()) or "(no constexpr changed)"


def change(fit: Mapping[str, Any]) -> str | None:
    """The "change:" advice, only as strong as its proof: the cap where its configs compute the fp64 answer,
    the kernel's own change where one computes wrong, the cap marked unproven otherwise."""
    proof: Mapping[str, Any] | None = fit.get("proof")
    cap: str | None = fit.get("cap")
    _, wrong, _ = proven_configs(proof)
    if wrong:  # so there is a proof
        asked: str | None = (proof or {}).get("kernel_change")
        return asked or verdict_words(proof)
    if not cap:
        return None
    if not fit.get("fitting"):
        return cap  # row blocks: a change to the launcher that no config here stands for, worded as such
    if is_fix(fit):
        return f"{cap}; proven: {verdict_words(proof)}"
    return f"{cap} (compiles; not proven to compute: {verdict_words(proof)})"


def is_fix(fit: Mapping[str, Any]) -> bool:
    """Whether the fit's fitting configs may be called a fix: every one run, and each computes the fp64 answer."""
    proof = fit.get("proof")
    right, wrong, unrun = proven_configs(proof)
    return bool(right) and not wrong and not unrun and not (proof or {}).get("why_not")


def entries_summary(entries: Sequence[Mapping[str, Any]]) -> str:
    return "; ".join(f"{label(e['config'])}: {e.get('detail') or ''}".rstrip(": ") for e in entries)


def source_text(fn_obj: Any) -> str:
    """A @triton.jit function's source (JITFunction keeps it as `src`; the interpreter's wrapper does not)."""
    src = getattr(fn_obj, "src", None)
    if src:
        return str(src)
    try:
        return inspect.getsource(getattr(fn_obj, "fn", fn_obj))
    except (OSError, TypeError):
        return ""
