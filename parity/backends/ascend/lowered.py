"""ascend-lowered: triton-ascend's own lowering of each kernel, run on the x86 CPU against fp64.

The spec's launcher runs on CPU tensors through the real triton-ascend 3.2 frontend under the
compile-only driver (parity.backends.ascend.driver). Each compile stops at ttadapter, the
Linalg-level MLIR that triton-adapter makes; instead of bishengir-compile, that module becomes
the kernel's "binary". Loading it builds an x86 shared object with LLVM/MLIR 19
(parity.backends.ascend.cpu_build, cached by IR hash), and the launcher calls it once per grid
program with the kernel's argument layout (parity.backends.ascend.cpu_abi).

What a pass here means: triton-adapter's lowering of this kernel (masks and boundary
arithmetic, `other=` padding, block pointers and their advance, discrete and unstructured
accesses, loop-carried values, reductions and dots as lowered) computes the right answer on
x86 against fp64. It checks nothing of bishengir (HFusion, HIVM, UB planning,
multi-buffering, the cube/vector split), nor the NPU's own arithmetic: it is not "works on
Ascend". A module the pipeline cannot lower or call is skipped with the op or type named.

Libraries see the same NPU as on ascend-compile (a `torch.npu` for the arch, tensors that say `npu`,
parity.backends.ascend.lowered_device), so each takes its Ascend path, on the memory computed here.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from parity.backends.ascend import VENV_NOTE
from parity.backends.ascend.arch import DEFAULT_ASCEND_ARCH
from parity.backends.base import Backend, Check, dist_version
from parity.backends.trackers import ASCEND
from parity.seams.env import set_triton_env

SESSION_HINT = "nox -s ascend-lowered"
# what the records, REPORT.md and env.json say a pass here means
SCOPE = ("ascend-lowered checks triton-adapter's lowering (masks, other=, block pointers, reductions, dots as "
         "lowered to Linalg) run on x86 against fp64; it does not check bishengir (HIVM, UB planning, "
         "multi-buffering, the cube/vector split) nor the NPU's arithmetic")


@dataclass
class LoweredKernel:
    """One ttadapter module built for the CPU: what `load_binary` hands the launcher as `function`."""

    name: str
    ir_text: str
    so_path: Path
    mlir_path: Path
    signature: Any  # cpu_abi.Signature
    function: Any  # the ctypes entry


class AscendLoweredBackend(Backend):
    name = "ascend-lowered"
    mode = "run"
    device_type = "cpu"
    target = "ascend"
    verifies = frozenset({"lowering", "numerics"})
    tracker = ASCEND
    fallback_hint = SESSION_HINT
    check = Check("Ascend (triton-ascend)", "the lowering computes the fp64 answer", 1, "lowered")
    report_rank = 5
    language = "triton-ascend"
    own_limits = ("lowered-truncsfbf2", "lowered-cumsum-i1", "lowered-device-print-tensor", "lowered-library-call",
                  "lowered-spin-lock", "lowered-int-div-trap")
    gpu_target = ("npu", "Ascend910B3", 0)
    venv = "venv-ascend"
    venv_note = VENV_NOTE
    arch_option: ClassVar[str] = "--ascend-arch"
    # the perf pass times devices; an x86 build of NPU code has no speed worth reporting
    times_kernels: ClassVar[bool] = False
    scope: ClassVar[str | None] = SCOPE
    # triton-ascend's specializations are counted by ascend-compile through the same frontend; here every
    # swept value would also run on the CPU, for no new fact
    excluded_tests: ClassVar[tuple[str, ...]] = ("test_specialization",)
    # the device type launches see: CPU memory that says "npu", as on ascend-compile
    launch_device_type: ClassVar[str] = "npu"
    # lowered/ beside repro.py: the captured modules, their buffers, and a script that rebuilds and runs them
    repro_extras: ClassVar[str] = "lowered"

    def __init__(self) -> None:
        super().__init__()
        self.arch = DEFAULT_ASCEND_ARCH
        self._reason: str | None = None
        self._driver: Any = None
        self._undo_torch: Any = None
        self.tools: Any = None
        # a test hook: rewrites each captured module before it is lowered (the planted-fault control)
        self.rewrite_ir: Callable[[str], str] | None = None
        # set while a repro re-runs a case: logs each launch's module and buffers (parity.repro.lowered_repro)
        self.buffer_log: Any = None

    @classmethod
    def installed(cls) -> str | None:
        return cls()._missing()

    @classmethod
    def host_missing(cls) -> str | None:
        from parity.backends.ascend.cpu_build import find_tools  # as _missing does: only this tier needs it

        found = find_tools()
        return found if isinstance(found, str) else None

    def _missing(self) -> str | None:
        from parity.backends.ascend.cpu_build import find_tools

        if dist_version("triton-ascend") is None:
            found = dist_version("triton")
            also = f" (this environment has upstream triton {found}, which cannot target Ascend)" if found else ""
            return f"triton-ascend is not installed{also}; run `{SESSION_HINT}`"
        if dist_version("pybind11") is None:
            return f"pybind11 is not installed (triton-ascend imports it); run `{SESSION_HINT}`"
        tools = find_tools()
        if isinstance(tools, str):
            return tools
        self.tools = tools
        return None

    def prepare(self) -> None:
        """Find the tools, give Triton a private cache, install the compile-only driver with a CPU launcher."""
        if self._driver is not None:
            return
        self._reason = self._missing()
        if self._reason:
            return
        from parity.backends.ascend import driver as ascend_driver
        from parity.backends.ascend.cpu_build import cache_root

        # this tier's compiled kernels hold ttadapter text, not NPU binaries: never share Triton's cache
        set_triton_env(TRITON_CACHE_DIR=str((cache_root() / "triton").resolve()))  # for the process
        from parity.backends.ascend import lowered_device

        self._driver = ascend_driver.install(self.arch)
        _install_cpu_path(self, self._driver)
        # torch.npu names the target before any spec module (a library) imports, as on ascend-compile
        self._undo_torch = lowered_device.install(self.arch)

    def restore(self) -> None:
        """Undo torch.npu (the triton driver stays; one arch per process)."""
        if self._undo_torch is not None:
            self._undo_torch()
            self._undo_torch = None

    def presented(self) -> Any:
        """Launches see an NPU: tensors that say `npu` over the CPU memory the kernels run on."""
        from parity.backends.ascend import lowered_device

        return lowered_device.presented()

    def unavailable(self) -> str | None:
        return self._reason if self._driver is None else None

    def load(self, name: str, ir_text: bytes | str) -> LoweredKernel:
        """Build (or find cached) the CPU shared object of one ttadapter module."""
        from parity.backends.ascend.cpu_abi import parse_signature
        from parity.backends.ascend.cpu_build import build

        text = ir_text.decode() if isinstance(ir_text, bytes) else ir_text
        if self.rewrite_ir is not None:
            text = self.rewrite_ir(text)
        signature = parse_signature(text)
        built = build(text, self.tools)
        function = getattr(ctypes.CDLL(str(built.so_path.resolve())), signature.name)
        return LoweredKernel(name, text, built.so_path, built.mlir_path, signature, function)

    def env(self) -> dict[str, Any]:
        import subprocess

        info: dict[str, Any] = {"device_name": "x86 CPU (triton-adapter's ttadapter MLIR via LLVM 19)",
                                "device_count": 1, "target_arch": f"ttadapter for {self.arch}, run on x86",
                                "triton_ascend": dist_version("triton-ascend"), "scope": SCOPE}
        if self.tools is not None:
            for key, path in self.tools.__dict__.items():
                try:
                    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
                except OSError:
                    out = ""
                lines = [line.strip() for line in out.splitlines() if "version" in line.lower()]
                info[key] = f"{path}: {lines[0]}" if lines else path
        return info


_CPU_PATH: list[bool] = []  # set once this process compiles through the CPU path (one tier per process)


def cpu_path_installed() -> bool:
    """Whether this process already stops compiles at ttadapter: ascend-compile cannot run in it after that."""
    return bool(_CPU_PATH)


def _install_cpu_path(backend: AscendLoweredBackend, driver: Any) -> None:
    """Stop each compile at ttadapter, build it for the CPU on load, and run it on launch."""
    _CPU_PATH.append(True)
    from triton.backends import backends

    compiler_cls = backends["ascend"].compiler
    # triton loads backend modules by file path; parse_options is unwrapped, so its globals are the module's
    parse_metadata = compiler_cls.parse_options.__globals__["_parse_linalg_metadata"]

    def add_stages_to_ttadapter(add_stages: Any, self: Any, stages: dict[str, Callable[..., Any]],
                                options: Any) -> None:
        add_stages(self, stages, options)
        if "ttadapter" not in stages:
            return  # force_simt_only kernels skip triton-adapter: the pipeline below has nothing to run

        def ttadapter_as_binary(src: str, metadata: dict[str, Any]) -> bytes:
            text, _ = parse_metadata(src, metadata)  # mix_mode, kernel name, tensor kinds, as the NPU path
            metadata["parity_stage"] = "ttadapter"
            binary: bytes = text.encode()
            return binary

        stages["npubin"] = ttadapter_as_binary

    from parity.seams.jit import add_stages as stages_seam

    stages_seam(compiler_cls).add(add_stages_to_ttadapter)  # for the process's life, over the driver's layer

    def load_binary(name: str, kernel: bytes, shared: int, device: Any) -> tuple[None, LoweredKernel, int, int]:
        return None, backend.load(name, kernel), 0, 0

    driver.utils.load_binary = load_binary
    driver.launcher_cls = _cpu_launcher(backend)


def _cpu_launcher(backend: AscendLoweredBackend) -> type:
    from parity.backends.ascend.cpu_abi import run_grid, user_values
    from parity.backends.ascend.cpu_divzero import ZeroDivisionInModule, zero_divisions

    class CpuLauncher:
        """triton's launcher contract: (grid, stream, function, metadata, hooks, *args), run on the host."""

        def __init__(self, src: Any, metadata: Any) -> None:
            names = list(src.signature)
            index = {i: n for i, n in enumerate(src.fn.arg_names)}
            self.names = [index.get(n, n) if isinstance(n, int) else n for n in names]
            self.constants = {index.get(k, k) if isinstance(k, int) else k for k in (src.constants or {})}

        def __call__(self, gx: int, gy: int, gz: int, stream: Any, function: LoweredKernel, packed: Any,
                     launch_metadata: Any, enter_hook: Any, exit_hook: Any, *args: Any) -> None:
            if enter_hook is not None:
                enter_hook(launch_metadata)
            values = user_values(self.names, dict.fromkeys(self.constants), args)
            # a division by an argument that is 0 here would kill the process (SIGFPE): say which, instead
            hits = zero_divisions(function.ir_text, function.signature.front,
                                  [n for n in self.names if n not in self.constants], values)
            if hits:
                raise ZeroDivisionInModule(function.name, hits)
            if backend.buffer_log is not None:
                backend.buffer_log.record(function, (gx, gy, gz), values)
            run_grid(function.function, function.signature, (gx, gy, gz), values)
            if exit_hook is not None:
                exit_hook(launch_metadata)

    return CpuLauncher
