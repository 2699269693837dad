"""The tl.load and tl.store calls of a kernel that have no mask: where an out-of-bounds access comes from.

Pure over the kernel's source (read once through `inspect`). A call counts as masked with a `mask`
(keyword or positional) or a `boundary_check` (block pointers); a call on a scalar pointer (`tl.load(lock_ptr)`,
`tl.load(X + row)` with `row = tl.program_id(0)`) is not listed either: it touches one element, which a block's
offsets cannot carry past the tensor. Anything else is listed with its file and line, as a user would look for it.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

# the positional index of `mask` in tl.load(pointer, mask, other, ...) and tl.store(pointer, value, mask, ...)
MASK_POSITION = {"load": 1, "store": 2}
# calls whose result is a block whatever their arguments
BLOCK_MAKERS = frozenset({"arange", "make_block_ptr", "make_tensor_descriptor", "advance", "zeros", "zeros_like",
                          "full", "full_like", "broadcast", "broadcast_to", "reshape", "view", "expand_dims", "join",
                          "cat", "trans", "permute", "rand", "randn", "randint", "randint4x"})
# calls whose result is a scalar when every argument (and the receiver of a method) is one; any other call (a
# helper of the kernel's own) may return a block, so its result is taken for one
SCALAR_PRESERVING = frozenset({"program_id", "num_programs", "cdiv", "load", "to", "minimum", "maximum", "abs",
                               "where", "multiple_of", "max_contiguous", "range", "static_range", "int", "min", "max",
                               "atomic_add", "atomic_cas", "atomic_xchg", "atomic_max", "atomic_min", "atomic_and",
                               "atomic_or", "atomic_xor", "cast", "constexpr"})


def _call_name(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def _is_block(node: ast.AST | None, blocks: set[str]) -> bool:
    """Whether an expression may be a block (a tensor of more than one element), given the names known to be."""
    if node is None or isinstance(node, ast.Constant):
        return False
    if isinstance(node, ast.Name):
        return node.id in blocks
    if isinstance(node, ast.Subscript):  # x[:, None] makes a block; shape[0] reads a tuple
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(i, ast.Slice) or (isinstance(i, ast.Constant) and i.value is None) for i in index):
            return True
        return _is_block(node.value, blocks)
    if isinstance(node, ast.Call):
        name = _call_name(node)
        if name in BLOCK_MAKERS or name not in SCALAR_PRESERVING:
            return True
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        return any(_is_block(a, blocks) for a in [receiver, *node.args, *(k.value for k in node.keywords)])
    return any(_is_block(child, blocks) for child in ast.iter_child_nodes(node))


def _targets(node: ast.AST) -> list[tuple[ast.AST, ast.AST | None]]:
    """(target, value) of each assignment, loop and augmented assignment."""
    if isinstance(node, ast.Assign):
        return [(t, node.value) for t in node.targets]
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return [(node.target, node.value)]
    if isinstance(node, ast.For):
        return [(node.target, node.iter)]
    return []


def block_names(tree: ast.AST) -> set[str]:
    """The names that are ever bound to a block (flow-insensitive, to a fixed point): what is left is scalar
    (the kernel's arguments, program ids, values loaded through a scalar pointer)."""
    blocks: set[str] = set()
    bindings = [b for node in ast.walk(tree) for b in _targets(node)]
    changed = True
    while changed:
        changed = False
        for target, value in bindings:
            names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)} - blocks
            if names and _is_block(value, blocks):
                blocks |= names
                changed = True
    return blocks


def python_function(kernel: Any) -> Any:
    """The plain function under a JITFunction, an Autotuner, Heuristics or an interpreted kernel."""
    seen = kernel
    for _ in range(8):
        inner = getattr(seen, "fn", None)
        if inner is None or inner is seen:
            break
        seen = inner
    return seen


def unmasked_calls(source: str, op: str) -> list[int]:
    """Line numbers (1-based, in `source`) of each `<x>.<op>(...)` call on a block pointer without a mask or
    boundary_check."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return []
    found = []
    blocks = block_names(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == op):
            continue
        keywords = {k.arg for k in node.keywords}
        if keywords & {"mask", "boundary_check"} or len(node.args) > MASK_POSITION[op]:
            continue
        pointer = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "pointer"), None)
        if not _is_block(pointer, blocks):  # one element: a scalar access is no unmasked tail
            continue
        found.append(node.lineno)
    return sorted(found)


def unmasked_accesses(kernel: Any, op: str) -> list[str]:
    """'file:line: code' of each unmasked tl.<op> in the kernel (op: "load" or "store"); [] where the source
    cannot be read."""
    fn = python_function(kernel)
    try:
        lines, first = inspect.getsourcelines(fn)
        path = inspect.getsourcefile(fn) or "?"
    except (OSError, TypeError):
        return []
    return [f"{path.rsplit('/', 1)[-1]}:{first + n - 1}: {lines[n - 1].strip()}"
            for n in unmasked_calls("".join(lines), op)]
