"""The tl.load and tl.store calls of a kernel that have no mask: where an out-of-bounds access comes from.

Pure over the kernel's source (read once through `inspect`). A call counts as masked with a `mask`
(keyword or positional) or a `boundary_check` (block pointers); a call on a scalar pointer (`tl.load(lock_ptr)`,
`tl.load(X + row)` with `row = tl.program_id(0)`) is not listed either: it touches one element, which a block's
offsets cannot carry past the tensor. Anything else is listed with its file and line, as a user would look for it.
Each unmasked access also names the kernel parameters its pointer derives from (through the kernel's own
assignments; a loaded value is data, not a pointer's base), so a red zone that names the argument it caught
joins the access that touches it (`touching`).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
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


def _unmasked_nodes(tree: ast.AST, op: str, scalars: bool = False, masked: bool = False) -> list[ast.Call]:
    """Each `<x>.<op>(...)` call on a block pointer without a mask or boundary_check, in source order; with
    `scalars` also one-element accesses, with `masked` also masked ones (every access)."""
    found = []
    blocks = block_names(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == op):
            continue
        keywords = {k.arg for k in node.keywords}
        if not masked and (keywords & {"mask", "boundary_check"} or len(node.args) > MASK_POSITION[op]):
            continue
        pointer = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "pointer"), None)
        if not scalars and not _is_block(pointer, blocks):  # one element: a scalar access is no unmasked tail
            continue
        found.append(node)
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None


def unmasked_calls(source: str, op: str) -> list[int]:
    """Line numbers (1-based, in `source`) of each `<x>.<op>(...)` call on a block pointer without a mask or
    boundary_check."""
    tree = _parse(source)
    return [] if tree is None else [n.lineno for n in _unmasked_nodes(tree, op)]


def _names(node: ast.AST | None) -> set[str]:
    """The names an expression reads, outside any tl.load in it (a loaded value is data, not a pointer base)."""
    if node is None:
        return set()
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load":
        return set()
    if isinstance(node, ast.Name):
        return {node.id}
    return set().union(*(_names(child) for child in ast.iter_child_nodes(node)))


def _assignments(tree: ast.AST) -> dict[str, set[str]]:
    """name -> the names its assigned values read, over every assignment in the kernel (a loop's `p += s` too)."""
    reads: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets, value = [node.target], node.value
        else:
            continue
        used = _names(value) | ({node.target.id} if isinstance(node, ast.AugAssign)
                                and isinstance(node.target, ast.Name) else set())
        for target in targets:
            for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                reads.setdefault(name, set()).update(used)
    return reads


def pointer_args(source: str, op: str, scalars: bool = False,
                 masked: bool = False) -> list[tuple[int, tuple[str, ...]]]:
    """(line, the kernel parameters its pointer derives from) for each unmasked `<x>.<op>(...)` in `source` (with
    `scalars`/`masked` as in _unmasked_nodes)."""
    tree = _parse(source)
    func = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)), None) if tree else None
    if tree is None or func is None:
        return []
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)]
    reads = _assignments(func)
    out = []
    for node in _unmasked_nodes(func, op, scalars, masked):
        pointer = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "pointer"), None)
        seen, todo = set(), list(_names(pointer))
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += reads.get(name, ()) if name not in params else ()
        out.append((node.lineno, tuple(p for p in params if p in seen)))
    return out


@dataclass(frozen=True)
class Access:
    """One unmasked access: 'file:line: code', and the kernel parameters its pointer derives from."""

    op: str  # "load" or "store"
    where: str
    args: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.op, "where": self.where, "args": list(self.args)}


def _source(kernel: Any) -> tuple[list[str], int, str] | None:
    fn = python_function(kernel)
    try:
        lines, first = inspect.getsourcelines(fn)
        return lines, first, inspect.getsourcefile(fn) or "?"
    except (OSError, TypeError):
        return None


def unmasked_with_args(kernel: Any, op: str, scalars: bool = False, masked: bool = False) -> list[Access]:
    """Each unmasked tl.<op> of the kernel with the parameters its pointer derives from; [] where the source
    cannot be read. `scalars`/`masked` as in _unmasked_nodes."""
    found = _source(kernel)
    if found is None:
        return []
    lines, first, path = found
    return [Access(op, _where(lines, first, path, n), args)
            for n, args in pointer_args("".join(lines), op, scalars, masked)]


def stray_stores(kernel: Any, tensor: str) -> list[Access]:
    """The stores a red-zone write into `tensor` names: its unmasked block stores; where it has none and every
    store that touches it is unmasked (one-element stores: `out + pid * 2 + 1` past a buffer the host made too
    small), those. A tensor a masked store touches names no one-element store: the write may be the mask's
    (a lowering that drops it), which is the other rules' to settle."""
    block = touching(unmasked_with_args(kernel, "store"), tensor)
    if block:
        return block
    every = touching(unmasked_with_args(kernel, "store", scalars=True, masked=True), tensor)
    unmasked = touching(unmasked_with_args(kernel, "store", scalars=True), tensor)
    return unmasked if len(unmasked) == len(every) else []


def touching(accesses: Sequence[Access], tensor: str) -> list[Access]:
    """The accesses whose pointer derives from the argument a red zone names ("x", "q[1]", or aliases "a, b")."""
    names = {t.strip().partition("[")[0] for t in tensor.split(",")}
    return [a for a in accesses if names & set(a.args)]


def unmasked_accesses(kernel: Any, op: str) -> list[str]:
    """'file:line: code' of each unmasked tl.<op> in the kernel (op: "load" or "store"); [] where the source
    cannot be read."""
    found = _source(kernel)
    if found is None:
        return []
    lines, first, path = found
    return [_where(lines, first, path, n) for n in unmasked_calls("".join(lines), op)]


def _where(lines: Sequence[str], first: int, path: str, n: int) -> str:
    """'file:line: code' of line `n` (1-based) of a kernel's source lines that start at line `first` of `path`."""
    return f"{path.rsplit('/', 1)[-1]}:{first + n - 1}: {lines[n - 1].strip()}"
