"""A compile-only driver for triton-ascend 3.2: the real JIT path, no NPU, nothing launched.

`install(arch)` makes this process compile for GPUTarget("npu", arch, 0):

- the active driver names the target, answers device queries with the arch's core
  counts, benchmarks by calling once (so an Autotuner compiles every config), and
  launches nothing: its launcher records the grid;
- triton-ascend asks CANN (NPUUtils().get_arch()) for bishengir-compile's --target; the
  compile-only driver answers with the arch instead;
- without CANN's hivmc, bishengir-compile stops after the BiShengIR pipeline (UB planning
  included) and exits 1 with "External hivmc run fails". That compile is kept as reaching
  `bishengir`, with an empty binary that is never launched;
- `triton.compiler.compile` is wrapped, so every compile the JIT starts is recorded with
  its outcome, whether it succeeds, fails, or is swallowed by an Autotuner.

Only this process changes, and it keeps its own Triton cache directory, so the empty
binaries never reach a cache that a real NPU run could read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from parity.backends.ascend.arch import ASCEND_ARCHS, AscendArch
from parity.backends.ascend.diagnostics import (
    clean_message,
    diagnose,
    grid_finding,
    hivmc_only_failure,
    with_own_message,
)
from parity.compile import offsets
from parity.compile.tools import CompileOnlyDriver
from parity.errors import chained_text, says_nothing

# metadata keys this driver adds; they survive the on-disk cache, so a cache hit still knows its stage
STAGE_KEY = "parity_stage"


@dataclass
class Attempt:
    """One compile the JIT started, and what became of it."""

    kernel: str
    constants: dict[str, Any]
    options: dict[str, Any]
    started: float
    seconds: float | None = None
    ok: bool | None = None  # None: still running (or the process died in it)
    stage_reached: str | None = None
    error_kind: str | None = None
    message: str = ""
    ub_bits: int | None = None
    ub_limit_bits: int | None = None
    core_type: str | None = None
    cached: bool = True  # False once a stage ran: the on-disk cache did not answer
    grid: list[int] | None = None
    launch_error: str | None = None
    offsets: str | None = None  # the TTIR's pointer offset width (parity.compile.offsets)
    launch_args: dict[str, Any] | None = None  # the launch's tensors and ints (parity.backends.ascend.perf_hook)
    source: Any = field(default=None, repr=False, compare=False)  # (src, target, options), for parity.fit

    def as_json(self) -> dict[str, Any]:
        from parity.compile.tools import plain

        data = dict(self.__dict__)
        data.pop("source")
        data["constants"] = {str(k): plain(v) for k, v in self.constants.items()}
        data["options"] = {str(k): plain(v) for k, v in self.options.items()}
        return data


@dataclass
class Recorder:
    """The compiles and launches of one case; mirrored to `progress` so a crash loses nothing."""

    progress: Path | None = None
    attempts: list[Attempt] = field(default_factory=list)

    def current(self) -> Attempt | None:
        return self.attempts[-1] if self.attempts and self.attempts[-1].ok is None else None

    def last_of(self, kernel: str) -> Attempt | None:
        return next((a for a in reversed(self.attempts) if a.kernel == kernel), None)

    def save(self) -> None:
        if self.progress is not None:
            self.progress.write_text(json.dumps([a.as_json() for a in self.attempts]))


class _ArchUtils:
    """What triton-ascend asks `driver.active.utils` and NPUUtils() for, answered from the arch table."""

    def __init__(self, arch: AscendArch) -> None:
        self.arch = arch

    def __call__(self) -> _ArchUtils:  # stands in for the NPUUtils class: NPUUtils() returns this
        return self

    def get_arch(self) -> str:
        return self.arch.name

    def get_aicore_num(self) -> int:
        return self.arch.aic_cores

    def get_aivector_core_num(self) -> int:
        return self.arch.aiv_cores

    def get_device_properties(self, device: Any) -> dict[str, int]:
        return {"max_shared_mem": 1, "num_aicore": self.arch.aic_cores, "num_vectorcore": self.arch.aiv_cores}

    def load_binary(self, name: str, kernel: bytes, shared: int, device: Any) -> tuple[None, None, int, int]:
        return None, None, 0, 0


class CompileOnlyNPUDriver(CompileOnlyDriver):
    """Duck-typed stand-in for triton-ascend's NPUDriver: target, device and launch, without CANN."""

    def __init__(self, arch: AscendArch) -> None:
        self.arch = arch
        self.utils = _ArchUtils(arch)
        self.recorder = Recorder()
        driver = self

        class GridRecorder:
            """The launcher: records the grid of each launch instead of running it."""

            def __init__(self, src: Any, metadata: Any) -> None:
                self.kernel = src.fn.__name__
                self.arg_names = list(getattr(src, "signature", None) or {})  # the non-constexpr parameters

            def __call__(self, grid_x: int, grid_y: int, grid_z: int, *args: Any) -> None:
                from parity.backends.ascend.perf_hook import launch_args

                # after the grid: stream, function, packed metadata, launch metadata, two hooks, then the
                # kernel's own arguments (triton-ascend 3.2's JITFunction.run)
                driver.note_launch(self.kernel, [grid_x, grid_y, grid_z], None, launch_args(self.arg_names, args[6:]))

        self.launcher_cls = GridRecorder

    def get_current_target(self) -> Any:
        from triton.backends.compiler import GPUTarget

        return GPUTarget("npu", self.arch.name, 0)

    def get_benchmarker(self) -> Callable[..., list[float]]:
        def bench_once(kernel_call: Callable[[], Any], quantiles: Any = None, **kwargs: Any) -> list[float]:
            kernel_call()  # compiles this config; every config ties, so the Autotuner keeps the first
            return [0.0, 0.0, 0.0]

        return bench_once

    def note_launch(self, kernel: str, grid: list[int], launch_error: str | None,
                    args: dict[str, Any] | None = None) -> None:
        attempt = self.recorder.last_of(kernel)
        if attempt is None:
            return
        attempt.grid = grid
        attempt.launch_args = args or attempt.launch_args
        attempt.launch_error = launch_error or grid_finding(grid) or attempt.launch_error
        self.recorder.save()


def _observe_compile(driver: CompileOnlyNPUDriver) -> Callable[..., Any]:
    def compile(real_compile: Callable[..., Any], src: Any, target: Any = None, options: Any = None) -> Any:
        fn = getattr(src, "fn", None)
        name = getattr(fn, "__name__", getattr(src, "name", "?"))
        attempt = Attempt(name, dict(getattr(src, "constants", {}) or {}), dict(options or {}), time.perf_counter())
        attempt.source = (src, target, options) if fn is not None else None
        recorder = driver.recorder
        recorder.attempts.append(attempt)
        recorder.save()
        try:
            kernel = real_compile(src, target=target, options=options)
        except Exception as exc:
            attempt.seconds = time.perf_counter() - attempt.started
            text = str(exc)
            if exc.__cause__ is not None and says_nothing(text):  # a jit helper's frontend error: the cause says why
                text = chained_text(exc)
            found = diagnose(type(exc).__name__, getattr(exc, "stage_name", None), text)
            attempt.ok, attempt.cached = False, False
            attempt.error_kind, attempt.stage_reached = found.error_kind, found.stage_reached
            attempt.ub_bits, attempt.ub_limit_bits = found.ub_bits, found.ub_limit_bits
            cleaned = with_own_message(clean_message(text), exc.__cause__ or exc.__context__)
            attempt.message = cleaned or f"{type(exc).__name__}: {text}"
            recorder.save()
            raise
        attempt.seconds = time.perf_counter() - attempt.started
        metadata = kernel.metadata
        attempt.ok = True
        attempt.stage_reached = getattr(metadata, STAGE_KEY, None)
        attempt.core_type = attempt.core_type or getattr(metadata, "mix_mode", None)
        attempt.ub_bits = getattr(metadata, "required_ub_bits", 0) or None
        attempt.offsets = offsets.of_kernel(kernel)
        recorder.save()
        return kernel

    return compile


def _observe_stages(driver: CompileOnlyNPUDriver) -> Callable[..., None]:
    def observed(add_stages: Callable[..., None], self: Any, stages: dict[str, Callable[..., Any]],
                 options: Any) -> None:
        add_stages(self, stages, options)
        if "ttadapter" in stages:
            stages["ttadapter"] = _mark_stage_run(stages["ttadapter"], driver)
        if "npubin" in stages:
            stages["npubin"] = _npubin_without_hivmc(stages["npubin"], driver)

    return observed


def _mark_stage_run(stage: Callable[..., Any], driver: CompileOnlyNPUDriver) -> Callable[..., Any]:
    def run(src: Any, metadata: dict[str, Any]) -> Any:
        attempt = driver.recorder.current()
        if attempt is not None:
            attempt.cached = False
        return stage(src, metadata)

    return run


def _npubin_without_hivmc(stage: Callable[..., Any], driver: CompileOnlyNPUDriver) -> Callable[..., Any]:
    def run(src: Any, metadata: dict[str, Any]) -> Any:
        attempt = driver.recorder.current()
        try:
            binary = stage(src, metadata)
        except Exception as exc:
            stderr = getattr(exc, "stderr", None)
            text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else str(stderr or exc)
            if attempt is not None:
                attempt.core_type = metadata.get("mix_mode")  # parsed before bishengir-compile ran
            if not hivmc_only_failure(text):
                raise
            metadata[STAGE_KEY] = "bishengir"
            return b""  # never launched: the compile-only launcher records the grid instead
        metadata[STAGE_KEY] = "npubin"
        return binary

    return run


def _observe_grid_limit(driver: CompileOnlyNPUDriver) -> Callable[..., Any]:
    """JITFunction.run: when the launcher refuses a grid, keep the grid and its message on the compile."""

    def observed(run: Callable[..., Any], self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
        try:
            return run(self, *args, grid=grid, warmup=warmup, **kwargs)
        except RuntimeError as exc:
            if "grid should be less than" not in str(exc):
                raise
            static = list(grid) + [1] * (3 - len(grid)) if isinstance(grid, (tuple, list)) else None
            driver.note_launch(self.fn.__name__, static or [], str(exc))
            raise

    return observed


_INSTALLED: dict[str, CompileOnlyNPUDriver] = {}


def install(arch_name: str) -> CompileOnlyNPUDriver:
    """Make this process compile for `arch_name` (idempotent per process; one arch per process)."""
    if "driver" in _INSTALLED:
        driver = _INSTALLED["driver"]
        if driver.arch.name != arch_name:
            raise RuntimeError(f"the compile-only driver already targets {driver.arch.name}; one arch per process "
                               f"(run another session for {arch_name})")
        return driver
    from triton.backends import backends

    from parity.seams.device import present_driver, present_global
    from parity.seams.jit import add_stages, compile_function, jit_run

    if "ascend" not in backends:
        raise RuntimeError("the installed `triton` has no ascend backend; install triton-ascend "
                           "(`nox -s ascend-compile` does)")
    driver = CompileOnlyNPUDriver(ASCEND_ARCHS[arch_name])
    compiler_cls = backends["ascend"].compiler
    # triton loads backend modules by file path, so their globals are reached through a function; for the
    # life of the process (one arch per process): nothing here is undone
    present_global(compiler_cls.add_stages, "NPUUtils", driver.utils)
    add_stages(compiler_cls).add(_observe_stages(driver))
    compile_function().add(_observe_compile(driver))
    jit_run().add(_observe_grid_limit(driver))
    present_driver(driver)
    _INSTALLED["driver"] = driver
    return driver
