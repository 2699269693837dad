"""cuda-compile: every kernel built for a named SM by upstream triton, with no GPU.

A compile-only driver replaces the active one for the session. Kernels are launched
through their real launchers with CPU tensors, so the JIT's specialization, heuristics
and autotuner run as usual; each compile runs in a forked child (parity.compile.isolate) and
the driver's launcher records the grid instead of launching.

Resources come from the cubin: `cuobjdump -res-usage` (bundled with triton) gives the
registers and the per-thread stack frame and local memory. n_spills is their sum / 4,
the figure triton's CUDA driver reports (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES / 4).
"""

from __future__ import annotations

import faulthandler
import hashlib
import os
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from parity import settings
from parity.backends.base import Backend, Check
from parity.backends.cuda import torch_device
from parity.backends.cuda.arch import CUDA_ARCHS, DEFAULT_ARCH, parse_cuda_arch
from parity.backends.cuda.dot_precision import tf32_dots
from parity.backends.cuda.resources import max_threads, resource_usage
from parity.compile import offsets, sandbox
from parity.compile.counter import constants_by_name
from parity.compile.device_tensors import launch_on_target
from parity.compile.fork import run_forked, wants_fork
from parity.compile.isolate import run_isolated
from parity.compile.keep_going import keep_going, raised_by_launcher, recording_into
from parity.compile.tools import (
    CompileOnlyDriver,
    autotune_keys,
    clear_jit_caches,
    empty_compile,
    exception_text,
    trim_message,
    variant_and_config,
)
from parity.errors import skip_reason
from parity.fit import hook as fit_hook
from parity.fit.hook import FitTier
from parity.fit.probe import cuda_probe
from parity.seams.device import present_driver
from parity.seams.env import set_triton_env
from parity.seams.jit import add_stages, compile_function
from parity.seams.versions import compile_call, load_binary_returns_max_threads, nvidia_binary

# CUDA's grid limits: x < 2^31, y and z <= 65535
GRID_LIMITS = (2**31 - 1, 65535, 65535)


class CompileFailed(RuntimeError):
    """Raised into the JIT when an isolated compile failed; the compile dict is already recorded."""


@dataclass
class CompileLog:
    """Session state of the compile-only driver: what the current case compiled and launched."""

    arch: int = DEFAULT_ARCH
    variant_keys: list[str] = field(default_factory=list)
    config_keys: set[str] = field(default_factory=set)
    compiles: list[dict[str, Any]] = field(default_factory=list)
    by_hash: dict[str, dict[str, Any]] = field(default_factory=dict)
    stage: str | None = None  # last stage finished by the compile running in this process
    progress_path: str | None = None  # the child appends each finished stage here
    sources: dict[int, Any] = field(default_factory=dict)  # id(compile dict) -> (src, target, options), parity.fit

    def begin(self, variant_keys: list[str], config_keys: set[str]) -> None:
        self.variant_keys, self.config_keys = variant_keys, config_keys
        self.compiles, self.by_hash, self.sources = [], {}, {}

    def any_failed(self) -> bool:
        return any(not c["ok"] or c["launch_error"] for c in self.compiles)


def _child_compile(log: CompileLog, compile_fn: Any, src: Any, target: Any, options: Any) -> dict[str, Any]:
    """Runs in the forked child: compile, and describe a failure with the stage it reached."""
    faulthandler.disable()  # on an abort, keep the compiler's own last words, not a Python stack dump
    log.stage = None
    try:
        compile_fn(src, target=target, options=options)
        return {"ok": True}
    except Exception as exc:
        text = exception_text(exc)  # with its cause: the frontend's own reason follows the caret
        text = "\n".join(line for line in text.splitlines() if not line.startswith("Repro command"))
        # nothing produced: the frontend (code generator) rejected the program
        kind = "unsupported" if log.stage is None else "mlir_error"
        return {"ok": False, "stage": log.stage, "kind": kind, "message": trim_message(text)}


def isolated_failure(result: Any, timeout_s: float) -> str:
    """What a crashed or hung child left behind, for the compile's message."""
    what = (f"no result after {timeout_s:g} s; the compile was killed" if result.timed_out
            else result.crashed or result.error or "the child gave no result")
    return f"{what}; output: {result.output.strip()}" if result.output.strip() else what


def _read_progress(path: str | None) -> str | None:
    if not path or not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as fh:
        stages = fh.read().split()
    return stages[-1] if stages else None


class _Driver(CompileOnlyDriver):
    """The compile-only driver: a target, device properties, and a launcher that records grids."""

    def __init__(self, log: CompileLog) -> None:
        from triton.backends.compiler import GPUTarget

        self.log = log
        self.arch = CUDA_ARCHS[log.arch]
        self.target = GPUTarget("cuda", log.arch, 32)
        self.utils = _Utils(self)
        self.launcher_cls = self._launcher_cls()
        self._regs: dict[bytes, tuple[int | None, int | None]] = {}
        self.max_threads_too = load_binary_returns_max_threads()  # triton 3.4+ unpacks five values

    def get_current_target(self) -> Any:
        return self.target

    def get_active_torch_device(self) -> Any:
        import torch

        return torch.device("cpu")

    def get_benchmarker(self) -> Any:
        return warm_only

    def map_python_to_cpp_type(self, ty: str) -> str:
        return ty

    def registers(self, cubin: bytes, kernel: str) -> tuple[int | None, int | None]:
        key = hashlib.sha1(cubin).digest()
        if key not in self._regs:
            self._regs[key] = resource_usage(cubin, kernel)
        return self._regs[key]

    def _launcher_cls(self) -> type:
        log = self.log

        class NoLaunch:
            """Stands in for CudaLauncher: checks the grid against CUDA's limits and records it."""

            def __init__(self, src: Any, metadata: Any) -> None:
                self.hash = metadata.hash

            def __call__(self, grid_x: int, grid_y: int, grid_z: int, *args: Any) -> None:
                compiled = log.by_hash.get(self.hash)
                if compiled is None:
                    return
                grid = [int(grid_x), int(grid_y), int(grid_z)]
                compiled["grid"] = compiled["grid"] or grid
                over = [f"{axis}={n} > {limit}" for axis, n, limit in zip("xyz", grid, GRID_LIMITS, strict=True)
                        if n > limit]
                if over and not compiled["launch_error"]:
                    compiled["grid"] = grid
                    compiled["launch_error"] = (f"grid {tuple(grid)} exceeds CUDA's grid limits ({', '.join(over)}); "
                                              "cuLaunchKernel would fail with CUDA_ERROR_INVALID_VALUE")

        return NoLaunch


class _Utils:
    def __init__(self, driver: _Driver) -> None:
        self.driver = driver

    def get_device_properties(self, device: int) -> dict[str, Any]:
        arch = self.driver.arch
        return {"max_shared_mem": arch.max_shared_bytes, "max_num_regs": arch.registers_per_sm,
                "multiprocessor_count": arch.sm_count, "warpSize": 32, "sm_clock_rate": 0, "mem_clock_rate": 0,
                "mem_bus_width": 0}

    def load_binary(self, name: str, cubin: bytes, shared: int, device: int) -> tuple[Any, ...]:
        n_regs, n_spills = self.driver.registers(cubin, name)
        loaded = (None, None, n_regs or 0, n_spills or 0)
        return (*loaded, max_threads(self.driver.arch, n_regs)) if self.driver.max_threads_too else loaded


def warm_only(kernel_call: Any, quantiles: Any = None, **kwargs: Any) -> Any:
    """The autotuner's benchmarker: run each config once (compiling it); time nothing.

    A config that fails is already recorded by the compile wrapper; it gets an infinite time,
    as triton's own benchmarker gives configs that run out of resources."""
    try:
        kernel_call()
        value = 0.0
    except Exception:
        value = float("inf")
    return [value] * len(quantiles) if quantiles else value


class CudaCompileBackend(Backend):
    name = "cuda-compile"
    mode = "compile"
    device_type = "cpu"
    target = "cuda"
    presents = "cuda"
    verifies = frozenset({"vendor-compiler"})
    # the device type launches see (parity.compile.device_tensors): CPU memory that says "cuda"
    launch_device_type: ClassVar[str] = "cuda"
    check = Check("NVIDIA (Triton)", "builds for {arch}", 0, "build")
    report_rank = 3
    language = "triton"
    gpu_target = ("cuda", DEFAULT_ARCH, 32)
    venv = "venv-upstream"
    # the plugin copies this pytest option's value into `arch` before prepare()
    arch_option: ClassVar[str] = "--cuda-arch"
    repro_template: ClassVar[str] = "cuda_compile_script"
    proves_on: ClassVar[tuple[str, ...]] = ("interpret",)  # the same triton's interpreter computes a fit

    def __init__(self) -> None:
        super().__init__()
        self.log = CompileLog()
        self.timeout_s = settings.current().compile_timeout_s
        self.driver: _Driver | None = None
        self._undo: list[Any] = []  # driver, stage hook, compile layer: what restore() puts back, in reverse
        self._sandbox: Any = None
        self._undo_torch: Any = None

    @property
    def arch(self) -> int:
        return self.log.arch

    @arch.setter
    def arch(self, value: int | str) -> None:
        if self.driver is not None:
            raise RuntimeError("set cuda-compile's arch before prepare(); the driver is already installed")
        self.log.arch = parse_cuda_arch(value)

    def unavailable(self) -> str | None:
        try:
            from triton.backends.nvidia.compiler import CUDABackend  # noqa: F401
        except ImportError as exc:
            return (f"upstream triton with its nvidia backend is not importable ({exc}); "
                    "`pip install triton` (or `nox -s cuda-compile`)")
        ptxas = nvidia_binary("ptxas")
        if not ptxas or not os.path.exists(ptxas):
            return "triton's bundled ptxas is missing; reinstall the triton wheel or set TRITON_PTXAS_PATH"
        return None

    def prepare(self) -> None:
        """Install the compile-only driver, the isolated compile and the stage tracker."""
        if self.driver is not None or self.unavailable():
            return
        from triton.backends.nvidia.compiler import CUDABackend

        self._sandbox = sandbox.enter(self.name)  # never the user's ~/.triton: see parity.compile.sandbox
        arch = CUDA_ARCHS[self.log.arch]  # torch.cuda names the target too, for libraries that ask it
        self._undo_torch = torch_device.install(self.log.arch, arch.sm_count, arch.max_shared_bytes,
                                                arch.registers_per_sm)
        self.driver = _Driver(self.log)
        # the stage hook wraps add_stages on every release, while the knob changed protocol (3.9 also calls
        # it with no arguments, for a cache key)
        self._undo = [present_driver(self.driver), add_stages(CUDABackend).add(self._stage_layer),
                      compile_function().add(self._compile_layer())]
        # the code generator reads it too: this tier needs the real JIT
        self._undo.append(set_triton_env(TRITON_INTERPRET="0"))

    def restore(self) -> None:
        """Undo prepare(): the previous driver, stage hook and compile function (tests use this)."""
        if self.driver is None:
            return
        for undo in reversed(self._undo):
            undo()
        self._undo = []
        sandbox.leave(self._sandbox)
        self._undo_torch()
        self.driver = None

    def _stage_layer(self, inner: Any, backend: Any, stages: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        out = inner(backend, stages, *args, **kwargs)
        self._track_stages(backend, stages, *args)
        return out

    def _track_stages(self, backend: Any, stages: dict[str, Any], *args: Any) -> None:
        log = self.log

        def tracked(ext: str, stage_fn: Any) -> Any:
            def run(src: Any, metadata: Any) -> Any:
                out = stage_fn(src, metadata)
                log.stage = ext
                if log.progress_path:
                    with open(log.progress_path, "a", encoding="utf-8") as fh:
                        fh.write(ext + "\n")
                return out
            return run

        for ext, stage_fn in list(stages.items()):
            stages[ext] = tracked(ext, stage_fn)

    def _compile_layer(self) -> Any:
        log, backend = self.log, self

        def compile(original: Any, src: Any, target: Any = None, options: Any = None, _env_vars: Any = None) -> Any:
            fn = getattr(src, "fn", None)
            if fn is None:  # an IR file, not a kernel: not ours to track
                return compile_call(original, src, target, options, _env_vars)
            compiled = backend._new_record(fn, src, options or {})
            log.compiles.append(compiled)
            log.sources[id(compiled)] = (src, target, options or {})
            t0 = time.perf_counter()
            fd, log.progress_path = tempfile.mkstemp(prefix="parity-stages-")
            os.close(fd)
            try:
                result = run_isolated(lambda: _child_compile(log, original, src, target, options),
                                      timeout_s=backend.timeout_s)
                stage = _read_progress(log.progress_path)
            finally:
                os.unlink(log.progress_path)
                log.progress_path = None
            compiled["seconds"] = round(time.perf_counter() - t0, 3)
            if result.ok and not result.value["ok"]:
                value = result.value
                compiled.update(stage_reached=value["stage"], error_kind=value["kind"], message=value["message"])
            elif not result.ok:
                compiled.update(stage_reached=stage, error_kind="timeout" if result.timed_out else "crash",
                              message=trim_message(isolated_failure(result, backend.timeout_s)))
            if compiled["error_kind"]:
                raise CompileFailed(f"{compiled['kernel']}: {compiled['error_kind']}: {compiled['message']}")
            kernel = compile_call(original, src, target, options, _env_vars)  # disk-cache hit
            backend._fill_resources(compiled, kernel)
            log.by_hash[kernel.hash] = compiled
            return kernel

        return compile

    def _new_record(self, fn: Any, src: Any, options: Mapping[str, Any]) -> dict[str, Any]:
        compiled = empty_compile(getattr(fn, "__name__", None) or fn.fn.__name__)
        named = constants_by_name(fn.arg_names, getattr(src, "constants", {}))
        compiled["variant"], compiled["config"] = variant_and_config(named, options, self.log.variant_keys,
                                                                 self.log.config_keys)
        return compiled

    def _fill_resources(self, compiled: dict[str, Any], kernel: Any) -> None:
        arch = CUDA_ARCHS[self.log.arch]
        assert self.driver is not None
        n_regs, n_spills = self.driver.registers(kernel.asm["cubin"], kernel.name)
        shared = int(kernel.metadata.shared)
        compiled.update(ok=True, stage_reached="cubin", n_regs=n_regs, n_spills=n_spills, shared_bytes=shared)
        compiled["tf32_dots"] = tf32_dots(kernel.asm.get("ttir"))  # NVIDIA's default TF32 for fp32 tl.dot
        compiled["offsets"] = offsets.of_kernel(kernel)  # i32 or i64 pointer offsets (parity.envelope)
        threads = kernel.metadata.num_warps * 32
        if shared > arch.max_shared_bytes:
            compiled.update(ok=False, error_kind="out_of_resources",
                          message=f"shared memory: requires {shared} bytes while {arch.max_shared_bytes} "
                                  f"bytes are available per block on sm_{self.log.arch}")
        elif threads > max_threads(arch, n_regs):
            compiled.update(ok=False, error_kind="out_of_resources",
                          message=f"threads: num_warps={kernel.metadata.num_warps} needs {threads} threads, but "
                                  f"{n_regs} registers per thread allow {max_threads(arch, n_regs)}")

    def compile_case(self, spec: Any, case: Any, cpu_inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Launch the case under the compile-only driver; one dict per compile it caused.

        A spec whose launcher calls a library runs its case in a forked child (parity.compile.fork):
        the library's own caches would otherwise carry compiled kernels over to the next case."""
        if wants_fork(spec):
            forked: list[dict[str, Any]] = run_forked(lambda: self._compile_here(spec, case, cpu_inputs),
                                                      what=f"{spec.name}[{case.id}]")
            return forked
        return self._compile_here(spec, case, cpu_inputs)

    def _compile_here(self, spec: Any, case: Any, cpu_inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
        log = self.log
        log.begin(list(spec.variants), autotune_keys(spec.kernels))
        clear_jit_caches(spec.kernels)
        rejected = recording_into(log.compiles, log.variant_keys, log.config_keys)
        try:  # every listed kernel compiles, also those the launcher calls after a failing one; on
            # tensors that say "cuda", so libraries take their GPU path (parity.compile.device_tensors)
            with keep_going(spec.kernels, lambda: sum(1 for c in log.compiles if c.get("error_kind")), rejected):
                launch_on_target(spec.launch, cpu_inputs, case.params, self.launch_device_type)
        except Exception as exc:
            # a compile failure the launcher passed on is the finding already logged; a raise of the
            # launcher's own (fla's Hopper guard) is its verdict, even when some config failed before
            if not self.log.any_failed() or raised_by_launcher(exc) or skip_reason(exc) is not None:
                raise
        finally:
            clear_jit_caches(spec.kernels)
        fit_hook.attach(log.compiles, [log.sources.get(id(c)) for c in log.compiles], spec.kernels,
                        self.fit_tier(compile_function().original))
        return [dict(c) for c in self.log.compiles]

    def fit_tier(self, original_compile: Any) -> FitTier:
        """What the fit advisor searches here: shared memory per block on this SM, and fewer pipeline stages
        (each holds another copy of the tiles; two fewer at most)."""
        def offers(options: Mapping[str, Any]) -> dict[str, list[Any]]:
            stages = int(options.get("num_stages") or 1)
            return {"num_stages": list(range(stages - 1, 0, -1))[:2]} if stages > 1 else {}

        return FitTier(self.name, f"sm_{self.arch}", "bytes", CUDA_ARCHS[self.log.arch].max_shared_bytes, offers,
                       lambda src, target, options, config: cuda_probe(self, original_compile, src, target, options,
                                                                       config))

    def env(self) -> dict[str, Any]:
        arch = CUDA_ARCHS[self.log.arch]
        ptxas = nvidia_binary("ptxas") or "ptxas"
        version = subprocess.run([ptxas, "--version"], capture_output=True, text=True, check=False).stdout
        return {"device_name": f"none (compile-only for {arch.name})", "device_count": 0,
                "target_arch": f"sm_{self.log.arch}", "max_shared_bytes": arch.max_shared_bytes,
                "ptxas": (version.strip().splitlines() or ["?"])[-1]}
