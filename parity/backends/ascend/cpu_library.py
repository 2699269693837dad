"""CPU definitions of the library functions triton-adapter calls but leaves to bishengir.

triton-adapter lowers `tl.cumsum(x, axis, reverse)` to a call of `triton_cumsum_<n>(x, axis, reverse)`,
declared in the ttadapter module and defined only in bishengir's library. To run such a kernel on the
CPU, parity defines that function itself from tl.cumsum's documented meaning: an inclusive running
sum along `axis` (from the end when `reverse`), accumulated in the tensor's own element type. What the
tier then checks is triton-adapter's lowering around the call (the loads, masks and the axis and
direction it passes), not bishengir's scan. Any other declared function stays unsupported.
"""

from __future__ import annotations

import math
import re

_CUMSUM_DECL = re.compile(r"func\.func\s+private\s+@(triton_cumsum_\d+)\((tensor<[^>]+>),\s*i32,\s*i1\)\s*->\s*"
                          r"(tensor<[^>]+>)")
_TENSOR = re.compile(r"tensor<((?:\d+x)+)(\w+)>")


def define_library_calls(ir_text: str) -> str:
    """The module with every `triton_cumsum_*` declaration replaced by a definition."""
    def define(found: re.Match[str]) -> str:
        if found.group(2) != found.group(3):
            return found.group(0)
        return cumsum_definition(found.group(1), found.group(2)) or found.group(0)

    return _CUMSUM_DECL.sub(define, ir_text)


def _shape_select(shape: list[int]) -> list[str]:
    """%n = shape[dim] and %inner = prod(shape[dim+1:]) for a runtime %d, by a select chain."""
    lines = [f"%n_last = arith.constant {shape[-1]} : index", "%in_last = arith.constant 1 : index"]
    n_prev, in_prev = "%n_last", "%in_last"
    for i in range(len(shape) - 1):
        lines += [f"%ci{i} = arith.constant {i} : index", f"%is{i} = arith.cmpi eq, %d, %ci{i} : index",
                  f"%sz{i} = arith.constant {shape[i]} : index",
                  f"%inn{i} = arith.constant {math.prod(shape[i + 1:])} : index",
                  f"%n{i} = arith.select %is{i}, %sz{i}, {n_prev} : index",
                  f"%in{i} = arith.select %is{i}, %inn{i}, {in_prev} : index"]
        n_prev, in_prev = f"%n{i}", f"%in{i}"
    return [*lines, f"%n = arith.addi {n_prev}, %c0 : index", f"%inner = arith.addi {in_prev}, %c0 : index"]


def cumsum_definition(name: str, type_text: str) -> str | None:
    """`name(x, dim, reverse)`: an inclusive scan of a static-shape tensor; None for shapes it cannot take."""
    found = _TENSOR.fullmatch(type_text)
    if found is None:
        return None
    shape, elem = [int(s) for s in found.group(1).rstrip("x").split("x")], found.group(2)
    is_float = elem in ("f16", "bf16", "f32", "f64")
    if not is_float and not re.fullmatch(r"i\d+", elem):
        return None
    memref, flat = f"memref<{found.group(1)}{elem}>", f"memref<{math.prod(shape)}x{elem}>"
    group = "[[" + ", ".join(str(i) for i in range(len(shape))) + "]]"
    body = [f"%src = bufferization.to_memref %x : {memref}", f"%dst = memref.alloc() : {memref}",
            f"%sf = memref.collapse_shape %src {group} : {memref} into {flat}",
            f"%df = memref.collapse_shape %dst {group} : {memref} into {flat}",
            "%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
            f"%total = arith.constant {math.prod(shape)} : index", "%d = arith.index_cast %dim : i32 to index",
            *_shape_select(shape),
            "%ni = arith.muli %n, %inner : index", "%outer = arith.divui %total, %ni : index",
            "%nm1 = arith.subi %n, %c1 : index",
            f"%zero = arith.constant {'0.000000e+00' if is_float else '0'} : {elem}",
            "scf.for %a = %c0 to %outer step %c1 {",
            "  scf.for %i = %c0 to %inner step %c1 {",
            f"    %r = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %zero) -> ({elem}) {{",
            "      %kr = arith.subi %nm1, %k : index", "      %kk = arith.select %rev, %kr, %k : index",
            "      %an = arith.muli %a, %n : index", "      %ank = arith.addi %an, %kk : index",
            "      %base = arith.muli %ank, %inner : index", "      %idx = arith.addi %base, %i : index",
            f"      %v = memref.load %sf[%idx] : {flat}",
            f"      %s = {'arith.addf' if is_float else 'arith.addi'} %acc, %v : {elem}",
            f"      memref.store %s, %df[%idx] : {flat}", f"      scf.yield %s : {elem}", "    }", "  }", "}",
            f"%out = bufferization.to_tensor %dst restrict writable : {memref}", f"return %out : {type_text}"]
    head = f"func.func private @{name}(%x: {type_text}, %dim: i32, %rev: i1) -> {type_text} {{"
    return "\n".join([head, *(f"    {line}" for line in body), "  }"])
