"""The tl.load and tl.store calls of a kernel that have no mask: where an out-of-bounds access comes from.

Pure over the kernel's source (read once through `inspect`). A call counts as masked with a `mask`
(keyword or positional) or a `boundary_check` (block pointers); anything else is listed with its file and
line, as a user would look for it.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any

# the positional index of `mask` in tl.load(pointer, mask, other, ...) and tl.store(pointer, value, mask, ...)
MASK_POSITION = {"load": 1, "store": 2}


def python_function(kernel: Any) -> Any:
    """The plain function under a JITFunction, an Autotuner, Heuristics or an interpreted kernel."""
    seen = kernel
    for _ in range(8):
        inner = getattr(seen, "fn", None)
        if inner is None or inner is seen:
            break
        seen = inner
    return seen


def unmasked_calls(source: str, op: str) -> list[int]:
    """Line numbers (1-based, in `source`) of each `<x>.<op>(...)` call without a mask or boundary_check."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == op):
            continue
        keywords = {k.arg for k in node.keywords}
        if keywords & {"mask", "boundary_check"} or len(node.args) > MASK_POSITION[op]:
            continue
        found.append(node.lineno)
    return sorted(found)


def unmasked_accesses(kernel: Any, op: str) -> list[str]:
    """'file:line: code' of each unmasked tl.<op> in the kernel (op: "load" or "store"); [] where the source
    cannot be read."""
    fn = python_function(kernel)
    try:
        lines, first = inspect.getsourcelines(fn)
        path = inspect.getsourcefile(fn) or "?"
    except (OSError, TypeError):
        return []
    return [f"{path.rsplit('/', 1)[-1]}:{first + n - 1}: {lines[n - 1].strip()}"
            for n in unmasked_calls("".join(lines), op)]
