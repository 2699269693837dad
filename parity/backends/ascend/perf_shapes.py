"""Rule 4, degenerate shapes: a tile's innermost axis one element wide, or narrower than the 32-byte alignment.

(A grid of one program is judged with the cores, parity.backends.ascend.perf_cores.)
"""

from __future__ import annotations

import ast

from parity.backends.ascend.perf_evidence import (
    Advice,
    Evidence,
    Finding,
    block_ptr_calls,
    block_sizes,
    call_name,
    parse_source,
    too_small,
)

ALIGN_BYTES = 32  # UB and DMA work in 32-byte blocks on Atlas A2


def _arange_block(node: ast.AST) -> str | None:
    """NAME of a `tl.arange(0, NAME)` call, or None."""
    if call_name(node) == "arange" and isinstance(node, ast.Call) and len(node.args) >= 2 \
            and isinstance(node.args[1], ast.Name):
        return node.args[1].id
    return None


def innermost_blocks(ev: Evidence) -> set[str]:
    """Block constexprs that size a tile's innermost axis: the last of a block pointer's block_shape, an
    arange (or a name assigned from an expression over one) indexed `[None, :]`, or any `tl.arange(0, B)` of
    a kernel without 2-D indexing. A row block indexed `[:, None]` is not one: a [1, 1024] tile is aligned."""
    inner: set[str] = set()
    for src in ev.sources:
        tree = parse_source(src)
        if tree is None:
            continue
        two_d = False
        aranges: set[str] = set()
        from_arange: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                names = [b for n in ast.walk(node.value) if (b := _arange_block(n))]
                if len(names) == 1:
                    from_arange[node.targets[0].id] = names[0]
            if (name := _arange_block(node)) is not None:
                aranges.add(name)
        for node in ast.walk(tree):
            if call_name(node) == "make_block_ptr":
                two_d = True
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
                two_d = True
                elts = node.slice.elts
                if len(elts) == 2 and isinstance(elts[0], ast.Constant) and elts[0].value is None:
                    base = node.value
                    name = _arange_block(base) or (from_arange.get(base.id) if isinstance(base, ast.Name) else None)
                    if name:
                        inner.add(name)
        for _, args in block_ptr_calls(src):
            shape = args.get("block_shape")
            if isinstance(shape, (ast.Tuple, ast.List)) and shape.elts and isinstance(shape.elts[-1], ast.Name):
                inner.add(shape.elts[-1].id)
        if not two_d:
            inner |= aranges
    return inner


def check_shapes(ev: Evidence, advice: Advice) -> None:
    blocks = block_sizes(ev)  # by use, not by name: BR/BC that size a block pointer are block sizes too
    if not blocks:
        advice.not_checked["shape.block_of_one"] = advice.not_checked["shape.under_32_bytes"] = \
            "no block-size constexpr in this compile (none bounds a tl.arange, shapes a tl.zeros/tl.full or " \
            "a block pointer's block_shape)"
        return
    small = too_small(ev)
    if small:
        advice.not_checked["shape.block_of_one"] = advice.not_checked["shape.under_32_bytes"] = small
        return
    inner = innermost_blocks(ev)
    for name, value in sorted(blocks.items()):
        if value == 1 and name in inner:
            advice.findings.append(Finding(
                "shape.block_of_one", None, f"constexpr {name}=1 sizes a tile's innermost axis: one element wide",
                f"give {name} at least {ALIGN_BYTES} bytes of elements (16 for fp16), or make the long axis innermost"))
    sizes = [t.itemsize for t in ev.tensors.values() if t.dtype.startswith(("float", "bfloat"))]
    if not sizes:
        advice.not_checked["shape.under_32_bytes"] = "no floating-point tensor argument recorded"
        return
    itemsize = max(sizes)  # the widest element: the most lenient reading of the alignment
    for name in sorted(inner & set(blocks)):
        value = blocks[name]
        if 1 < value and value * itemsize < ALIGN_BYTES:
            advice.findings.append(Finding(
                "shape.under_32_bytes", None,
                f"constexpr {name}={value} sizes a tile's innermost axis: {value} x {itemsize} bytes = "
                f"{value * itemsize} bytes, under the {ALIGN_BYTES}-byte alignment",
                f"make {name} at least {ALIGN_BYTES // itemsize}"))
