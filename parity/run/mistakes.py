"""Classic first-contact mistakes in a user's kernel, named in plain words with their fix.

Triton reports these with messages that point at its own internals ("'int' object is not
iterable" under the interpreter, "Did you forget to add @triton.jit ?" from the code
generator). A mistake is recognised only when both agree: the error text matches what
that mistake produces on some tier, and the kernel's source has the construct. The
source says where (file:line) and what to write instead.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import os
import re
import textwrap
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeGuard

Finder = Callable[[ast.FunctionDef], Iterator[tuple[ast.expr, str]]]  # (node, fix) for each suspect


@dataclass(frozen=True)
class Mistake:
    name: str
    message: re.Pattern[str]  # the error text it produces, on any tier
    what: str  # what is wrong, in plain words
    find: Finder


def _is_plain_axis(node: ast.AST) -> bool:
    """`None` and a full slice are the only subscripts a register tile takes (new axis, keep axis); a full slice
    may spell its bounds `None` (`None:`, as upstream's test_slice does)."""
    if _is_none(node):
        return True
    return isinstance(node, ast.Slice) and all(_is_none(b) for b in (node.lower, node.upper, node.step))


def _is_none(node: ast.AST | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and node.value is None)


def _body_nodes(fn: ast.FunctionDef) -> Iterator[ast.AST]:
    """The kernel body's nodes; decorators are host code (`triton.heuristics({... args["T"] ...})`)."""
    for statement in fn.body:
        yield from ast.walk(statement)


def _tile_subscripts(fn: ast.FunctionDef) -> Iterator[tuple[ast.Subscript, list[ast.expr]]]:
    # only subscripts of plain names: `b_x.shape[0]` reads a constexpr tuple, which is allowed
    for node in _body_nodes(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if not all(map(_is_plain_axis, items)):
                yield node, items


def _find_index(fn: ast.FunctionDef) -> Iterator[tuple[ast.expr, str]]:
    for node, items in _tile_subscripts(fn):
        if not any(isinstance(i, ast.Slice) for i in items):
            tile, index = ast.unparse(node.value), ast.unparse(node.slice)
            pick = (f"use tl.gather({tile}, {index}, axis=0)" if isinstance(node.slice, ast.Name) else
                    f"pick it with a mask, tl.sum(tl.where(o == {index}, {tile}, 0), axis=0)")
            yield node, f"register tiles cannot be indexed: load the element from memory instead, or {pick}"


def _find_slice(fn: ast.FunctionDef) -> Iterator[tuple[ast.expr, str]]:
    for node, items in _tile_subscripts(fn):
        if any(isinstance(i, ast.Slice) for i in items):
            yield node, ("register tiles cannot be sliced: load the part you need with its own offsets and mask "
                         "(tl.arange over the smaller block), or split the tile with tl.split / tl.reshape")


def _constexpr_params(fn: ast.FunctionDef) -> tuple[set[str], set[str]]:
    args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    const = {a.arg for a in args if a.annotation is not None and "constexpr" in ast.unparse(a.annotation)}
    return const, {a.arg for a in args} - const


def _is_tl_call(node: ast.AST, name: str) -> TypeGuard[ast.Call]:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name
            and ast.unparse(node.func.value) in ("tl", "triton.language"))


def _find_runtime_arange(fn: ast.FunctionDef) -> Iterator[tuple[ast.expr, str]]:
    _, runtime = _constexpr_params(fn)
    for node in ast.walk(fn):
        if not _is_tl_call(node, "arange"):
            continue
        used = sorted({n.id for a in node.args for n in ast.walk(a) if isinstance(n, ast.Name)} & runtime)
        if used:
            n = used[0]
            yield node, (f"tl.arange bounds must be compile-time constants: declare `{n}: tl.constexpr` (each "
                         f"value then compiles once), or keep a constexpr block and mask: "
                         f"o = tl.arange(0, BLOCK); m = o < {n}")


def _tl_names() -> list[str]:
    import triton.language as tl

    return [n for n in dir(tl) if not n.startswith("_")]


def _find_misspelt(fn: ast.FunctionDef) -> Iterator[tuple[ast.expr, str]]:
    names = set(_tl_names())
    for node in ast.walk(fn):
        if (isinstance(node, ast.Attribute) and ast.unparse(node.value) in ("tl", "triton.language")
                and node.attr not in names):
            close = difflib.get_close_matches(node.attr, sorted(names), n=1)
            yield node, (f"tl.{node.attr} does not exist" +
                         (f"; did you mean tl.{close[0]}?" if close else "; see the triton.language docs"))


MISTAKES = (
    Mistake("tile_index", re.compile(r"object is not iterable|forget to add @triton\.jit|"
                                     r"unsupported tensor index: (?!.*slice)", re.I | re.S),
            "a register tile is indexed like an array", _find_index),
    Mistake("tile_slice", re.compile(r"unsupported tensor index", re.I),
            "a register tile is sliced like an array", _find_slice),
    Mistake("runtime_arange", re.compile(r"arguments must be of type tl\.constexpr", re.I),
            "tl.arange is given a runtime bound", _find_runtime_arange),
    Mistake("misspelt_tl", re.compile(r"has no attribute", re.I),
            "a tl. function name is misspelt", _find_misspelt),
)


def _plain_function(obj: Any) -> types.FunctionType | None:
    """The Python function under Autotuner/Heuristics/JITFunction wrappers."""
    for _ in range(8):
        if isinstance(obj, types.FunctionType):
            return obj
        obj = getattr(obj, "fn", None)
    return None


def kernel_functions(kernels: Iterable[Any]) -> list[types.FunctionType]:
    """The kernels' Python functions and every @triton.jit helper they call, each once."""
    found: list[types.FunctionType] = []
    todo = [f for f in map(_plain_function, kernels) if f is not None]
    while todo:
        fn = todo.pop(0)
        if fn in found:
            continue
        found.append(fn)
        helpers = (fn.__globals__.get(n) for n in fn.__code__.co_names)
        todo += [h for h in map(_plain_function, (g for g in helpers if hasattr(g, "fn"))) if h is not None]
    return found


def _parsed(fn: types.FunctionType) -> tuple[ast.FunctionDef, list[str], int] | None:
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef)), None)
    return (node, lines, first) if node is not None else None


def _shown_path(path: str | None) -> str:
    """Relative to the working directory where the kernel lives under it, as the user typed it."""
    if path is None:
        return "?"
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _error_line(text: str, fn: ast.FunctionDef) -> int | None:
    """The line (in the parsed source) that the code generator's "at L:C:" points to."""
    m = re.search(r"\bat (\d+):\d+:\s*\n?\s*def " + re.escape(fn.name) + r"\b", text)
    return fn.lineno + int(m.group(1)) - 1 if m else None


def diagnose(error_text: str | None, kernels: Iterable[Any]) -> dict[str, str] | None:
    """A known mistake behind this error, as {mistake, what, line, code, fix}, or None."""
    if not error_text:
        return None
    functions = kernel_functions(kernels)
    for mistake in MISTAKES:
        if not mistake.message.search(error_text):
            continue
        for fn in functions:
            parsed = _parsed(fn)
            if parsed is None:
                continue
            node, lines, first = parsed
            suspects = sorted(((n.lineno, fix) for n, fix in mistake.find(node)), key=lambda s: s[0])
            pointed = _error_line(error_text, node)
            # where the compiler names a line, the construct must be on it: a plain Python helper
            # called from a kernel also gets "forget to add @triton.jit", and is not this mistake
            hit = next((s for s in suspects if pointed is None or s[0] == pointed), None)
            if hit is not None:
                lineno = hit[0]
                return {"mistake": mistake.name, "what": mistake.what,
                        "line": f"{_shown_path(inspect.getsourcefile(fn))}:{first + lineno - 1}",
                        "code": lines[lineno - 1].strip(), "fix": hit[1]}
    return None


def explain(diagnosis: dict[str, str], original: str | None) -> str:
    """A record's reason: the plain words first, Triton's own message after them."""
    return (f"{diagnosis['what']} at {diagnosis['line']} (`{diagnosis['code']}`): {diagnosis['fix']}. "
            f"Triton said: {original}")
