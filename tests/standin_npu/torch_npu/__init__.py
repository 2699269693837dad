"""A stand-in torch_npu for CI: `nox -s ascend`'s own code path, run where there is no NPU.

Test-only. It is put on PYTHONPATH by `nox -s ascend-standin` (and tests/test_standin_npu.py), never installed
for users; a real Ascend host imports Huawei's torch_npu instead. What importing it does, as the real one does
in its own way (https://github.com/Ascend/pytorch):

- names torch's PrivateUse1 backend "npu", so `torch.device("npu:0")` parses;
- makes `torch.npu` (this package's `npu` module) answer the documented torch.npu calls: device selection,
  `Event(enable_timing=True)`, synchronize, device properties (tests/standin_npu/torch_npu/npu.py);
- gives `torch_npu.profiler`, the part of it triton-ascend's `triton.testing.do_bench_npu` drives;
- makes tensors moved or allocated on "npu" work: CPU memory whose device says npu
  (parity.compile.device_tensors, the same presentation ascend-lowered uses).

The device behind it is ascend-lowered's: triton-ascend 3.2 compiles each kernel through triton-adapter to
ttadapter MLIR, which LLVM 19 builds for x86 and the launcher runs per grid program
(parity.backends.ascend.lowered). Triton's active driver answers as triton-ascend's NPUDriver does (its
benchmarker is triton.testing.do_bench, its device interface torch.npu), launching on that CPU path.

Not exercised here: bishengir, the NPU's arithmetic and its speed, CANN, triton-ascend's own NPU launcher.
"""

from __future__ import annotations

from typing import Any

import torch

from . import npu, profiler

__all__ = ["npu", "profiler"]

__version__ = f"{torch.__version__.split('+')[0]}+standin"
STANDIN = True  # tests and docs can tell this package from Huawei's
_held: dict[str, Any] = {}


def _install() -> None:
    from parity.backends.ascend.lowered import AscendLoweredBackend
    from parity.compile.device_tensors import on_target
    from parity.seams.device import present_torch_module

    backend = AscendLoweredBackend()
    backend.arch = npu.ARCH
    backend.prepare()  # triton-ascend's compile-only driver with ascend-lowered's CPU launcher
    reason = backend.unavailable()
    if reason:
        # the real torch_npu fails at import without CANN; the stand-in without its CPU device
        raise ImportError(f"the stand-in torch_npu needs ascend-lowered's toolchain: {reason}")
    backend.restore()  # ascend-lowered's compile-tier torch.npu gives way to this package's
    present_torch_module("npu", npu)
    _as_npu_driver(backend._driver)
    tensors = on_target("npu")  # for the process's life, as torch_npu's registration is
    tensors.__enter__()
    _held.update(backend=backend, tensors=tensors)


def _as_npu_driver(driver: Any) -> None:
    """The driver answers the calls triton-ascend 3.2's NPUDriver answers from torch.npu (its source:
    python/triton/backends/ascend/driver.py of github.com/Ascend/triton-ascend, tag v3.2.0)."""
    def get_benchmarker() -> Any:
        from triton.testing import do_bench

        return do_bench

    def get_empty_cache_for_benchmark() -> torch.Tensor:
        return torch.empty(192 * 1024 * 1024 // 4, dtype=torch.int, device="npu")

    driver.get_benchmarker = get_benchmarker
    driver.get_device_interface = lambda: npu
    driver.get_current_device = npu.current_device
    driver.set_current_device = npu.set_device
    driver.get_empty_cache_for_benchmark = get_empty_cache_for_benchmark


_install()
