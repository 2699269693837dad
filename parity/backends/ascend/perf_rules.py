"""Ascend performance advice from what a compile shows: pure functions over one launch's evidence.

The porting note behind this project gives four tuning rules for Triton on Ascend (use every core, tile
to stay inside the unified buffer, keep block accesses contiguous, avoid degenerate shapes) and names
mixing cube and vector work as the advanced step. Each rule here reads only what exists without an NPU:
the launch grid, the arch's core counts (parity.backends.ascend.arch), bishengir's core type for the
kernel (aic, aiv or mix), the kernel's source (its strided loops, block pointers, block constexprs) and
the launch's own tensors and integers. A finding names the line, the evidence and the change; it is
static advice, never a measured speed. A rule that had nothing to read says so in `not_checked`.

Why each core count: triton-ascend's guide sizes a persistent grid to the physical cores,
`driver.active.utils.get_device_properties(dev)["num_aicore"]` for a kernel with `tl.dot` and
`["num_vectorcore"]` for the rest, and strides the tiles with `range(pid, num_blocks, num_core)`
(https://gitcode.com/Ascend/triton-ascend/blob/main/docs/en/programming_guide/vector_operator.md).
"""

from __future__ import annotations

import ast
import builtins
import math
import re
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from parity.backends.ascend.arch import ASCEND_ARCHS, AscendArch

# A launch smaller than this per usable core cannot keep the NPU busy whatever its grid: idle cores there
# are the problem's size, not the kernel's choice, so the core rules judge only larger launches.
MIN_BYTES_PER_CORE = 32 * 1024
# the last wave's share of the cores below which the launch wastes a noticeable part of the NPU
MIN_WAVE_USE = 0.75
ALIGN_BYTES = 32  # UB and DMA work in 32-byte blocks on Atlas A2
BLOCK_NAME_RE = re.compile(r"^(\w*BLOCK\w*|\w*TILE\w*|B[KVMNT])$")
# tl calls that run on the vector cores of a mix kernel (reductions, transcendental and select work)
VECTOR_CALLS = frozenset({"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sigmoid", "softmax", "max", "min", "sum",
                          "maximum", "minimum", "where", "cumsum", "cumprod", "abs", "fma", "erf", "tanh"})
RULES = ("cores.idle", "cores.last_wave", "cores.hard_coded", "shape.block_of_one", "shape.under_32_bytes",
         "shape.one_program", "contiguity.block_ptr", "contiguity.tensor", "cv.mix")


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


# --- evidence helpers ----------------------------------------------------------------------------------

def uses_cube(ev: Evidence) -> bool | None:
    """Whether the kernel runs on cube cores: bishengir's core type, else a `tl.dot` in its source."""
    if ev.core_type in ("aic", "mix"):
        return True
    if ev.core_type == "aiv":
        return False
    if not ev.sources:
        return None
    return any(_tl_calls(s, {"dot"}) for s in ev.sources)


def cores_of(arch: AscendArch, cube: bool) -> tuple[int, str, str]:
    """(count, kind, device property) a grid of this kernel should be sized to."""
    return (arch.aic_cores, "cube", "num_aicore") if cube else (arch.aiv_cores, "vector", "num_vectorcore")


def programs(grid: Sequence[int] | None) -> int | None:
    return math.prod(grid) if grid else None


def _where(src: SourceText, lineno: int) -> str:
    line = src.first_line + lineno - 1
    return f"{src.file}:{line}" if src.file else f"{src.name}:{line}"


def _tree(src: SourceText) -> ast.AST | None:
    try:
        return ast.parse(textwrap.dedent(src.text))
    except SyntaxError:
        return None


def _call_name(node: ast.AST) -> str | None:
    """`tl.dot` -> "dot", `range` -> "range", `tl.math.exp` -> "exp"."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return None


def _tl_calls(src: SourceText, names: set[str] | frozenset[str]) -> list[tuple[str, int]]:
    """(name, line in the source) of each call to one of `names`: tl.x, tl.math.x, or x imported by name
    (fla's `exp`)."""
    tree = _tree(src)
    if tree is None:
        return []
    return [(name, n.lineno) for n in ast.walk(tree) if (name := _call_name(n)) in names
            and (isinstance(n.func, ast.Attribute) or not hasattr(builtins, name))]  # type: ignore[attr-defined]


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _pid_names(tree: ast.AST) -> set[str]:
    """Names assigned from an expression over `tl.program_id(...)` (two levels: pid, then pid * n)."""
    found: set[str] = set()
    for _ in range(2):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and (
                    any(_call_name(c) == "program_id" for c in ast.walk(node.value)) or _names_in(node.value) & found):
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
        ops = {ast.Add: lambda: left + right, ast.Sub: lambda: left - right, ast.Mult: lambda: left * right,
               ast.FloorDiv: lambda: left // right if right else None, ast.Mod: lambda: left % right if right else None}
        op = ops.get(type(node.op))
        return op() if op else None
    return None


def _launch_bytes(ev: Evidence) -> int | None:
    return sum(t.nbytes for t in ev.tensors.values()) if ev.tensors else None


def too_small(ev: Evidence) -> str | None:
    """Why this launch is too small to judge its cores or tile shapes (its problem, not the kernel's
    choice), or None. A tile of one element is the problem's own shape when the problem is that small."""
    cube = uses_cube(ev)
    size = _launch_bytes(ev)
    if size is None:
        return "the launch's tensors were not recorded"
    cores, kind, _ = cores_of(ev.arch, bool(cube))
    if size < cores * MIN_BYTES_PER_CORE:
        return (f"a small launch: {size:,} bytes of tensors for {cores} {kind} cores "
                f"(judged from {MIN_BYTES_PER_CORE // 1024} KiB per core)")
    return None


# --- rule 1: use every core -----------------------------------------------------------------------------

@dataclass(frozen=True)
class StridedLoop:
    line: str
    step: int
    spelled: str  # how the source spells the step: "20" or "NUM_CORES (module constant 20)"


def hard_coded_loops(ev: Evidence) -> list[StridedLoop]:
    """`for i in range(pid, N, C)` loops (also tl.range) whose step C is a literal or a module constant:
    a program count fixed in the source, not read from the device."""
    found = []
    for src in ev.sources:
        tree = _tree(src)
        if tree is None:
            continue
        pids = _pid_names(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.For) or _call_name(node.iter) not in ("range", "static_range"):
                continue
            args = node.iter.args  # type: ignore[attr-defined]
            if len(args) != 3:
                continue
            start, step = args[0], args[2]
            if not (_names_in(start) & pids or any(_call_name(c) == "program_id" for c in ast.walk(start))):
                continue
            if isinstance(step, ast.Constant) and isinstance(step.value, int) and step.value > 1:
                found.append(StridedLoop(_where(src, node.lineno), step.value, str(step.value)))
            elif isinstance(step, ast.Name) and step.id in ev.module_ints and step.id not in ev.constants:
                value = ev.module_ints[step.id]
                found.append(StridedLoop(_where(src, node.lineno), value, f"{step.id} (module constant {value})"))
    return found


def _elsewhere(step: int, arch: AscendArch, cube: bool) -> str:
    """What a program count fixed at `step` does on the other parts: "on 910B1/910B2 (24 cube cores) 4 idle"."""
    kind = cores_of(arch, cube)[1]
    parts = []
    for n in sorted({cores_of(a, cube)[0] for a in ASCEND_ARCHS.values()} - {cores_of(arch, cube)[0]}):
        names = "/".join(a.name.removeprefix("Ascend") for a in ASCEND_ARCHS.values() if cores_of(a, cube)[0] == n)
        effect = f"{n - step} idle" if n > step else f"a second wave of {step - n}" if n < step else "all busy"
        parts.append(f"on {names} ({n} {kind} cores) {effect}")
    return "; ".join(parts)


def check_cores(ev: Evidence, advice: Advice) -> None:
    cube = uses_cube(ev)
    n = programs(ev.grid)
    if cube is None or n is None:
        why = ("no launch grid recorded" if n is None
               else "neither bishengir's core type nor the source says cube or vector")
        for rule in ("cores.idle", "cores.last_wave", "cores.hard_coded"):
            advice.not_checked[rule] = why
        return
    cores, kind, prop = cores_of(ev.arch, cube)
    fix = (f"read `driver.active.utils.get_device_properties(device)[\"{prop}\"]` in the launcher, launch that many "
           f"programs and stride the loop by `tl.num_programs(0)`")
    loops = hard_coded_loops(ev)
    for loop in loops:
        if loop.step < cores:
            effect = f"{loop.step} of {ev.arch.name}'s {cores} {kind} cores busy, {cores - loop.step} idle"
        elif loop.step == cores:
            effect = (f"it matches {ev.arch.name}'s {cores} {kind} cores, not the other parts': "
                      f"{_elsewhere(loop.step, ev.arch, cube)}")
        else:
            effect = f"{loop.step} programs on {cores} {kind} cores: a second wave of {loop.step - cores}"
        grid_note = (f"the grid has {n} programs and the loop steps by {loop.spelled}: both hard-coded"
                     if n == loop.step else
                     f"the loop steps by {loop.spelled} while the grid has {n} programs: tiles are "
                     f"{'skipped' if n < loop.step else 'computed twice'}")
        advice.findings.append(Finding("cores.hard_coded", loop.line, f"{grid_note}; {effect}", fix))
    small = too_small(ev)
    if small:
        for rule in ("cores.idle", "cores.last_wave", "shape.one_program"):
            advice.not_checked[rule] = small
        return
    size = _launch_bytes(ev) or 0
    if loops:  # the hard-coded count already says how many cores the grid leaves idle
        return
    grid = tuple(ev.grid or ())
    if n == 1:
        advice.findings.append(Finding(
            "shape.one_program", None, f"grid {grid}: one program for {size:,} bytes of tensors; "
            f"{cores - 1} of {cores} {kind} cores idle",
            f"split the work over up to `{prop}` programs (a grid over rows or tiles, each program looping "
            f"`range(pid, num_tiles, tl.num_programs(0))`)"))
    elif n < cores:
        advice.findings.append(Finding(
            "cores.idle", None, f"grid {grid}: {n} of {ev.arch.name}'s {cores} {kind} cores busy, {cores - n} idle, "
            f"for {size:,} bytes of tensors",
            f"give the launch at least `{prop}` programs: smaller tiles, or a grid over one more axis"))
    elif n % cores:
        waves = -(-n // cores)
        last = n - (waves - 1) * cores
        use = n / (waves * cores)
        if use < MIN_WAVE_USE:
            advice.findings.append(Finding(
                "cores.last_wave", None, f"grid {grid}: {n} programs on {cores} {kind} cores is {waves} waves, "
                f"the last with {last} of {cores} busy ({use:.0%} of the core time used)",
                f"launch `{prop}` programs that loop over the tiles (`range(pid, num_tiles, tl.num_programs(0))`), "
                f"or tiles that make a multiple of {cores} programs"))


# --- rule 3: contiguous innermost access -------------------------------------------------------------------

def _block_ptr_calls(src: SourceText) -> Iterator[tuple[ast.Call, dict[str, ast.AST]]]:
    order = ("base", "shape", "strides", "offsets", "block_shape", "order")
    tree = _tree(src)
    if tree is None:
        return
    for node in ast.walk(tree):
        if _call_name(node) == "make_block_ptr" and isinstance(node, ast.Call):
            args = dict(zip(order, node.args, strict=False))
            args.update({k.arg: k.value for k in node.keywords if k.arg})
            yield node, args


def _literal_ints(node: ast.AST | None) -> list[int] | None:
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None
    values = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, int)]
    return values if len(values) == len(node.elts) else None


def check_contiguity(ev: Evidence, advice: Advice) -> None:
    values = {**ev.scalars, **ev.constants}
    unknown: list[str] = []
    bases: set[str] = set()
    for src in ev.sources:
        for node, args in _block_ptr_calls(src):
            bases |= _names_in(args["base"]) if "base" in args else set()
            order, strides = _literal_ints(args.get("order")), args.get("strides")
            if order is None or not isinstance(strides, (ast.Tuple, ast.List)) or order[0] >= len(strides.elts):
                unknown.append(f"{_where(src, node.lineno)} (order or strides not literal)")
                continue
            inner = strides.elts[order[0]]
            stride = evaluate(inner, values)
            if stride is None:
                unknown.append(f"{_where(src, node.lineno)} (stride `{ast.unparse(inner)}` unknown at the launch)")
            elif stride != 1:
                advice.findings.append(Finding(
                    "contiguity.block_ptr", _where(src, node.lineno),
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


# --- rule 4: degenerate shapes ------------------------------------------------------------------------------

def _arange_block(node: ast.AST) -> str | None:
    """NAME of a `tl.arange(0, NAME)` call, or None."""
    if _call_name(node) == "arange" and isinstance(node, ast.Call) and len(node.args) >= 2 \
            and isinstance(node.args[1], ast.Name):
        return node.args[1].id
    return None


def innermost_blocks(ev: Evidence) -> set[str]:
    """Block constexprs that size a tile's innermost axis: the last of a block pointer's block_shape, an
    arange (or a name assigned from an expression over one) indexed `[None, :]`, or any `tl.arange(0, B)` of
    a kernel without 2-D indexing. A row block indexed `[:, None]` is not one: a [1, 1024] tile is aligned."""
    inner: set[str] = set()
    for src in ev.sources:
        tree = _tree(src)
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
            if _call_name(node) == "make_block_ptr":
                two_d = True
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
                two_d = True
                elts = node.slice.elts
                if len(elts) == 2 and isinstance(elts[0], ast.Constant) and elts[0].value is None:
                    base = node.value
                    name = _arange_block(base) or (from_arange.get(base.id) if isinstance(base, ast.Name) else None)
                    if name:
                        inner.add(name)
        for _, args in _block_ptr_calls(src):
            shape = args.get("block_shape")
            if isinstance(shape, (ast.Tuple, ast.List)) and shape.elts and isinstance(shape.elts[-1], ast.Name):
                inner.add(shape.elts[-1].id)
        if not two_d:
            inner |= aranges
    return inner


def check_shapes(ev: Evidence, advice: Advice) -> None:
    blocks = {k: v for k, v in ev.constants.items()
              if BLOCK_NAME_RE.match(k) and isinstance(v, int) and not isinstance(v, bool)}
    if not blocks:
        advice.not_checked["shape.block_of_one"] = advice.not_checked["shape.under_32_bytes"] = \
            "no block-size constexpr (BLOCK*, TILE*, BK/BV/BM/BN/BT) in this compile"
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


# --- the advanced step: cube and vector in one kernel ---------------------------------------------------------

def check_cube_vector(ev: Evidence, advice: Advice) -> None:
    if ev.core_type is None:
        advice.not_checked["cv.mix"] = "bishengir's core type was not recorded (the compile did not reach it)"
        return
    if ev.core_type != "mix":
        return
    dots = [(s, line) for s in ev.sources for _, line in _tl_calls(s, {"dot"})]
    vector = [(s, name, line) for s in ev.sources for name, line in _tl_calls(s, VECTOR_CALLS)]
    if not dots or not vector:
        return
    ops = sorted({name for _, name, _ in vector})
    advice.findings.append(Finding(
        "cv.mix", _where(*dots[0]),
        f"a cube-and-vector kernel (bishengir: mix): {len(dots)} tl.dot on the cube cores; {len(vector)} vector "
        f"calls ({', '.join(ops)}) on the vector cores, two per cube core",
        "advice only, no speedup claimed: tune the two parts together (triton-ascend's tile_mix_cube_loop, "
        "tile_mix_vector_loop, enable_hivm_auto_cv_balance options) and keep each tl.dot's tiles >= 16"))


def advise(ev: Evidence) -> Advice:
    """Every rule over one launch's evidence."""
    advice = Advice()
    check_cores(ev, advice)
    check_shapes(ev, advice)
    check_contiguity(ev, advice)
    check_cube_vector(ev, advice)
    advice.not_checked.setdefault("ub.larger_fits", "not built yet: it needs a fitting config's UB plan and the "
                                  "larger config's fp64 run on ascend-lowered")
    return advice
