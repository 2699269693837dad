"""Rule 3, contiguous innermost access: a block pointer or a tensor argument whose innermost stride is not 1."""

from __future__ import annotations

import ast

from parity.backends.ascend.perf_evidence import (
    Advice,
    Evidence,
    Finding,
    block_ptr_calls,
    evaluate,
    literal_ints,
    names_in,
    where,
)


def check_contiguity(ev: Evidence, advice: Advice) -> None:
    values = {**ev.scalars, **ev.constants}
    unknown: list[str] = []
    bases: set[str] = set()
    for src in ev.sources:
        for node, args in block_ptr_calls(src):
            bases |= names_in(args["base"]) if "base" in args else set()
            order, strides = literal_ints(args.get("order")), args.get("strides")
            if order is None or not isinstance(strides, (ast.Tuple, ast.List)) or order[0] >= len(strides.elts):
                unknown.append(f"{where(src, node.lineno)} (order or strides not literal)")
                continue
            inner = strides.elts[order[0]]
            stride = evaluate(inner, values)
            if stride is None:
                unknown.append(f"{where(src, node.lineno)} (stride `{ast.unparse(inner)}` unknown at the launch)")
            elif stride != 1:
                advice.findings.append(Finding(
                    "contiguity.block_ptr", where(src, node.lineno),
                    f"the block pointer's innermost axis (order[0] = {order[0]}) has stride `{ast.unparse(inner)}` = "
                    f"{stride} at this launch, not 1",
                    "make the tensor contiguous before the launch, or swap the block's axes (shape, strides, "
                    "block_shape and order) so the stride-1 axis is order[0], and transpose on load (tl.trans)"))
    if unknown and not any(f.rule == "contiguity.block_ptr" for f in advice.findings):
        advice.not_checked["contiguity.block_ptr"] = "; ".join(unknown[:3])
    for name, tensor in ev.tensors.items():
        if name in bases or len(tensor.shape) < 2 or tensor.shape[-1] <= 1 or tensor.stride[-1] == 1:
            continue
        advice.findings.append(Finding(
            "contiguity.tensor", None,
            f"argument `{name}` has shape {tensor.shape} and strides {tensor.stride}: its last axis is not stride 1",
            f"pass `{name}.contiguous()` (or the layout the kernel reads along stride 1), or read it through a "
            "block pointer whose order[0] is its stride-1 axis"))
