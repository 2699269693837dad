"""The Triton callables parity wraps, each through its one seam (parity.seams.core).

Each function returns the seam of one target, resolved when called (triton is imported lazily, and
a compile tier must put its driver in before a kernel module imports):

- `jit_run()`: JITFunction.run (`jit_run(kernel)`: one kernel's own run, an instance attribute);
- `interpreted_run()`: the interpreter's InterpretedFunction.run, where the release has one;
- `autotuner_run(cls)`: Autotuner.run, or the run of a subclass that defines its own (a library's tuner);
- `autotuner_bench()`: Autotuner._bench (one config's timing runs), or None where the release has none;
- `compile_function()`: triton.compiler.compile (the JIT looks the name up at each compile);
- `before_compile()`, `after_compile()`: the compile hooks, wherever this release keeps them;
- `disk_autotune()`: Autotuner.check_disk_cache, or None where the release has no disk autotune cache;
- `add_stages(compiler_cls)`: a backend compiler's stage pipeline.
"""

from __future__ import annotations

from typing import Any

from parity.seams.core import Seam, seam
from parity.seams.versions import compile_hook_slots


def jit_run(kernel: Any = None) -> Seam:
    if kernel is not None:
        return seam(kernel, "run")
    from triton.runtime.jit import JITFunction

    return seam(JITFunction, "run")


def interpreted_run() -> Seam | None:
    """None on forks without the interpreter and on releases whose InterpretedFunction sets `run` per
    instance (triton 3.2, triton-ascend 3.2)."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:
        return None
    return seam(InterpretedFunction, "run") if hasattr(InterpretedFunction, "run") else None


def autotuner_run(cls: type | None = None) -> Seam:
    if cls is None:
        from triton.runtime.autotuner import Autotuner

        cls = Autotuner
    return seam(cls, "run")


def autotuner_bench() -> Seam | None:
    from triton.runtime.autotuner import Autotuner

    return seam(Autotuner, "_bench") if "_bench" in Autotuner.__dict__ else None


def compile_function() -> Seam:
    import triton.compiler

    return seam(triton.compiler, "compile")


def before_compile() -> Seam:
    return seam(*compile_hook_slots()[0])


def after_compile() -> Seam:
    return seam(*compile_hook_slots()[1])


def disk_autotune() -> Seam | None:
    from triton.runtime.autotuner import Autotuner

    return seam(Autotuner, "check_disk_cache") if "check_disk_cache" in Autotuner.__dict__ else None


def add_stages(compiler_cls: type) -> Seam:
    return seam(compiler_cls, "add_stages")


def kernel_params(jit_fn: Any) -> list[tuple[str, bool, bool]]:
    """(name, is constexpr, not specialized) for each parameter of a @triton.jit function.

    JITFunction.params (KernelParam) carries both flags on triton 3.2 through 3.9 and triton-ascend; where
    an object has no `params` (the interpreter's wrapper on some releases), the plain function's annotations
    say which are constexprs."""
    params = getattr(jit_fn, "params", None)
    if params is not None:
        return [(p.name, bool(p.is_constexpr), bool(getattr(p, "do_not_specialize", False))) for p in params]
    import inspect

    fn = getattr(jit_fn, "fn", jit_fn)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    return [(name, "constexpr" in str(p.annotation), False) for name, p in signature.parameters.items()]
