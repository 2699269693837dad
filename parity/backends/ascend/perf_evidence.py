"""The evidence Ascend performance advice reads, and the source-reading helpers its rule families share.

One launch of one compiled kernel on an Ascend arch: its grid, bishengir's core type, the kernel's source (with
the @triton.jit helpers it calls), its constexprs, its other integers and tensors, and the int globals of its
module. Pure data and pure functions: the rules (parity.backends.ascend.perf_rules) never touch a device.
"""

from __future__ import annotations

import ast
import builtins
import math
import textwrap
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from parity.backends.ascend.arch import AscendArch

# A launch smaller than this per usable core cannot keep the NPU busy whatever its grid: idle cores there
# are the problem's size, not the kernel's choice, so the core and shape rules judge only larger launches.
MIN_BYTES_PER_CORE = 32 * 1024


@dataclass(frozen=True)
class SourceText:
    """One function's source: the kernel first, then the @triton.jit helpers it calls."""

    name: str
    text: str
    first_line: int = 1  # the line of `text`'s first line in `file`
    file: str | None = None


@dataclass(frozen=True)
class TensorArg:
    dtype: str
    itemsize: int
    shape: tuple[int, ...]
    stride: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.itemsize


@dataclass(frozen=True)
class Evidence:
    """What one launch of one compiled kernel shows on an Ascend arch."""

    kernel: str
    arch: AscendArch
    grid: tuple[int, ...] | None
    core_type: str | None  # bishengir's mix_mode: "aic" (cube only), "aiv" (vector only), "mix"
    sources: tuple[SourceText, ...] = ()
    constants: Mapping[str, Any] = field(default_factory=dict)  # constexprs (and specialized 1s) by name
    scalars: Mapping[str, Any] = field(default_factory=dict)  # the launch's other non-tensor arguments
    tensors: Mapping[str, TensorArg] = field(default_factory=dict)  # the launch's tensor arguments
    module_ints: Mapping[str, int] = field(default_factory=dict)  # int globals the kernel's module defines


@dataclass(frozen=True)
class Finding:
    rule: str  # one of RULES
    line: str | None  # "file:line" (or "kernel:line" where the file is unknown)
    evidence: str
    change: str

    def as_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "line": self.line, "evidence": self.evidence, "change": self.change}


@dataclass
class Advice:
    findings: list[Finding] = field(default_factory=list)
    not_checked: dict[str, str] = field(default_factory=dict)  # rule -> why it had nothing to read

    def as_json(self, arch: str) -> dict[str, Any]:
        return {"arch": arch, "findings": [f.as_json() for f in self.findings], "not_checked": dict(self.not_checked),
                "wording": "static advice from the compile and the launch, never a measured speed"}


# --- reading the source ---------------------------------------------------------------------------------

def uses_cube(ev: Evidence) -> bool | None:
    """Whether the kernel runs on cube cores: bishengir's core type, else a `tl.dot` in its source."""
    if ev.core_type in ("aic", "mix"):
        return True
    if ev.core_type == "aiv":
        return False
    if not ev.sources:
        return None
    return any(tl_calls(s, {"dot"}) for s in ev.sources)


def cores_of(arch: AscendArch, cube: bool) -> tuple[int, str, str]:
    """(count, kind, device property) a grid of this kernel should be sized to."""
    return (arch.aic_cores, "cube", "num_aicore") if cube else (arch.aiv_cores, "vector", "num_vectorcore")


def programs(grid: Sequence[int] | None) -> int | None:
    return math.prod(grid) if grid else None


def where(src: SourceText, lineno: int) -> str:
    line = src.first_line + lineno - 1
    return f"{src.file}:{line}" if src.file else f"{src.name}:{line}"


def parse_source(src: SourceText) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(src.text))
    except SyntaxError:
        return None


def call_name(node: ast.AST) -> str | None:
    """`tl.dot` -> "dot", `range` -> "range", `tl.math.exp` -> "exp"."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def tl_calls(src: SourceText, names: set[str] | frozenset[str]) -> list[tuple[str, int]]:
    """(name, line in the source) of each call to one of `names`: tl.x, tl.math.x, or x imported by name
    (fla's `exp`)."""
    tree = parse_source(src)
    if tree is None:
        return []
    found: list[tuple[str, int]] = []
    for n in ast.walk(tree):
        name = call_name(n)
        if isinstance(n, ast.Call) and name is not None and name in names and (isinstance(n.func, ast.Attribute)
                                                           or not hasattr(builtins, name)):
            found.append((name, n.lineno))
    return found


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def pid_names(tree: ast.AST) -> set[str]:
    """Names assigned from an expression over `tl.program_id(...)` (two levels: pid, then pid * n)."""
    found: set[str] = set()
    for _ in range(2):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and (
                    any(call_name(c) == "program_id" for c in ast.walk(node.value)) or names_in(node.value) & found):
                found |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return found


def evaluate(node: ast.AST, values: Mapping[str, Any]) -> int | None:
    """An integer expression over known names (+ - * // % and unary minus), or None where unknown."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        value = values.get(node.id)
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = evaluate(node.operand, values)
        return None if inner is None else -inner
    if isinstance(node, ast.BinOp):
        left, right = evaluate(node.left, values), evaluate(node.right, values)
        if left is None or right is None:
            return None
        ops: dict[type[ast.operator], Callable[[], int | None]] = {
            ast.Add: lambda: left + right, ast.Sub: lambda: left - right, ast.Mult: lambda: left * right,
            ast.FloorDiv: lambda: left // right if right else None, ast.Mod: lambda: left % right if right else None}
        op = ops.get(type(node.op))
        return op() if op else None
    return None


def launch_bytes(ev: Evidence) -> int | None:
    return sum(t.nbytes for t in ev.tensors.values()) if ev.tensors else None


def too_small(ev: Evidence) -> str | None:
    """Why this launch is too small to judge its cores or tile shapes (its problem, not the kernel's
    choice), or None. A tile of one element is the problem's own shape when the problem is that small."""
    cube = uses_cube(ev)
    size = launch_bytes(ev)
    if size is None:
        return "the launch's tensors were not recorded"
    cores, kind, _ = cores_of(ev.arch, bool(cube))
    if size < cores * MIN_BYTES_PER_CORE:
        return (f"a small launch: {size:,} bytes of tensors for {cores} {kind} cores "
                f"(judged from {MIN_BYTES_PER_CORE // 1024} KiB per core)")
    return None


def block_ptr_calls(src: SourceText) -> Iterator[tuple[ast.Call, dict[str, ast.AST]]]:
    order = ("base", "shape", "strides", "offsets", "block_shape", "order")
    tree = parse_source(src)
    if tree is None:
        return
    for node in ast.walk(tree):
        if call_name(node) == "make_block_ptr" and isinstance(node, ast.Call):
            args: dict[str, ast.AST] = dict(zip(order, node.args, strict=False))
            args.update({k.arg: k.value for k in node.keywords if k.arg})
            yield node, args


def literal_ints(node: ast.AST | None) -> list[int] | None:
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
    return values if len(values) == len(node.elts) else None


# tl calls whose first argument (or `shape=`) is a tile's shape
SHAPE_CALLS = frozenset({"zeros", "full", "empty"})


def block_sizes(ev: Evidence) -> dict[str, int]:
    """The int constexprs that size a tile, found by use, whatever their names: a bound of `tl.arange(0, X)`,
    a `tl.zeros`/`tl.full` shape, a block pointer's `block_shape`. A flag (HAS_BIAS), a loop count or a
    problem size used only in arithmetic sizes no tile and is not one."""
    used: set[str] = set()
    for src in ev.sources:
        tree = parse_source(src)
        if tree is None:
            continue
        for node in ast.walk(tree):
            name = call_name(node)
            if not isinstance(node, ast.Call) or name is None:
                continue
            if name == "arange":
                used |= set().union(*(names_in(a) for a in node.args[1:2]))
            elif name in SHAPE_CALLS:
                shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "shape"), None)
                used |= names_in(shape) if shape is not None else set()
        for _, args in block_ptr_calls(src):
            block_shape = args.get("block_shape")
            used |= names_in(block_shape) if block_shape is not None else set()
    return {k: v for k, v in ev.constants.items() if k in used and isinstance(v, int) and not isinstance(v, bool)}


# --- the code this launch compiles: constexpr branches ruled out are not evidence ---------------------------

_COMPARE: dict[type[ast.cmpop], Callable[[int, int], bool]] = {
    ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}


def static_truth(test: ast.AST, constants: Mapping[str, Any]) -> bool | None:
    """The value of an `if` test the frontend folds at this launch (constexpr names, `not`, `and`/`or`, an
    integer comparison), or None where it depends on run-time values."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.Name):
        value = constants.get(test.id, ...)
        return bool(value) if value is None or isinstance(value, (bool, int)) else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = static_truth(test.operand, constants)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [static_truth(v, constants) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # a True decides `or`, a False decides `and`
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARE:
        left, right = evaluate(test.left, constants), evaluate(test.comparators[0], constants)
        return None if left is None or right is None else bool(_COMPARE[type(test.ops[0])](left, right))
    return None


def _dead_ranges(body: Sequence[ast.stmt], constants: Mapping[str, Any]) -> Iterator[tuple[int, int]]:
    """(first, last) lines of each statement list a constexpr `if` rules out, outermost only."""
    for node in body:
        truth = static_truth(node.test, constants) if isinstance(node, ast.If) else None
        for attr in ("body", "orelse", "finalbody"):
            stmts = getattr(node, attr, None)
            if not stmts or not isinstance(stmts, list) or not isinstance(stmts[0], ast.stmt):
                continue
            if (truth is False and attr == "body") or (truth is True and attr == "orelse"):
                yield stmts[0].lineno, stmts[-1].end_lineno or stmts[-1].lineno
            else:
                yield from _dead_ranges(stmts, constants)


def live_source(src: SourceText, constants: Mapping[str, Any]) -> SourceText:
    """`src` with the branches of constexpr `if`s this launch rules out blanked (`pass`, then empty lines), so a
    rule reads only what the frontend compiles; line numbers are kept. Unchanged where nothing folds or the
    result would not parse."""
    tree = parse_source(src)
    if tree is None or not isinstance(tree, ast.Module):
        return src
    lines = textwrap.dedent(src.text).splitlines()
    ranges = list(_dead_ranges(tree.body, constants))
    if not ranges:
        return src
    for first, last in ranges:
        indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        lines[first - 1: last] = [indent + "pass"] + [""] * (last - first)
    text = "\n".join(lines) + "\n"
    try:
        ast.parse(text)
    except SyntaxError:
        return src
    return SourceText(src.name, text, src.first_line, src.file)
