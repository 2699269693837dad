"""Where ascend-compile calls in for performance advice: each compile that built gets its `ascend_perf`.

The compile-only driver keeps, per compile, the (source, target, options) it was compiled from, the grid
its launch asked for, bishengir's core type, and a summary of the launch's arguments (`launch_args`,
taken where the launcher is called). This module turns those into parity.backends.ascend.perf_rules'
Evidence (the kernel's source and the @triton.jit helpers it calls, with their files and lines; its
constexprs; the int globals of its module) and runs the rules. `PARITY_NO_PERF_ADVICE=1` turns it off.
UB use (parity.backends.ascend.perf_ub) also compiles larger configs through the fit advisor's probe.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from parity import settings
from parity.backends.ascend import perf_ub
from parity.backends.ascend.arch import AscendArch
from parity.backends.ascend.perf_rules import Evidence, SourceText, TensorArg, advise
from parity.fit.hook import FitTier
from parity.fit.hook import disabled as fit_disabled
from parity.fit.probe import named_constants

MAX_HELPER_DEPTH = 2


def disabled() -> bool:
    return settings.current().no_perf_advice


def ub_disabled() -> bool:
    """UB use costs compiles (one per kernel's config, more where its plan is small): `PARITY_NO_UB_ADVICE=1`
    (or --no-fit, whose probes it shares) keeps the other rules and skips it."""
    return settings.current().no_ub_advice or fit_disabled()


def launch_args(names: Sequence[str], values: Sequence[Any]) -> dict[str, Any]:
    """The launch's non-constexpr arguments by name: tensors as dtype, element size, shape and strides;
    integers as they are; anything else left out."""
    tensors: dict[str, Any] = {}
    scalars: dict[str, Any] = {}
    for name, value in zip(names, values, strict=False):
        # a TensorWrapper (triton.reinterpret: test_core's unsigned and fp8 tensors) is read through its base tensor,
        # under the dtype the kernel reads it as
        base = getattr(value, "base", None) if type(value).__name__ == "TensorWrapper" else None
        tensor = base if base is not None else value
        if hasattr(tensor, "stride") and hasattr(tensor, "dtype") and hasattr(tensor, "shape"):
            tensors[name] = {"dtype": str(value.dtype).removeprefix("torch."), "itemsize": int(tensor.element_size()),
                             "shape": [int(s) for s in tensor.shape], "stride": [int(s) for s in tensor.stride()]}
        elif isinstance(value, int) and not isinstance(value, bool):
            scalars[name] = value
    return {"tensors": tensors, "scalars": scalars}


def _file_label(path: str | None) -> str | None:
    """A source file as a report shows it: relative to the working directory where under it, else its tail."""
    if not path:
        return None
    p = Path(path)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return "/".join(p.parts[-3:])


def source_text(jit: Any) -> SourceText | None:
    """A JITFunction's source from its `def` line, with that line's number in its file."""
    fn = getattr(jit, "fn", None)
    if fn is None:
        return None
    try:
        lines, start = inspect.getsourcelines(fn)
        path = inspect.getsourcefile(fn)
    except (OSError, TypeError):
        text = getattr(jit, "src", None)
        return SourceText(getattr(fn, "__name__", "?"), text) if text else None
    offset = next((i for i, line in enumerate(lines) if line.lstrip().startswith("def ")), 0)
    # the JITFunction's own `src` where it has one (the interpreter's wrapper has none): from the def line on
    text = getattr(jit, "src", None) or textwrap.dedent("".join(lines[offset:]))
    return SourceText(fn.__name__, text, start + offset, _file_label(path))


def _called_names(text: str) -> set[str]:
    try:
        tree = ast.parse(textwrap.dedent(text))
    except SyntaxError:
        return set()
    return {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def sources_of(jit: Any) -> list[SourceText]:
    """The kernel's source, then each @triton.jit helper it calls by name (two levels down)."""
    first = source_text(jit)
    if first is None:
        return []
    found, seen, todo = [first], {first.name}, [(jit, first, 0)]
    while todo:
        fn, src, depth = todo.pop()
        if depth >= MAX_HELPER_DEPTH:
            continue
        space = getattr(getattr(fn, "fn", None), "__globals__", {})
        for name in sorted(_called_names(src.text) - seen):
            helper = space.get(name)
            if helper is None or not callable(getattr(helper, "fn", None)):  # a @triton.jit helper
                continue
            text = source_text(helper)
            if text is not None:
                seen.add(name)
                found.append(text)
                todo.append((helper, text, depth + 1))
    return found


def module_ints(jit: Any, sources: Sequence[SourceText]) -> dict[str, int]:
    """Int globals (plain or tl.constexpr) the kernel's module defines under the names its sources use."""
    space = getattr(getattr(jit, "fn", None), "__globals__", {})
    names: set[str] = set()
    for src in sources:
        try:
            names |= {n.id for n in ast.walk(ast.parse(textwrap.dedent(src.text))) if isinstance(n, ast.Name)}
        except SyntaxError:
            continue
    found = {}
    for name in names:
        value = space.get(name)
        value = getattr(value, "value", value) if type(value).__name__ == "constexpr" else value
        if isinstance(value, int) and not isinstance(value, bool):
            found[name] = value
    return found


def evidence(attempt: Any, arch: AscendArch) -> Evidence | None:
    """One compile attempt's Evidence, or None where it has no source to read."""
    if attempt.source is None:
        return None
    src = attempt.source[0]
    jit = getattr(src, "fn", None)
    sources = sources_of(jit)
    args = attempt.launch_args or {}
    tensors = {k: TensorArg(v["dtype"], v["itemsize"], tuple(v["shape"]), tuple(v["stride"]))
               for k, v in (args.get("tensors") or {}).items()}
    return Evidence(kernel=attempt.kernel, arch=arch, grid=tuple(attempt.grid) if attempt.grid else None,
                    core_type=attempt.core_type, sources=tuple(sources), constants=named_constants(src),
                    scalars=dict(args.get("scalars") or {}), tensors=tensors,
                    module_ints=module_ints(jit, sources))


def attach(compiles: Sequence[dict[str, Any]], attempts: Sequence[Any], arch: AscendArch,
           kernels: Iterable[Any] = (), tier: FitTier | None = None) -> None:
    """Give each compile that built and launched its `ascend_perf` (compiles and attempts pair one to one);
    with the fit advisor's `tier`, UB use too (parity.backends.ascend.perf_ub compiles larger configs)."""
    if disabled():
        return
    read: dict[int, Evidence] = {}
    for compile_, attempt in zip(compiles, attempts, strict=False):
        if not compile_.get("ok") or compile_.get("launch_error"):
            continue
        try:
            ev = evidence(attempt, arch)
        except Exception as exc:  # advice never costs a case its record
            compile_["ascend_perf"] = {"arch": arch.name, "findings": [], "error": f"{type(exc).__name__}: {exc}"}
            continue
        if ev is not None:
            compile_["ascend_perf"] = advise(ev).as_json(arch.name)
            read[id(attempt)] = ev
    if tier is not None and not ub_disabled():
        perf_ub.attach(compiles, attempts, kernels, tier, read)  # a larger tile's grid faces the cores rule

