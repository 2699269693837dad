"""One candidate config compiled on the tier that overflowed: runs in a forked child (parity.fit.search).

A candidate is the failing compile's own ASTSource with some constexprs replaced, and its compile options
with some options replaced, so everything else (signature, specialization, other constexprs, target) is
exactly what the launcher compiled. Each tier answers {"ok", "used", "of", "error_kind"}.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from parity.compile.counter import constants_by_name


def named_constants(src: Any) -> dict[str, Any]:
    """The compile's constexprs by parameter name (triton-ascend 3.2 keys them by name, 3.3+ by path)."""
    return constants_by_name(list(src.fn.arg_names), dict(src.constants))


def with_config(src: Any, options: Mapping[str, Any], config: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """(source, options) of the failing compile with `config` applied: a constexpr replaces the constant,
    any other key the compile option of that name. A key that is neither is left out (never invented)."""
    names = list(src.fn.arg_names)
    constants = {}
    for key, value in dict(src.constants).items():
        name = key if isinstance(key, str) else names[key[0]] if isinstance(key, tuple) and len(key) == 1 else None
        constants[key] = config[name] if name in config else value
    new = copy.copy(src)
    new.constants = constants
    new_options = dict(options)
    named = named_constants(src)
    new_options.update({k: v for k, v in config.items() if k not in named and k in options})
    return new, new_options


def kernel_text(src: Any) -> str:
    """What the cache keys on for the kernel: its source and every constant the candidate does not set."""
    return str(getattr(src.fn, "src", "") or src.fn.__name__)


def ascend_probe(driver: Any, src: Any, target: Any, options: Mapping[str, Any], config: Mapping[str, Any]
                 ) -> dict[str, Any]:
    """In the child: compile through the compile-only NPU driver's observed compile and read its attempt."""
    import triton.compiler

    from parity.backends.ascend.driver import Recorder

    driver.recorder = Recorder()  # a fresh one without a progress file: the case's own file stays the parent's
    new_src, new_options = with_config(src, options, config)
    try:
        triton.compiler.compile(new_src, target=target, options=new_options)
    except Exception:  # the attempt holds the diagnosis
        pass
    attempt = driver.recorder.attempts[-1] if driver.recorder.attempts else None
    if attempt is None:
        return {"ok": None, "used": None, "of": None, "error_kind": "no compile"}
    return {"ok": bool(attempt.ok), "used": attempt.ub_bits, "of": attempt.ub_limit_bits or driver.arch.ub_bits,
            "error_kind": attempt.error_kind}


def cuda_probe(backend: Any, original_compile: Any, src: Any, target: Any, options: Mapping[str, Any],
               config: Mapping[str, Any]) -> dict[str, Any]:
    """In the child: triton's own compile to a cubin, then the backend's resource check (shared memory,
    threads per block for the registers used)."""
    from parity.compile.tools import empty_compile
    from parity.seams.versions import compile_call

    new_src, new_options = with_config(src, options, config)
    compiled = empty_compile(src.fn.__name__)
    try:
        kernel = compile_call(original_compile, new_src, target, new_options, None)
    except Exception as exc:
        return {"ok": False, "used": None, "of": None, "error_kind": f"compile error: {str(exc)[:120]}"}
    backend._fill_resources(compiled, kernel)
    return {"ok": bool(compiled["ok"]), "used": compiled["shared_bytes"], "of": backend.driver.arch.max_shared_bytes,
            "error_kind": compiled["error_kind"], "n_regs": compiled["n_regs"]}
