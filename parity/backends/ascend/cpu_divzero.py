"""Integer divisions a ttadapter module makes by an argument that is 0 in this launch, found before it runs.

triton-adapter's Linalg can divide by a kernel argument: for a block pointer's boundary_check it rebuilds
each axis's offset by dividing the linear offset by that axis's run-time stride (getBoundarySizes; fixed for
zero strides on triton-ascend's main in August 2026, after 3.2.0:
https://github.com/triton-lang/triton-ascend/pull/1838). A stride of 0, which a broadcast operand has, makes
that a division by zero: on x86 SIGFPE kills the process, and the NPU
computes an undefined value. Found before the call, the case fails with the operation and the argument named.
Only divisions at the function's top level count: they run on every program, whatever the data.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

_DIV = re.compile(r"^\s*%[\w.#]+ = arith\.(?:divsi|divui|remsi|remui|floordivsi|ceildivsi|ceildivui) "
                  r"(%[\w.#]+), (%[\w.#]+)")
_ZERO = re.compile(r"^\s*(%[\w.#]+) = arith\.constant 0 :")
_CAST = re.compile(r"^\s*(%[\w.#]+) = arith\.(?:index_cast|index_castui|extsi|extui|trunci) (%[\w.#]+)")
_ARG = re.compile(r"^%arg(\d+)$")


@functools.lru_cache(maxsize=256)
def top_level_divisions(ir_text: str) -> tuple[tuple[str, int], ...]:
    """(the operation's text, the function argument number its divisor is) for every integer division or
    remainder at the top level of the module's function whose divisor is an argument (or a cast of one). A
    constant 0 divided is left out: compilers fold it to 0 whatever the divisor."""
    origin: dict[str, int] = {}
    zeros: set[str] = set()
    found: list[tuple[str, int]] = []
    depth = None  # brace depth, from the function's opening line on
    for line in ir_text.splitlines():
        if depth is None:
            if re.match(r"\s*func\.func\b", line):
                depth = line.count("{") - line.count("}")
            continue
        top = depth == 1 and not line.lstrip().startswith("}")
        depth += line.count("{") - line.count("}")
        if depth <= 0:
            break
        zero = _ZERO.match(line)
        if zero:
            zeros.add(zero.group(1))
            continue
        cast = _CAST.match(line)
        if cast:
            source = cast.group(2)
            arg = _ARG.match(source)
            if arg or source in origin:
                origin[cast.group(1)] = int(arg.group(1)) if arg else origin[source]
            continue
        div = _DIV.match(line)
        if div and top and div.group(1) not in zeros:
            divisor = div.group(2)
            arg = _ARG.match(divisor)
            number = int(arg.group(1)) if arg else origin.get(divisor)
            if number is not None:
                found.append((line.strip(), number))
    return tuple(found)


def zero_divisions(ir_text: str, front: int, names: Sequence[str], values: Sequence[object]) -> list[str]:
    """Each top-level division by a user argument that is 0 in this launch, named: `names` and `values` are the
    user arguments (after the `front` lock and workspace memrefs) as the launcher passes them."""
    hits = []
    for text, number in top_level_divisions(ir_text):
        index = number - front
        if 0 <= index < len(values) and type(values[index]) is int and values[index] == 0:
            name = names[index] if index < len(names) else f"argument {index}"
            hits.append(f"`{text}` divides by {name} (%arg{number}), which is 0 in this launch")
    return hits


class ZeroDivisionInModule(RuntimeError):
    """The module would divide an integer by zero on every program: the case is not run."""

    def __init__(self, kernel: str, hits: list[str]) -> None:
        super().__init__(
            f"triton-adapter's Linalg for {kernel} divides by an argument that is 0 in this launch, at its top "
            f"level: {'; '.join(hits)}. An integer division by zero raises SIGFPE on x86 and gives an undefined "
            "value on the NPU, so the case is not run")
