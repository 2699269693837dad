"""Ascend targets the ascend-compile tier can name, with the limits a kernel must respect.

Plain data, no triton import: the pytest option parser and the report read it too.
UB size: 1,572,864 bits, as bishengir-compile reports ("ub overflow, requires X bits while 1572864 bits
available"; https://github.com/triton-lang/triton-ascend/issues/302). Core counts: what triton-ascend's
driver reports per part (`driver.active.utils.get_device_properties(dev)`, num_aicore / num_vectorcore).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

UB_BITS_910B = 192 * 1024 * 8  # 192 KB unified buffer per core = 1,572,864 bits
# triton-ascend 3.2's launcher refuses a grid whose product exceeds this
MAX_GRID_BLOCKS = 65535


@dataclass(frozen=True)
class AscendArch:
    name: str  # as bishengir-compile's --target and GPUTarget("npu", name, 0) spell it
    aic_cores: int  # cube cores: size a 1-D grid of a tl.dot kernel to this
    aiv_cores: int  # vector cores: size a 1-D grid of a vector-only kernel to this
    ub_bits: int


ASCEND_ARCHS: dict[str, AscendArch] = {
    arch.name: arch
    for arch in (
        AscendArch("Ascend910B1", aic_cores=24, aiv_cores=48, ub_bits=UB_BITS_910B),
        AscendArch("Ascend910B2", aic_cores=24, aiv_cores=48, ub_bits=UB_BITS_910B),
        AscendArch("Ascend910B3", aic_cores=20, aiv_cores=40, ub_bits=UB_BITS_910B),
        AscendArch("Ascend910B4", aic_cores=20, aiv_cores=40, ub_bits=UB_BITS_910B),
    )
}
DEFAULT_ASCEND_ARCH = "Ascend910B3"


def parse_ascend_arch(value: str) -> str:
    """argparse type for --ascend-arch: an unknown name lists the valid ones."""
    if value not in ASCEND_ARCHS:
        raise argparse.ArgumentTypeError(f"unknown Ascend arch {value!r}; valid: {', '.join(ASCEND_ARCHS)}")
    return value
