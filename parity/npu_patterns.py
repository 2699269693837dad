"""Source and TTIR patterns of the published silent wrong results of triton-ascend on a real NPU (parity.known_npu).

Each detector is a pure function of a kernel's source (the @triton.jit function and its helpers, as
parity.repro.source or a recorded bundle gives it) and returns the lines that have the pattern: empty when the kernel
has none. A line says the kernel *could* meet the bug, never that it did: the source does not carry every shape.
"""

from __future__ import annotations

import ast
import re
import textwrap

# reductions that take an axis (tl.sum(x, 0), tl.max(x, axis=0), x.sum(0)); tl.reduce's axis is its second argument
REDUCE_OPS = ("sum", "max", "min", "reduce", "argmax", "argmin", "xor_sum", "prod")
SHAPE_OPS = ("zeros", "full", "reshape", "view", "broadcast_to", "make_block_ptr")
HALF_TYPES = ("float16", "bfloat16", "fp16", "bf16")
TL_MODULES = frozenset({"tl", "triton", "language"})  # the names a kernel calls Triton's language functions by
_TTIR_REDUCE = re.compile(r'"tt\.reduce"\([^)]*\)\s*<\{axis = 0 : i32\}>.*?\}\)\s*:\s*\(tensor<((?:\d+x)+)\w+>',
                          re.DOTALL)
_TTIR_HALF_ARG = re.compile(r"tt\.func\s+(?:public\s+)?@[\w$.]+\(([^\n]*)\)\s*attributes")


def _trees(source: str) -> list[ast.AST]:
    """Each function of the source parsed alone (the kernel and its helpers are joined, each as indented as it
    was); one that does not parse is skipped."""
    trees: list[ast.AST] = []
    for chunk in re.split(r"\n(?=\s*@|\s*def )", source):
        try:
            trees.append(ast.parse(textwrap.dedent(chunk)))
        except SyntaxError:
            continue
    return trees


def _name(node: ast.AST) -> str:
    """The called or annotated name's last part: `tl.sum` -> "sum", `x.sum` -> "sum", "fp16" -> "fp16"."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rsplit(".", 1)[-1]
    return ""


def _calls(tree: ast.AST, names: tuple[str, ...]) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _name(n.func) in names]


def _line(node: ast.AST) -> str:
    return ast.unparse(node)[:120]


def _is_zero(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


def _on_module(call: ast.Call) -> bool:
    """`tl.sum(...)` (a function of Triton's language module), not `x.sum(...)` (a tensor's method)."""
    return isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
        and call.func.value.id in TL_MODULES


def _axis(call: ast.Call) -> ast.AST | None:
    axis = next((k.value for k in call.keywords if k.arg in ("axis", "dim")), None)
    if axis is not None or not isinstance(call.func, ast.Attribute):
        return axis
    if _on_module(call):
        return call.args[1] if len(call.args) >= 2 else None  # tl.sum(x, 0)
    return call.args[0] if call.args else None  # x.sum(0)


def _rank3(tree: ast.AST) -> bool:
    """The function builds a tile of three or more dimensions: a subscript such as [:, None, None], or a shape of
    three or more entries given to tl.zeros / tl.full / tl.reshape / tl.broadcast_to / tl.make_block_ptr."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) >= 3 \
                and any(isinstance(e, ast.Constant) and e.value is None for e in node.slice.elts):
            return True
        if isinstance(node, ast.Call) and _name(node.func) in SHAPE_OPS:
            shapes = [*node.args, *(k.value for k in node.keywords if k.arg in ("shape", "block_shape"))]
            if any(isinstance(s, (ast.List, ast.Tuple)) and len(s.elts) >= 3 for s in shapes):
                return True
    return False


def leading_axis_reductions(source: str) -> list[str]:
    """triton-ascend#2291: reductions along axis 0 in a function that builds a 3-D (or higher) tile."""
    found: list[str] = []
    for tree in _trees(source):
        if _rank3(tree):
            found += [_line(c) for c in _calls(tree, REDUCE_OPS) if _is_zero(_axis(c))]
    return list(dict.fromkeys(found))


def half_scalar_arguments(source: str) -> list[str]:
    """triton-ascend#2364: kernel parameters annotated tl.float16 / tl.bfloat16 (a 16-bit float scalar argument)."""
    found: list[str] = []
    for tree in _trees(source):
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            found += [f"{fn.name}({a.arg}: {ast.unparse(a.annotation)})" for a in fn.args.args
                      if a.annotation is not None and _name(a.annotation) in HALF_TYPES]
    return list(dict.fromkeys(found))


def masked_stores(source: str) -> list[str]:
    """FlagTree#1245: tl.store with a mask (the keyword, or a third positional argument)."""
    found: list[str] = []
    for tree in _trees(source):
        found += [_line(c) for c in _calls(tree, ("store",))
                  if any(k.arg == "mask" for k in c.keywords) or len(c.args) >= 3]
    return list(dict.fromkeys(found))


def atomic_add_returns(source: str) -> list[str]:
    """FlagTree#1083: tl.atomic_add calls whose returned value the kernel uses (assigned, passed on, compared); a
    bare `tl.atomic_add(...)` statement only accumulates, which the issue found correct."""
    found: list[str] = []
    for tree in _trees(source):
        bare = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        found += [_line(c) for c in _calls(tree, ("atomic_add",)) if id(c) not in bare]
    return list(dict.fromkeys(found))


def ttir_leading_axis_reductions(ttir: str) -> list[str]:
    """triton-ascend#2291 on a TTIR: each tt.reduce along axis 0 of a tensor of rank 3 or more, as its shape."""
    return [m.group(1).rstrip("x") for m in _TTIR_REDUCE.finditer(ttir) if m.group(1).count("x") >= 3]


def ttir_half_scalar_arguments(ttir: str) -> list[str]:
    """triton-ascend#2364 on a TTIR: the kernel's scalar arguments typed f16 or bf16 (`%arg1: f16`)."""
    found: list[str] = []
    for m in _TTIR_HALF_ARG.finditer(ttir):
        found += re.findall(r"(%arg\d+: b?f16)\b", m.group(1))
    return found
