"""CPU definitions of `tl.sort` and `tl.gather`, which triton-adapter lowers to calls left to bishengir's library.

`tl.sort(x, dim, descending)` becomes `triton_sort(x, dim: i64, descending: i1)` and `tl.gather(src, index,
axis)` becomes `triton_gather(src, index, axis: i32)`, both declared in the ttadapter module. As for
`tl.cumsum` (parity.backends.ascend.cpu_library), parity defines them from the documented meaning: a sort
along `dim` (a stable exchange sort: NaNs stay where the comparisons leave them, as the NPU's order of
NaNs is not documented), and out[..., i, ...] = src[..., index[..., i, ...], ...] along `axis` (an index out
of range is undefined in Triton and is not checked here). The tier then checks triton-adapter's lowering
around the call, not bishengir's implementation.
"""

from __future__ import annotations

import math
import re

_SORT_DECL = re.compile(r"func\.func\s+private\s+@(triton_sort\w*)\((tensor<[^>]+>),\s*i64,\s*i1\)\s*->\s*"
                        r"(tensor<[^>]+>)")
_GATHER_DECL = re.compile(r"func\.func\s+private\s+@(triton_gather\w*)\((tensor<[^>]+>),\s*(tensor<[^>]+>),\s*i32\)"
                          r"\s*->\s*(tensor<[^>]+>)")
_TENSOR = re.compile(r"tensor<((?:\d+x)+)(\w+)>")
FLOATS = ("f16", "bf16", "f32", "f64")


def shape_select(shape: list[int], p: str = "") -> list[str]:
    """%{p}n = shape[dim] and %{p}inner = prod(shape[dim+1:]) for a runtime %d, by a select chain."""
    lines = [f"%{p}n_last = arith.constant {shape[-1]} : index", f"%{p}in_last = arith.constant 1 : index"]
    n_prev, in_prev = f"%{p}n_last", f"%{p}in_last"
    for i in range(len(shape) - 1):
        lines += [f"%{p}ci{i} = arith.constant {i} : index", f"%{p}is{i} = arith.cmpi eq, %d, %{p}ci{i} : index",
                  f"%{p}sz{i} = arith.constant {shape[i]} : index",
                  f"%{p}inn{i} = arith.constant {math.prod(shape[i + 1:])} : index",
                  f"%{p}n{i} = arith.select %{p}is{i}, %{p}sz{i}, {n_prev} : index",
                  f"%{p}in{i} = arith.select %{p}is{i}, %{p}inn{i}, {in_prev} : index"]
        n_prev, in_prev = f"%{p}n{i}", f"%{p}in{i}"
    return [*lines, f"%{p}n = arith.addi {n_prev}, %c0 : index", f"%{p}inner = arith.addi {in_prev}, %c0 : index"]


def _parse(type_text: str) -> tuple[list[int], str] | None:
    found = _TENSOR.fullmatch(type_text)
    return ([int(s) for s in found.group(1).rstrip("x").split("x")], found.group(2)) if found else None


def _flat(name: str, value: str, shape: list[int], elem: str) -> list[str]:
    """%{name} as a 1-D memref over the tensor %{value}."""
    memref = f"memref<{'x'.join(map(str, shape))}x{elem}>"
    group = "[[" + ", ".join(str(i) for i in range(len(shape))) + "]]"
    return [f"%{name}_m = bufferization.to_memref {value} : {memref}",
            f"%{name} = memref.collapse_shape %{name}_m {group} : {memref} into memref<{math.prod(shape)}x{elem}>"]


def sort_definition(name: str, type_text: str) -> str | None:

    parsed = _parse(type_text)
    if parsed is None:
        return None
    shape, elem = parsed
    memref, flat = f"memref<{'x'.join(map(str, shape))}x{elem}>", f"memref<{math.prod(shape)}x{elem}>"
    group = "[[" + ", ".join(str(i) for i in range(len(shape))) + "]]"
    greater, less = (("arith.cmpf ogt", "arith.cmpf olt") if elem in FLOATS else ("arith.cmpi sgt", "arith.cmpi slt"))
    body = [f"%src = bufferization.to_memref %x : {memref}", f"%dst = memref.alloc() : {memref}",
            f"memref.copy %src, %dst : {memref} to {memref}",
            f"%df = memref.collapse_shape %dst {group} : {memref} into {flat}",
            "%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
            f"%total = arith.constant {math.prod(shape)} : index", "%d = arith.index_cast %dim : i64 to index",
            *shape_select(shape), "%ni = arith.muli %n, %inner : index", "%outer = arith.divui %total, %ni : index",
            "%nm1 = arith.subi %n, %c1 : index",
            "scf.for %a = %c0 to %outer step %c1 {", "  scf.for %i = %c0 to %inner step %c1 {",
            "    scf.for %p = %c0 to %n step %c1 {", "      scf.for %q = %c0 to %nm1 step %c1 {",
            "        %an = arith.muli %a, %n : index", "        %anq = arith.addi %an, %q : index",
            "        %base = arith.muli %anq, %inner : index", "        %j0 = arith.addi %base, %i : index",
            "        %j1 = arith.addi %j0, %inner : index",
            f"        %u = memref.load %df[%j0] : {flat}", f"        %v = memref.load %df[%j1] : {flat}",
            f"        %gt = {greater}, %u, %v : {elem}", f"        %lt = {less}, %u, %v : {elem}",
            "        %swap = arith.select %desc, %lt, %gt : i1",
            f"        %first = arith.select %swap, %v, %u : {elem}",
            f"        %second = arith.select %swap, %u, %v : {elem}",
            f"        memref.store %first, %df[%j0] : {flat}", f"        memref.store %second, %df[%j1] : {flat}",
            "      }", "    }", "  }", "}",
            f"%out = bufferization.to_tensor %dst restrict writable : {memref}", f"return %out : {type_text}"]
    head = f"func.func private @{name}(%x: {type_text}, %dim: i64, %desc: i1) -> {type_text} {{"
    return "\n".join([head, *(f"    {line}" for line in body), "  }"])


def gather_definition(name: str, src_type: str, index_type: str, out_type: str) -> str | None:

    src, index, out = _parse(src_type), _parse(index_type), _parse(out_type)
    if src is None or index is None or out is None or out[0] != index[0] or out[1] != src[1] \
            or len(src[0]) != len(index[0]) or not re.fullmatch(r"i\d+", index[1]):
        return None
    (s_shape, elem), (i_shape, i_elem) = src, index
    o_memref = f"memref<{'x'.join(map(str, i_shape))}x{elem}>"
    o_group = "[[" + ", ".join(str(i) for i in range(len(i_shape))) + "]]"
    body = [*_flat("sf", "%src", s_shape, elem), *_flat("xf", "%index", i_shape, i_elem),
            f"%dst = memref.alloc() : {o_memref}",
            f"%of = memref.collapse_shape %dst {o_group} : {o_memref} into memref<{math.prod(i_shape)}x{elem}>",
            "%c0 = arith.constant 0 : index", "%c1 = arith.constant 1 : index",
            f"%total = arith.constant {math.prod(i_shape)} : index", "%d = arith.index_cast %axis : i32 to index",
            *shape_select(s_shape, "s"), *shape_select(i_shape, "x"),
            "%xni = arith.muli %xn, %xinner : index",
            "scf.for %f = %c0 to %total step %c1 {",
            "  %a = arith.divui %f, %xni : index", "  %rem = arith.remui %f, %xni : index",
            "  %i = arith.remui %rem, %xinner : index",
            f"  %jr = memref.load %xf[%f] : memref<{math.prod(i_shape)}x{i_elem}>",
            f"  %j = arith.index_cast %jr : {i_elem} to index",
            "  %an = arith.muli %a, %sn : index", "  %anj = arith.addi %an, %j : index",
            "  %base = arith.muli %anj, %sinner : index", "  %at = arith.addi %base, %i : index",
            f"  %v = memref.load %sf[%at] : memref<{math.prod(s_shape)}x{elem}>",
            f"  memref.store %v, %of[%f] : memref<{math.prod(i_shape)}x{elem}>", "}",
            f"%out = bufferization.to_tensor %dst restrict writable : {o_memref}", f"return %out : {out_type}"]
    head = f"func.func private @{name}(%src: {src_type}, %index: {index_type}, %axis: i32) -> {out_type} {{"
    return "\n".join([head, *(f"    {line}" for line in body), "  }"])


def define_sort_gather(ir_text: str) -> str:
    """The module with each `triton_sort*` / `triton_gather*` declaration it can take replaced by a definition."""
    def sort(found: re.Match[str]) -> str:
        return (sort_definition(found.group(1), found.group(2)) if found.group(2) == found.group(3) else None) \
            or found.group(0)

    def gather(found: re.Match[str]) -> str:
        return gather_definition(*found.groups()) or found.group(0)

    return _GATHER_DECL.sub(gather, _SORT_DECL.sub(sort, ir_text))
