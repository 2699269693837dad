"""Host-side helpers the persistent and tensor-descriptor kernels share: core counts, scratch, configs.

A persistent kernel sizes its grid to the device's cores, and on the compile tiers the tensors are
CPU tensors, so the device cannot be asked through them: the count comes from what the tier
presents for its target (torch.cuda's properties on cuda-compile, the compile-only driver's
`num_aicore` on ascend-compile), chosen by parity.current_target().
"""

from __future__ import annotations

import os
from typing import Any

import torch

from parity import current_target

INTERPRETER_CORES = 3  # small, so the interpreter's tile loop wraps around at least once


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def device_core_count(device: torch.device) -> int:
    """SMs on CUDA, AI (cube) cores on Ascend, for the device or the compile tier's target."""
    target = "cuda" if device.type == "cuda" else "ascend" if device.type == "npu" else current_target()
    if interpreting() or target is None:
        return INTERPRETER_CORES
    if target == "cuda":
        return int(torch.cuda.get_device_properties(device.index or 0).multi_processor_count)
    from triton.runtime import driver

    return int(driver.active.utils.get_device_properties(device.index or 0)["num_aicore"])


def _scratch(size: int, alignment: int, stream: Any) -> torch.Tensor:
    return torch.empty(size, dtype=torch.int8, device="cuda")


def ensure_descriptor_scratch(device: torch.device) -> None:
    """Device-side tensor descriptors need global scratch on CUDA (triton >= 3.4 asks
    triton.set_allocator for it); Ascend and the compile tiers allocate none."""
    import triton

    if device.type == "cuda" and hasattr(triton, "set_allocator"):
        triton.set_allocator(_scratch)


def configs_for_target(cuda: list, ascend: list, interpret: list) -> list:
    """The autotune list for the backend this process runs for (the plugin sets it before import).

    Hopper's fast tiles overflow Ascend's 192 KB unified buffer, and the interpreter cannot time
    configs, so each gets its own list; outside a parity run the CUDA list applies."""
    if interpreting():
        return interpret
    return ascend if current_target() == "ascend" else cuda


# Seen here with triton-ascend 3.2.0 and LLVM/MLIR 19: the ascend-lowered tier's x86 build of a kernel
# that uses tensor descriptors segfaults the process (bishengir on ascend-compile takes the same kernels).
LOWERED_DESCRIPTOR_CRASH = ("ascend-lowered: running triton-adapter's tensor-descriptor lowering on x86 segfaults "
                            "the process (triton-ascend 3.2.0, LLVM/MLIR 19), so these cases are skipped there; "
                            "ascend-compile records this kernel through bishengir")


def descriptors_unavailable() -> str | None:
    """A spec's `unavailable` for kernels built on tl.make_tensor_descriptor: why they cannot run here.

    Upstream triton added it in 3.3 as _experimental_make_tensor_descriptor and named it
    make_tensor_descriptor in 3.4; triton-ascend 3.2.0 has it. On ascend-lowered it crashes."""
    import triton.language as tl

    from parity import current_backend

    if current_backend() == "ascend-lowered":
        return LOWERED_DESCRIPTOR_CRASH
    if not hasattr(tl, "make_tensor_descriptor"):
        import triton

        return (f"triton {triton.__version__} has no tl.make_tensor_descriptor (upstream names it so from 3.4; "
                "3.3 spells it _experimental_make_tensor_descriptor): pip install 'triton>=3.4'")
    return None


def refuse_without_descriptors() -> None:
    """Called by such a kernel's launcher: callers that bypass `unavailable` (run_case directly) get a
    skip (an error marked `parity_skip`) instead of a segfault or a misleading AttributeError."""
    reason = descriptors_unavailable()
    if reason:
        exc = RuntimeError(reason)
        exc.parity_skip = True  # type: ignore[attr-defined]
        raise exc
