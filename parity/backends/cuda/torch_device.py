"""cuda-compile's torch.cuda: answers for the target SM, so libraries take their sm_XX path.

Only the queries a library makes at import or dispatch change (name, capability, properties,
count, availability, the current device); tensors stay on the CPU and nothing launches.
`install()` returns the function that undoes it.
"""

from __future__ import annotations

from collections.abc import Callable

from parity.compile.torch_device import device_functions, patch, properties

# the part a library would see for each SM this tier targets (CudaArch names the same parts)
DEVICE_NAMES: dict[int, str] = {
    80: "NVIDIA A100-SXM4-80GB",
    86: "NVIDIA A10",
    89: "NVIDIA L40",
    90: "NVIDIA H100 80GB HBM3",
}
GIB = 1 << 30
TOTAL_MEMORY: dict[int, int] = {80: 80 * GIB, 86: 24 * GIB, 89: 48 * GIB, 90: 80 * GIB}


def install(sm: int, sm_count: int, max_shared_bytes: int, registers_per_sm: int) -> Callable[[], None]:
    import torch

    name = DEVICE_NAMES[sm]
    capability = (sm // 10, sm % 10)
    props = properties(name=name, major=capability[0], minor=capability[1], multi_processor_count=sm_count,
                       total_memory=TOTAL_MEMORY[sm], shared_memory_per_block=48 * 1024,
                       shared_memory_per_block_optin=max_shared_bytes, regs_per_multiprocessor=registers_per_sm,
                       max_threads_per_multi_processor=2048, warp_size=32, L2_cache_size=50 * 1024 * 1024,
                       is_integrated=False, is_multi_gpu_board=False)
    return patch(torch.cuda, device_functions(name, props, {
        "get_device_capability": lambda device=None: capability,
        "is_bf16_supported": lambda including_emulation=True: capability >= (8, 0),
    }))
