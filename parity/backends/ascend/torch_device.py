"""ascend-compile's torch.npu: a minimal namespace that answers for the target Ascend arch.

torch_npu is not importable without CANN, so CPU torch has no `torch.npu`; libraries that
check `torch.npu.is_available()` or read the device name at import would take their CPU or
CUDA path. This gives them the arch's name and core counts (parity.backends.ascend.arch).
`install()` returns the function that undoes it.
"""

from __future__ import annotations

import types
from collections.abc import Callable

from parity.backends.ascend.arch import AscendArch
from parity.compile.torch_device import device_functions, properties
from parity.seams.device import present_torch_module

GIB = 1 << 30


def install(arch: AscendArch) -> Callable[[], None]:
    props = properties(name=arch.name, total_memory=64 * GIB, cube_core_num=arch.aic_cores,
                       vector_core_num=arch.aiv_cores, multi_processor_count=arch.aic_cores,
                       ub_size_bits=arch.ub_bits)
    npu = types.ModuleType("torch.npu", "parity's compile-only stand-in for torch_npu's torch.npu")
    for key, value in {**device_functions(arch.name, props), "is_bf16_supported": lambda: True}.items():
        setattr(npu, key, value)
    return present_torch_module("npu", npu)
