"""Control kernels for ascend-compile's performance advice: a persistent kernel with its core count written in,
and its twin that reads it from the grid. Imported only after the compile-only driver is installed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity.spec import KernelSpec


@triton.jit
def twenty_programs_kernel(x, out, n_tiles, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for i_tile in range(pid, n_tiles, 20):  # the planted bug: 20 programs, whatever the part has
        o = i_tile * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + o, tl.load(x + o) + 1)


@triton.jit
def all_programs_kernel(x, out, n_tiles, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for i_tile in range(pid, n_tiles, tl.num_programs(0)):
        o = i_tile * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + o, tl.load(x + o) + 1)


def _launch(kernel: Any, programs: Any) -> Any:
    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        x = inputs["x"]
        out = torch.empty_like(x)
        block = 1024
        grid = programs() if callable(programs) else programs
        kernel[(grid,)](x, out, x.numel() // block, BLOCK=block)
        return {"out": out}

    return launch


def _vector_cores() -> int:
    return triton.runtime.driver.active.utils.get_device_properties(0)["num_vectorcore"]


def _spec(name: str, kernel: Any, launch: Any) -> KernelSpec:
    return KernelSpec(name=name, family="ascend_controls", kernel=kernel, launch=launch,
                      reference=lambda inputs, p: {}, cases=lambda level: [], make_inputs=lambda p, gen: {})


TWENTY = _spec("ctl_twenty_programs", twenty_programs_kernel, _launch(twenty_programs_kernel, 20))
ALL = _spec("ctl_all_programs", all_programs_kernel, _launch(all_programs_kernel, _vector_cores))
