"""CPU definitions of the library functions triton-adapter calls but leaves to bishengir.

triton-adapter lowers `tl.cumsum(x, axis, reverse)` to a call of `triton_cumsum_<n>(x, axis, reverse)`,
declared in the ttadapter module and defined only in bishengir's library. To run such a kernel on the
CPU, parity defines that function itself from tl.cumsum's documented meaning: an inclusive running
sum along `axis` (from the end when `reverse`), accumulated in the tensor's own element type. What the
tier then checks is triton-adapter's lowering around the call (the loads, masks and the axis and
direction it passes), not bishengir's scan. A cumsum over i1 (a boolean tile) is declined: triton-ascend
rejects it at compile time, so no CPU meaning would be triton-ascend's (tier limit `lowered-cumsum-i1`;
ascend-compile gives that kernel's verdict).

`tl.device_print` lowers to a call of `triton_print_<n>(value)` with the prefix as an attribute; for
scalar values parity defines it in C (`print_stand_ins`): it prints the prefix and the value, once per
program, as the NPU prints. A tensor print is declined (tier limit `lowered-device-print-tensor`).
triton-ascend's own libdevice (`triton.language.extra.ascend.libdevice`: log1p, tan, atan, tanh, reciprocal,
relu, pow, ldexp, ilogb, round, isinf, isnan) lowers to elementwise calls of bishengir's `__hmf_*` scalar
functions; parity defines those over fp32 and fp16 in C with libm's functions of the same meaning
(`libdevice_stand_ins`), so the tier checks the lowering around the call, not the NPU's approximation.
`tl.sort` and `tl.gather` have their own stand-ins (parity.backends.ascend.cpu_sort_gather). Any other declared
function (a bf16 `__hmf_*`, one parity has not met) is declined as `lowered-library-call`.
"""

from __future__ import annotations

import math
import re

from parity.backends.ascend.cpu_build_errors import LoweringUnsupported
from parity.backends.ascend.cpu_sort_gather import shape_select

# element types whose scan the stand-in declines, with the limit: no meaning of triton-ascend's to follow
DECLINED_CUMSUM = {
    "i1": "lowered-cumsum-i1: tl.cumsum over a boolean (i1) tile; triton-ascend rejects it at compile time "
          "(bishengir's hfusion.cumsum takes bf16, f16, f32 and i8-i64 only, ascendnpu-ir 1.2.0), so "
          "this tier's stand-in has no meaning of triton-ascend's to follow (ascend-compile gives this kernel's "
          "verdict; cast the tile to tl.int32 before the scan to make it portable)",
}
_CUMSUM_DECL = re.compile(r"func\.func\s+private\s+@(triton_cumsum_\d+)\((tensor<[^>]+>),\s*i32,\s*i1\)\s*->\s*"
                          r"(tensor<[^>]+>)")
_TENSOR = re.compile(r"tensor<((?:\d+x)+)(\w+)>")


def define_library_calls(ir_text: str) -> str:
    """The module with every `triton_cumsum_*`, `triton_sort*` and `triton_gather*` declaration it can define
    replaced by a definition."""
    def define(found: re.Match[str]) -> str:
        if found.group(2) != found.group(3):
            return found.group(0)
        element = _TENSOR.fullmatch(found.group(2))
        if element is not None and element.group(2) in DECLINED_CUMSUM:
            limit = DECLINED_CUMSUM[element.group(2)]
            raise LoweringUnsupported(f"ascend-lowered tier limit {limit} ({found.group(2)})")
        return cumsum_definition(found.group(1), found.group(2)) or found.group(0)

    from parity.backends.ascend.cpu_sort_gather import define_sort_gather

    return define_sort_gather(_CUMSUM_DECL.sub(define, ir_text))


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
            *shape_select(shape),
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


_PRINT_DECL = re.compile(r"^\s*func\.func\s+private\s+@(triton_print_\d+)\(([^)]*)\)\s*(?:attributes\s*(\{.*\}))?\s*$",
                         re.M)
_PRINT_C = {"i1": ("_Bool", "%d"), "i8": ("int8_t", "%d"), "i16": ("int16_t", "%d"), "i32": ("int32_t", "%d"),
            "i64": ("int64_t", "%lld"), "f32": ("float", "%f"), "f64": ("double", "%f")}


def print_stand_ins(ir_text: str) -> str:
    """C definitions of the module's `triton_print_<n>` (tl.device_print of scalars); "" when it has none."""
    bodies = []
    for name, args, attrs in _PRINT_DECL.findall(ir_text):
        types = [a.strip() for a in args.split(",") if a.strip()]
        if any(t not in _PRINT_C for t in types):
            raise LoweringUnsupported(
                f"ascend-lowered tier limit lowered-device-print-tensor: tl.device_print of {', '.join(types)} "
                f"({name}); this tier prints scalars only (remove the print, or print a scalar)")
        prefix = re.search(r'prefix = "((?:[^"\\]|\\.)*)"', attrs or "")
        text = (prefix.group(1) if prefix else "").replace("%", "%%")
        params = ", ".join(f"{_PRINT_C[t][0]} a{i}" for i, t in enumerate(types))
        values = "".join(f", ({'long long' if t == 'i64' else 'double' if t[0] == 'f' else 'int'})a{i}"
                         for i, t in enumerate(types))
        formats = " ".join(_PRINT_C[t][1] for t in types)
        bodies.append(f'void {name}({params or "void"}) {{ printf("{text}{formats}\\n"{values}); fflush(stdout); }}')
    return "#include <stdint.h>\n#include <stdio.h>\n" + "\n".join(bodies) + "\n" if bodies else ""


_HMF_DECL = re.compile(r"^\s*func\.func\s+private\s+@(__hmf_(\w+))\(([^)]*)\)\s*->\s*(\w+)", re.M)
_C_TYPES = {"f32": "float", "f16": "_Float16", "f64": "double", "i1": "_Bool", "i8": "int8_t", "i16": "int16_t",
            "i32": "int32_t", "i64": "int64_t"}
# bishengir's scalar function -> its meaning over C floats/ints a0, a1 (libm, the documented meaning of each)
_HMF_MEANING = {"recip": "1.0f / a0", "log1p": "log1pf(a0)", "relu": "(a0 > 0 || a0 != a0 ? a0 : 0.0f)",
                "tan": "tanf(a0)", "atan": "atanf(a0)", "tanh": "tanhf(a0)", "ilogb": "ilogbf(a0)",
                "ldexp": "ldexpf(a0, (int)a1)", "pow": "powf(a0, a1)", "powi": "parity_powi(a0, a1)",
                "round": "roundf(a0)", "isinf": "isinf(a0)", "isnan": "isnan(a0)"}
_POWI_C = ("static long long parity_powi(long long b, long long e) {\n  long long r = 1;\n"
           "  if (e < 0) return b == 1 ? 1 : b == -1 ? (e % 2 ? -1 : 1) : 0;\n"
           "  for (; e; e >>= 1, b *= b) if (e & 1) r *= b;\n  return r;\n}\n")


def libdevice_stand_ins(ir_text: str) -> tuple[str, set[str]]:
    """C definitions of the module's `__hmf_*` calls parity can define, and their names."""
    bodies, names = [], set()
    for name, tail, args, result in _HMF_DECL.findall(ir_text):
        types = [a.split("{")[0].strip() for a in args.split(",") if a.strip()]
        # the fp32 and fp16 variants end in f and Dh (__hmf_tanhf, __hmf_tanhDh); some names have neither
        base = next((c for c in (tail, tail.removesuffix("f"), tail.removesuffix("Dh")) if c in _HMF_MEANING), "")
        if not base or any(t not in _C_TYPES for t in [*types, result]):
            continue  # stays undefined: declined as lowered-library-call, with its name
        floats = [f"(float)a{i}" if t in ("f16", "f32", "f64") else f"a{i}" for i, t in enumerate(types)]
        meaning = _HMF_MEANING[base]
        for i, value in enumerate(floats):
            meaning = re.sub(rf"\ba{i}\b", f"({value})", meaning)
        params = ", ".join(f"{_C_TYPES[t]} a{i}" for i, t in enumerate(types))
        bodies.append(f"{_C_TYPES[result]} {name}({params}) {{ return ({_C_TYPES[result]})({meaning}); }}")
        names.add(name)
    if not bodies:
        return "", names
    head = "#include <math.h>\n#include <stdint.h>\n" + _POWI_C
    return head + "\n".join(bodies) + "\n", names


def declarations(ir_text: str) -> list[str]:
    """Every function the module declares without a body (a call left to bishengir's library)."""
    return sorted(set(re.findall(r"^\s*func\.func\s+private\s+@([\w$.]+)\((?!.*\{\s*$).*$", ir_text, re.M)))


def undefined_calls(ir_text: str) -> list[str]:
    """Declarations with neither an MLIR definition (cumsum) nor a C one (scalar prints, `__hmf_*`)."""
    defined = {name for name, _, _ in _PRINT_DECL.findall(ir_text)} | libdevice_stand_ins(ir_text)[1]
    return [name for name in declarations(ir_text) if name not in defined]


def c_stand_ins(ir_text: str) -> str:
    """Every C definition the module needs (prints, then libdevice), as one source; "" when none."""
    return "".join(part for part in (print_stand_ins(ir_text), libdevice_stand_ins(ir_text)[0]) if part)
