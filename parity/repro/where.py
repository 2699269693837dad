"""Where a numeric failure sits, in the kernel's terms: which program (tile) computed the worst element,
and a class (NaN/Inf, precision drift within a few ulps, the tail of the grid only, one tile, everywhere).
A tail-only failure in a kernel with an unmasked tl.load names that load's line as the likely missing mask.

Pure functions over the record's metrics, the recorded launch (grid, constexprs) and the kernel source.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from parity.results import Record

EPS = {"fp32": 2.0 ** -23, "fp16": 2.0 ** -10, "bf16": 2.0 ** -7, "fp64": 2.0 ** -52}
FEW_ULPS = 8
_BLOCK_NAME = re.compile(r"^(B[A-Z0-9_]*|[A-Z_]*BLOCK[A-Z0-9_]*)$")


def classify(metrics: Mapping[str, Any], dtype: str | None) -> str:
    region = str(metrics.get("region") or "")
    if metrics.get("nan_count"):
        return "NaN/Inf"
    rel, eps = metrics.get("max_rel_err"), EPS.get(str(dtype))
    if rel is not None and eps is not None and math.isfinite(rel) and rel <= FEW_ULPS * eps:
        return f"precision drift (within {FEW_ULPS} ulps of {dtype})"
    if region.startswith("tail"):
        return "tail of the grid only"
    if "only" in region:
        return "one tile"
    frac = float(metrics.get("mismatch_frac") or 0)
    if region == "everywhere" or frac >= 1.0:
        return "everywhere"
    if frac > 0.9:  # most elements, not every one: said as the share it is
        return f"nearly everywhere ({100 * frac:.1f}% of elements)"
    return f"part of the output ({region or 'see the metrics'})"


def blocks_of(kwargs: Mapping[str, Any]) -> dict[str, int]:
    """The launch's block-size constexprs (BT, BK, BLOCK_SIZE, ...) as ints."""
    out = {}
    for name, value in kwargs.items():
        try:
            number = int(str(value))
        except ValueError:
            continue
        if _BLOCK_NAME.match(name) and number > 0:
            out[name] = number
    return out


def program_of(index: Sequence[int], shape: Sequence[int], grid: Sequence[int],
               blocks: Mapping[str, int]) -> dict[str, Any] | None:
    """The program id (per grid axis) that owns `index`: each grid axis is matched to the output dim it tiles
    (cdiv(dim, block) == grid size), or the flattened output for a 1-D grid. None when no axis matches."""
    if not index or len(index) != len(shape):
        return None
    pid: dict[str, Any] = {}
    for axis, size in enumerate(grid):
        if size <= 1:
            continue
        for name, block in blocks.items():
            dims = [d for d in range(len(shape)) if math.ceil(shape[d] / block) == size]
            if dims:
                d = dims[0]
                pid[f"pid{axis}"] = int(index[d]) // block
                pid[f"pid{axis}_tiles"] = f"dim {d} by {name}={block}"
                break
            flat = math.prod(shape)
            if axis == 0 and math.ceil(flat / block) == size:
                linear = 0
                for i, n in zip(index, shape, strict=True):
                    linear = linear * n + int(i)
                pid["pid0"] = linear // block
                pid["pid0_tiles"] = f"the flattened output by {name}={block}"
                break
        else:  # no block tiles it: a program per element of an output dim (a reduction per program)
            dims = [d for d in range(len(shape)) if shape[d] == size]
            if dims:
                pid[f"pid{axis}"] = int(index[dims[0]])
                pid[f"pid{axis}_tiles"] = f"one element of dim {dims[0]} per program"
    if not pid:
        return None
    last = {k: size - 1 for k, size in ((f"pid{a}", s) for a, s in enumerate(grid))}
    pid["last_program"] = all(pid.get(k, v) == v for k, v in last.items() if k in pid)
    return pid


def unmasked_loads(kernel: Any) -> list[str]:
    """'file:line: code' of every tl.load without a mask (and without boundary_check) in the kernel."""
    from parity.repro.source import python_function

    try:
        fn = python_function(kernel)
        lines, first = inspect.getsourcelines(fn)
        path = inspect.getsourcefile(fn) or "?"
    except (OSError, TypeError, AttributeError):
        return []
    text = "".join(lines)
    indent = len(text) - len(text.lstrip())
    try:
        tree = ast.parse("\n".join(line[indent:] if line[:indent].isspace() else line
                                   for line in text.splitlines()))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("load") and \
                not {k.arg for k in node.keywords} & {"mask", "boundary_check"} and len(node.args) < 2:
            found.append(f"{path.split('/')[-1]}:{first + node.lineno - 1}: {lines[node.lineno - 1].strip()}")
    return found


def locate(record: Record, launch: Any, shape: Sequence[int] | None) -> dict[str, Any]:
    """record["where"]: the class, the worst element's program, and for a tail a likely missing mask."""
    metrics = record.get("metrics") or {}
    params = record.get("params") or {}
    where: dict[str, Any] = {"class": classify(metrics, params.get("dtype")), "region": metrics.get("region")}
    if launch is not None and shape is not None and metrics.get("worst_index") is not None:
        where["grid"] = list(launch.grid)
        where["program"] = program_of(list(metrics["worst_index"]), list(shape), list(launch.grid),
                                      blocks_of({**params, **dict(launch.kwargs)}))
    if where["class"] == "one tile" and (where.get("program") or {}).get("last_program"):
        where["class"] = "tail of the grid only (the last program)"
    if where["class"].startswith("tail") and launch is not None:
        loads = unmasked_loads(launch.kernel)
        if loads:
            where["likely_missing_mask"] = loads
    return where
