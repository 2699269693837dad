"""One candidate config compiled on the tier that overflowed: runs in a forked child (parity.fit.search).

A candidate is the failing compile's own ASTSource with some constexprs replaced, and its compile options
with some options replaced, so everything else (signature, specialization, other constexprs, target) is
exactly what the launcher compiled. Each tier answers {"ok", "used", "of", "error_kind"}.

On ascend-compile, bishengir-compile prints the UB a kernel needs only when it overflows. With
`--enable-memory-display` it writes its UB plan (memory_info_aiv.json: every buffer's offsets in bytes
and extent in bits) to its working directory, fitting or not; the end of the last buffer is the figure
its overflow message prints ("requires N bits"), rounded up to UB's 32-byte blocks: on every overflow of
the measured kernels (docs/fit.md) the two agree. The probe adds that option to triton-ascend's
bishengir-compile call, where the installed bishengir-compile offers it, and reads the plan of a config
that fits. A kernel whose loops bishengir tiles itself is planned to fill the UB (1,572,864 of
1,572,864 bits); a cube-only kernel has no UB plan (`used` stays None).
"""

from __future__ import annotations

import copy
import functools
import json
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from parity.compile.counter import constants_by_name
from parity.seams.env import set_triton_env


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
        constants[key] = config[name] if name is not None and name in config else value
    new = copy.copy(src)
    new.constants = constants
    new_options = dict(options)
    named = named_constants(src)
    new_options.update({k: v for k, v in config.items() if k not in named and k in options})
    return new, new_options


def kernel_text(src: Any) -> str:
    """What the cache keys on for the kernel: its source and every constant the candidate does not set."""
    return str(getattr(src.fn, "src", "") or src.fn.__name__)


MEMORY_DISPLAY = "--enable-memory-display"
UB_BLOCK_BITS = 32 * 8  # UB is allocated in 32-byte blocks


@functools.cache
def offers_memory_display(compiler: str) -> bool:
    """Whether this bishengir-compile has the option (an unknown option would fail every compile)."""
    try:
        done = subprocess.run([compiler, "--help"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return MEMORY_DISPLAY in done.stdout


def planned_ub_bits(plans: Iterable[Mapping[str, Any]]) -> int | None:
    """The UB the last plan of bishengir's memory display uses: the end, in bits, of its last buffer (offsets
    are in bytes, extents in bits; a multi-buffered buffer has one offset per copy), in whole 32-byte blocks."""
    found = None
    for plan in plans:
        for record in plan.get("Record", []):
            if record.get("scope") != "ub":
                continue
            ends = [int(o) * 8 + int(b["extent"]) for b in record.get("memory_info_array", [])
                    for o in b.get("offset", [])]
            found = -(-max(ends, default=0) // UB_BLOCK_BITS) * UB_BLOCK_BITS
    return found


class _DisplayingSubprocess:
    """The subprocess module as triton-ascend's compiler module sees it during one probe: its
    bishengir-compile call gets MEMORY_DISPLAY and runs in `workdir`, where the plan lands."""

    def __init__(self, workdir: str) -> None:
        self.workdir = workdir

    def __getattr__(self, name: str) -> Any:
        return getattr(subprocess, name)

    def run(self, cmd: Any, *args: Any, **kwargs: Any) -> Any:
        if (isinstance(cmd, list) and cmd and str(cmd[0]).endswith("bishengir-compile")
                and any(str(a).endswith(".mlir") for a in cmd) and offers_memory_display(str(cmd[0]))):
            cmd, kwargs = [*cmd, MEMORY_DISPLAY], {**kwargs, "cwd": self.workdir}
        return subprocess.run(cmd, *args, **kwargs)


def _display_memory(workdir: str) -> Callable[[], None]:
    """Present the displaying subprocess to the module triton loaded the Ascend backend's compiler from."""
    import inspect

    from triton.backends import backends

    from parity.seams.device import present_global

    # unwrapped: the driver's stage observer is a seam on add_stages, whose globals are parity's
    stages = inspect.unwrap(backends["ascend"].compiler.add_stages)
    return present_global(stages, "subprocess", _DisplayingSubprocess(workdir))


def _read_plans(workdir: str) -> list[dict[str, Any]]:
    plans = []
    for path in sorted(Path(workdir).glob("memory_info_*.json")):
        try:
            plans.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return plans


def ascend_probe(driver: Any, src: Any, target: Any, options: Mapping[str, Any], config: Mapping[str, Any]
                 ) -> dict[str, Any]:
    """In the child: compile through the compile-only NPU driver's observed compile and read its attempt;
    `used` is the UB plan's figure for a fit, the overflow message's for a UB overflow, else None."""
    import triton.compiler

    from parity.fit.cache import fit_cache_dir

    # a fresh recorder of the driver's own kind, without a progress file: the case's own file stays the parent's
    driver.recorder = type(driver.recorder)()
    new_src, new_options = with_config(src, options, config)
    fit_cache_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="plan-", dir=fit_cache_dir()) as workdir:
        undo = _display_memory(workdir)
        # a plan comes only from a compile that runs: Triton's cache may hold this config (the case compiled it)
        undo_always = set_triton_env(TRITON_ALWAYS_COMPILE="1")
        try:
            triton.compiler.compile(new_src, target=target, options=new_options)
        except Exception:  # the attempt holds the diagnosis
            pass
        finally:
            undo()
            undo_always()
        planned = planned_ub_bits(_read_plans(workdir))
    attempt = driver.recorder.attempts[-1] if driver.recorder.attempts else None
    if attempt is None:
        return {"ok": None, "used": None, "of": None, "error_kind": "no compile"}
    # a failing compile's need is its message's (a cc overflow has no UB figure); "planned" is kept beside it:
    # on a UB overflow the two agree (tests/test_fit_ascend.py checks it)
    used = planned if attempt.ok else attempt.ub_bits
    return {"ok": bool(attempt.ok), "used": used, "planned": planned,
            "of": attempt.ub_limit_bits or driver.arch.ub_bits, "error_kind": attempt.error_kind}


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
