"""What a cubin needs from an SM: registers and spills (via the cuobjdump triton bundles), and the
threads per block its register count allows. cuda-compile judges each compile by them.

n_spills is the stack frame and local memory per thread / 4, the figure triton's CUDA driver
reports (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES / 4).
"""

from __future__ import annotations

import re
import subprocess
import tempfile

from parity.backends.cuda.arch import CudaArch
from parity.seams.versions import nvidia_binary


def resource_usage(cubin: bytes, kernel: str) -> tuple[int | None, int | None]:
    """(registers, spills) of one kernel from its cubin, via the cuobjdump triton bundles."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
        fh.write(cubin)
        fh.flush()
        out = subprocess.run([nvidia_binary("cuobjdump") or "cuobjdump", "-res-usage", fh.name], capture_output=True,
                             text=True, check=False).stdout
    block = out.split(f"Function {kernel}:", 1)[-1] if f"Function {kernel}:" in out else out
    regs = re.search(r"REG:(\d+)", block)
    # spilled registers live in the stack frame; LOCAL holds local arrays
    local = [int(m) for m in re.findall(r"(?:STACK|LOCAL):(\d+)", block)]
    return (int(regs.group(1)) if regs else None, sum(local) // 4 if local else None)


def max_threads(arch: CudaArch, n_regs: int | None) -> int:
    """Threads per block the register file allows (registers are allocated per warp, by 256)."""
    if not n_regs:
        return arch.max_threads_per_block
    per_warp = -(-n_regs * 32 // 256) * 256
    return min(arch.max_threads_per_block, arch.registers_per_sm // per_warp * 32)
