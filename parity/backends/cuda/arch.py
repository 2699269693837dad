"""The SMs cuda-compile names as targets: the facts a compile-only driver and torch's stand-in report."""

from __future__ import annotations

import argparse
from dataclasses import dataclass


@dataclass(frozen=True)
class CudaArch:
    name: str
    max_shared_bytes: int  # per block, opt-in (CUDA C Programming Guide, compute capabilities table)
    sm_count: int  # of the named part; only informs triton.testing's roofline helpers
    registers_per_sm: int = 65536
    max_threads_per_block: int = 1024


CUDA_ARCHS: dict[int, CudaArch] = {
    80: CudaArch("sm_80 (A100)", 166912, 108),
    86: CudaArch("sm_86 (A10)", 101376, 72),
    89: CudaArch("sm_89 (L40)", 101376, 142),
    90: CudaArch("sm_90 (H100, H200)", 232448, 132),
}
DEFAULT_ARCH = 90


def parse_cuda_arch(value: str | int) -> int:
    """--cuda-arch: 90, sm_90 or 9.0; errors list the valid values."""
    text = str(value).strip().lower().removeprefix("sm_").removeprefix("sm").replace(".", "")
    valid = ", ".join(str(a) for a in CUDA_ARCHS)
    if not text.isdigit() or int(text) not in CUDA_ARCHS:
        raise argparse.ArgumentTypeError(f"unknown --cuda-arch {value!r}; valid: {valid} (e.g. --cuda-arch 80)")
    return int(text)
