"""Kernel and reference source extraction for standalone repros.

Given a Triton kernel (JITFunction, InterpretedFunction, or a Heuristics/Autotuner
around one), collect its source plus every @triton.jit helper and constexpr global
it names, transitively. Heuristics and autotune decorators are dropped: the repro
passes the values they chose at run time. Plain torch functions (the fp64
references) are extracted the same way, with annotations stripped so the repro
needs none of their typing imports.

A module global that is neither torch, triton nor numpy (FlagGems' `tle`, a module of @triton.jit
helpers) becomes a `types.ModuleType` in the repro holding just the members the kernel reads,
so Triton's code generator, which accepts module globals, resolves `tle.x` as before.

Everything emitted that is not user source is a validated literal (see `literal`).
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
import inspect
import math
import textwrap
import types
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from parity.compile.counter import innermost
from parity.triage.stage import CaseCode

# modules a repro may import: the standalone contract is torch, triton, numpy (and math)
ALLOWED_ROOTS = ("torch", "triton", "numpy", "math")
TRITON_CALLABLES = ("JITFunction", "InterpretedFunction", "ConstexprFunction")
JIT_DECORATORS = {"jit": "triton.jit", "constexpr_function": "triton.constexpr_function"}


class SourceError(ValueError):
    """The source cannot be made standalone; the message names the global and why."""


def literal(value: Any) -> str:
    """Python source for a plain value, checked to round-trip; anything else is refused."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({str(value)!r})"
    if value is None or isinstance(value, (bool, int, float, str)):
        text = repr(value)
    elif isinstance(value, (list, tuple)):
        items = ", ".join(literal(v) for v in value)
        if isinstance(value, list):
            return f"[{items}]"
        return f"({items},)" if len(value) == 1 else f"({items})"
    elif isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise SourceError(f"dict literal needs str keys, got {list(value)!r}")
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    else:
        raise SourceError(f"{type(value).__name__} value {value!r} is not a plain literal")
    if ast.literal_eval(text) != value:
        raise SourceError(f"{value!r} does not round-trip through repr")
    return text


def python_function(obj: Any) -> types.FunctionType:
    """The plain function under Autotuner/Heuristics/JITFunction wrappers."""
    obj = innermost(obj)
    if not isinstance(obj, types.FunctionType):
        raise SourceError(f"{obj!r} is not a Python function nor a Triton wrapper around one")
    return obj


def is_triton_callable(obj: Any) -> bool:
    return type(obj).__name__ in TRITON_CALLABLES and isinstance(getattr(obj, "fn", None), types.FunctionType)


def _parse(fn: types.FunctionType) -> tuple[str, ast.FunctionDef]:
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as exc:
        raise SourceError(f"no source for {fn.__qualname__} ({exc}); define it in a .py file") from None
    node = next((n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef)), None)
    if node is None or node.name != fn.__name__:
        raise SourceError(f"{fn.__qualname__}: expected a plain `def`, found something else (a lambda?)")
    return src, node


def _decorator_name(dec: ast.expr) -> str:
    target = dec.func if isinstance(dec, ast.Call) else dec
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


def _jit_decorator(src: str, dec: ast.expr, values: Mapping[str, str] | None = None) -> str:
    """`@triton.jit(...)` with its own arguments, whatever alias the module used for it; a keyword in `values`
    is written with that literal (its value was a name of the scope that defined the kernel)."""
    name = JIT_DECORATORS[_decorator_name(dec)]
    if not isinstance(dec, ast.Call):
        return f"@{name}"
    values = values or {}
    args = [ast.get_source_segment(src, a) or "" for a in dec.args]
    args += [f"{k.arg}={values[k.arg]}" if k.arg is not None and k.arg in values
             else ast.get_source_segment(src, k) or "" for k in dec.keywords]
    return f"@{name}({', '.join(args)})"


def _local_decorator_values(fn: types.FunctionType, jit: Any, node: ast.FunctionDef) -> dict[str, tuple[ast.AST, str]]:
    """Keywords of the jit decorator whose value is a name neither global nor captured (`@triton.jit(debug=debug)`
    inside a test function): keyword -> (the value's node, the JITFunction's own value of it as a literal)."""
    scope = set(fn.__globals__) | set(fn.__code__.co_freevars) | set(dir(builtins))
    found: dict[str, tuple[ast.AST, str]] = {}
    for dec in node.decorator_list:
        if _decorator_name(dec) not in JIT_DECORATORS or not isinstance(dec, ast.Call):
            continue
        for kw in dec.keywords:
            if not (kw.arg and isinstance(kw.value, ast.Name) and kw.value.id not in scope):
                continue
            # a JITFunction keeps its decorator options as attributes, the interpreter's function in `kwargs`
            options = getattr(jit, "kwargs", None)
            if hasattr(jit, kw.arg):
                found[kw.arg] = (kw.value, literal(getattr(jit, kw.arg)))
            elif isinstance(options, dict) and kw.arg in options:
                found[kw.arg] = (kw.value, literal(options[kw.arg]))
    return found


def free_names(node: ast.FunctionDef, skip: Sequence[ast.AST] = ()) -> list[str]:
    """Names read in the function (body, defaults, decorators but `skip`) that it does not bind itself."""
    skipped = {id(sub) for tree in skip for sub in ast.walk(tree)}
    bound = {a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)}
    bound |= {a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None}
    loads: list[str] = []
    for sub in ast.walk(node):
        if id(sub) in skipped:
            continue
        if isinstance(sub, ast.Name):
            if isinstance(sub.ctx, ast.Load):
                loads.append(sub.id)
            else:
                bound.add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.Lambda)) and sub is not node:
            bound |= {a.arg for a in sub.args.args}
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in sub.names}
    return list(dict.fromkeys(n for n in loads if n not in bound and n != node.name))


class _StripAnnotations(ast.NodeTransformer):
    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.returns = None
        self.generic_visit(node)
        return node


@dataclass
class Extracted:
    """Source pieces in dependency order; `text()` is what a repro embeds."""

    entry: str
    imports: dict[str, str] = field(default_factory=dict)  # bound name -> import line
    constants: dict[str, str] = field(default_factory=dict)  # name -> assignment line
    functions: dict[str, str] = field(default_factory=dict)  # name -> source, helpers first
    modules: dict[str, str] = field(default_factory=dict)  # name -> its ModuleType and member lines

    def text(self) -> str:
        parts = list(dict.fromkeys(self.imports.values()))
        if self.constants:
            parts += ["", *self.constants.values()]
        for src in self.functions.values():
            parts += ["", "", src.rstrip()]
        if self.modules:  # after the functions: their members are assigned from them
            parts += ["", "", *self.modules.values()]
        return "\n".join(parts).strip() + "\n"

    def merge(self, other: Extracted) -> None:
        """Add another extraction (a second kernel, a reference); a name bound twice differently is an error."""
        for attr in ("imports", "constants", "functions", "modules"):
            mine, theirs = getattr(self, attr), getattr(other, attr)
            for name, text in theirs.items():
                if name in mine and mine[name] != text:
                    raise SourceError(f"two different definitions of {name!r} would collide in one repro")
                mine.setdefault(name, text)


def _same(attr: Any, value: Any) -> bool:
    """attr is value, or Triton's interpreter's stand-in for it: the interpreter swaps tl's builtins for
    lambdas holding the builtin as `member` while a kernel runs, and a helper called from a kernel does
    so without restoring them, so a module attribute may still be that lambda afterwards."""
    return attr is value or (getattr(attr, "__kwdefaults__", None) or {}).get("member") is value


def _importable(value: Any) -> tuple[str, str] | None:
    """(module, qualname) to import value from: a torch/triton/numpy/math object under its own name."""
    mod, qual = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if not mod or not qual or mod.split(".")[0] not in ALLOWED_ROOTS or "." in qual:
        return None
    try:
        if not _same(getattr(importlib.import_module(mod), qual), value):
            return None
    except (ImportError, AttributeError):
        return None
    return mod, qual


def _import_line(name: str, value: Any) -> str | None:
    if isinstance(value, types.ModuleType):
        mod = value.__name__
        if mod.split(".")[0] not in ALLOWED_ROOTS:
            return None
        return f"import {mod}" if mod == name else f"import {mod} as {name}"
    found = _importable(value)
    if found is None:
        return None
    mod, qual = found
    return f"from {mod} import {qual}" if qual == name else f"from {mod} import {qual} as {name}"


def attribute_paths(node: ast.FunctionDef, name: str, skip: Sequence[ast.AST] = ()) -> list[tuple[str, ...]]:
    """The attribute chains the function reads off global `name` (`tle.a.b(x)` gives ("a", "b"))."""
    skipped = {id(sub) for tree in skip for sub in ast.walk(tree)}
    parents = {id(child): parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}
    paths: list[tuple[str, ...]] = []
    for sub in ast.walk(node):
        if not (isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Load)) or id(sub) in skipped:
            continue
        path: list[str] = []
        cur: ast.AST = sub
        while isinstance(parent := parents.get(id(cur)), ast.Attribute) and parent.value is cur:
            path.append(parent.attr)
            cur = parent
        if not path:
            raise SourceError(f"{node.name} uses the module {name!r} itself, not one of its members, which a "
                              "standalone repro cannot embed")
        paths.append(tuple(path))
    return list(dict.fromkeys(paths))


def _constant_line(name: str, value: Any) -> str | None:
    if type(value).__name__ == "constexpr" and type(value).__module__.startswith("triton"):
        return f"{name} = tl.constexpr({literal(value.value)})"
    try:
        return f"{name} = {literal(value)}"
    except SourceError:
        return None


class _Extractor:
    def __init__(self, out: Extracted, plain_functions: bool) -> None:
        self.out = out
        self.plain_functions = plain_functions  # references may call plain helpers; kernels may not
        self.visiting: set[int] = set()
        self.defined: dict[str, int] = {}  # function name -> id of the function embedded under it
        self.jits: dict[int, Any] = {}  # id of a plain function -> the JITFunction over it, where known
        self.module_paths: dict[str, list[tuple[str, ...]]] = {}  # alias -> paths any function reads (their union)

    def function(self, fn: types.FunctionType, triton_callable: bool, undecorated: bool = False) -> None:
        if self.defined.setdefault(fn.__name__, id(fn)) != id(fn):
            raise SourceError(f"two different functions named {fn.__name__!r} would collide in one repro")
        if fn.__name__ in self.out.functions or id(fn) in self.visiting:
            return
        self.visiting.add(id(fn))
        src, node = _parse(fn)
        if not triton_callable:
            node = _StripAnnotations().visit(node)  # typing names must not become dependencies
        if undecorated:  # its decorator is bound again after the functions (see resolve)
            node.decorator_list = []
        # heuristics/autotune decorators are dropped, so what only they name is no dependency
        dropped: list[ast.AST] = [d for d in node.decorator_list if _decorator_name(d) not in JIT_DECORATORS]
        local = _local_decorator_values(fn, self.jits[id(fn)], node) if id(fn) in self.jits else {}
        dropped += [value for value, _ in local.values()]  # written as literals, so no dependency either
        for name in free_names(node, skip=dropped):
            self.resolve(fn, name, node, dropped)
        self.out.functions[fn.__name__] = self._render(src, node, triton_callable,
                                                       {k: text for k, (_, text) in local.items()})

    def _render(self, src: str, node: ast.FunctionDef, triton_callable: bool,
                values: Mapping[str, str] | None = None) -> str:
        if not triton_callable:
            if node.decorator_list:
                raise SourceError(f"{node.name}: decorated plain functions cannot be embedded")
            return ast.unparse(node)
        kept = [_jit_decorator(src, d, values) for d in node.decorator_list if _decorator_name(d) in JIT_DECORATORS]
        lines = src.splitlines()
        body = "\n".join(lines[node.lineno - 1: node.end_lineno])
        return "\n".join([*(kept or ["@triton.jit"]), body])

    def resolve(self, fn: types.FunctionType, name: str, node: ast.FunctionDef,
                dropped: Sequence[ast.AST] = ()) -> None:
        scope = dict(fn.__globals__)
        if fn.__closure__:
            scope.update(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__), strict=True))
        if name not in scope:
            if hasattr(builtins, name):
                return
            raise SourceError(f"{fn.__qualname__} uses {name!r}, which is neither global nor builtin")
        value = scope[name]
        if is_triton_callable(value):
            self.jits.setdefault(id(value.fn), value)
            self.function(value.fn, triton_callable=True)
            if value.fn.__name__ != name:  # a helper under an alias (fla: `softplus = softplus_nv` on NVIDIA)
                self.out.modules[name] = f"{name} = {value.fn.__name__}"  # bound after the functions are defined
            return
        inner = getattr(value, "value", None)
        if type(value).__name__ == "constexpr" and isinstance(inner, types.FunctionType):
            # `@tl.constexpr def f(dtype)`, called while compiling (FlagGems' cumsum: get_scan_accum_type): the plain
            # function, wrapped again once the functions are defined
            self.function(inner, triton_callable=False, undecorated=True)
            self.out.imports.setdefault("tl", "import triton.language as tl")
            self.out.modules[name] = f"{name} = tl.constexpr({inner.__name__})"
            return
        line = _import_line(name, value)
        if line is not None:
            self.out.imports[name] = line
            return
        line = _constant_line(name, value)
        if line is not None:
            self.out.constants[name] = line
            return
        if isinstance(value, types.FunctionType) and self.plain_functions:
            self.function(value, triton_callable=False)
            return
        if isinstance(value, types.ModuleType) and not self.plain_functions:
            self.module(fn, name, value, attribute_paths(node, name, dropped))
            return
        raise SourceError(f"{fn.__qualname__} uses global {name!r} ({type(value).__name__}), which a "
                          "standalone repro cannot embed; use a literal, a tl.constexpr or a @triton.jit helper")

    def module(self, fn: types.FunctionType, name: str, module: types.ModuleType,
               paths: Sequence[tuple[str, ...]]) -> None:
        """`name = types.ModuleType(...)` with the members the kernels read (helpers, literals, imports; nested)."""
        self.out.imports.setdefault("types", "import types")
        known = self.module_paths.setdefault(name, [])  # a kernel and its helper read different members
        known.extend(p for p in paths if p not in known)
        self.out.modules[name] = self.member(fn, name, module, list(known))

    def member(self, fn: types.FunctionType, target: str, value: Any, paths: list[tuple[str, ...]]) -> str:
        """The line(s) that assign one module member onto `target`."""
        if is_triton_callable(value):
            self.jits.setdefault(id(value.fn), value)
            self.function(value.fn, triton_callable=True)
            return f"{target} = {value.fn.__name__}"
        if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] in ALLOWED_ROOTS:
            return f"import {value.__name__}  # noqa: E402\n{target} = {value.__name__}"
        found = None if isinstance(value, types.ModuleType) else _importable(value)
        if found is not None:  # a Triton builtin or extern function re-exported by the module
            return f"import {found[0]}  # noqa: E402\n{target} = {found[0]}.{found[1]}"
        if type(value).__name__ == "constexpr" and type(value).__module__.startswith("triton"):
            return f"{target} = tl.constexpr({literal(value.value)})"
        if isinstance(value, types.ModuleType):
            if not paths:
                raise SourceError(f"{fn.__qualname__} uses the module {target} itself, which a standalone "
                                  "repro cannot embed")
            lines = [f"{target} = types.ModuleType({literal(target)})"]
            for attr in dict.fromkeys(p[0] for p in paths):
                if not hasattr(value, attr):
                    raise SourceError(f"{fn.__qualname__} reads {target}.{attr}, which {value.__name__} lacks")
                lines.append(self.member(fn, f"{target}.{attr}", getattr(value, attr),
                                         [p[1:] for p in paths if p[0] == attr and len(p) > 1]))
            return "\n".join(lines)
        try:
            return f"{target} = {literal(value)}"
        except SourceError:
            raise SourceError(f"{fn.__qualname__} uses {target} ({type(value).__name__}), which a standalone "
                              "repro cannot embed; use a literal, a tl.constexpr or a @triton.jit helper") from None


def extract_kernel(kernel: Any) -> Extracted:
    """The kernel with its @triton.jit helpers and constexpr globals, decorators reduced to @triton.jit."""
    fn = python_function(kernel)
    out = Extracted(entry=fn.__name__, imports={"triton": "import triton", "tl": "import triton.language as tl"})
    extractor = _Extractor(out, plain_functions=False)
    jit = next((w for w in _wrappers(kernel) if getattr(w, "fn", None) is fn), None)
    if jit is not None:
        extractor.jits[id(fn)] = jit
    extractor.function(fn, triton_callable=True)
    return out


def _wrappers(kernel: Any, limit: int = 8) -> list[Any]:
    """The kernel and the objects down its `.fn` chain (Autotuner -> Heuristics -> JITFunction)."""
    chain = [kernel]
    while len(chain) < limit and getattr(chain[-1], "fn", None) is not None and \
            not isinstance(chain[-1], types.FunctionType):
        chain.append(chain[-1].fn)
    return chain


def extract_function(fn: Any) -> Extracted:
    """A plain torch function (an fp64 reference) with the plain helpers and constants it uses."""
    if not isinstance(fn, types.FunctionType):  # a wrapper (a SecondReference) embeds what it wraps
        fn = inspect.unwrap(fn)
    if not isinstance(fn, types.FunctionType):
        raise SourceError(f"{fn!r} is not a plain Python function")
    out = Extracted(entry=fn.__name__)
    _Extractor(out, plain_functions=True).function(fn, triton_callable=False)
    return out


def kernel_source(kernels: Iterable[Any]) -> str:
    """The source of a spec's kernels with their jit helpers ('' where it cannot be read)."""
    parts = []
    for kernel in kernels:
        try:
            parts.append(extract_kernel(kernel).text())
        except Exception:  # a kernel without readable source still gets a verdict from the rest
            continue
    return "\n".join(parts)


def case_code(spec: Any) -> CaseCode:
    """The case's code as triage reads it (parity.triage.stage.CaseCode), its source extracted when a failing record
    or parity.known_npu asks for it. None (a record without its spec, a worker's crash): the record alone."""
    if spec is None:
        return CaseCode()
    kernels = tuple(spec.kernels)
    return CaseCode(spec.family, kernels, functools.cache(lambda: kernel_source(kernels)))
