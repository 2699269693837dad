"""Run-level notes shown once in the terminal summary instead of once per case.

Triton 3.8 warns `tl.make_block_ptr is deprecated` at every compile of a kernel that uses it; under
pytest that is one warning per case. parity silences the per-case warning (BLOCK_PTR_FILTER) and says
it once here, with what to do.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from pathlib import Path
from typing import Any

BLOCK_PTR_FILTER = "ignore:tl.make_block_ptr is deprecated:UserWarning"


def _plain(obj: Any) -> Any:
    """The Python function under Autotuner / Heuristics / JITFunction wrappers."""
    for _ in range(8):
        inner = getattr(obj, "fn", None)
        if inner is None:
            return obj
        obj = inner
    return obj


def _source(kernel: Any, seen: set[int] | None = None) -> str:
    """The kernel's source and that of every @triton.jit helper it calls (by global name, transitively): the
    block pointer may sit in a helper, and another kernel of the same module is not this one's."""
    seen = set() if seen is None else seen
    fn = _plain(kernel)
    if id(fn) in seen:
        return ""
    seen.add(id(fn))
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        return str(getattr(kernel, "src", ""))
    code, names = getattr(fn, "__code__", None), getattr(fn, "__globals__", {})
    helpers = [names[n] for n in (code.co_names if code else ()) if n in names and hasattr(names[n], "fn")]
    return "\n".join([text, *(_source(h, seen) for h in helpers)])


def deprecates_block_ptr() -> bool:
    """Whether the installed triton warns on tl.make_block_ptr (upstream 3.8 and later)."""
    try:  # the file, not the function: the interpreter patches tl's builtins while it runs
        import triton.language.core as core

        return "make_block_ptr is deprecated" in Path(core.__file__).read_text(encoding="utf-8")
    except Exception:  # no triton, or a build without sources: nothing to say
        return False


def block_ptr_note(specs: Iterable[Any]) -> str | None:
    """One line naming the kernels that use tl.make_block_ptr, where this triton deprecates it."""
    users = sorted({s.name for s in specs for k in s.kernels if "tl.make_block_ptr(" in _source(k)})
    if not users or not deprecates_block_ptr():
        return None
    shown = ", ".join(users[:6]) + (f" and {len(users) - 6} more" if len(users) > 6 else "")
    return (f"note: this triton deprecates tl.make_block_ptr, used by {shown} (the warning is shown once here, "
            "not per case). It still compiles; to move on, use tl.make_tensor_descriptor (upstream Triton) and "
            "keep the block pointer where triton-ascend 3.2 lacks tensor descriptors.")
