"""Faults the suite must survive: a hanging kernel, a process that dies, a sticky device error."""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec
from parity.cases import by_level, product
from tests import planted


@triton.jit
def spin_kernel(x, n):
    i = tl.load(x) * 0 + 1
    while i > 0:  # never false: the kernel hangs
        i = i + 1


def _spin(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    spin_kernel[(1,)](inputs["x"], n=1)
    return {"out": inputs["x"]}


def _die(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    os.kill(os.getpid(), signal.SIGSEGV)  # stands in for a compiler or driver that segfaults
    return {"out": inputs["x"]}


def _sticky(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    # the text torch raises after an out-of-bounds access has poisoned the CUDA context
    raise RuntimeError("CUDA error: an illegal memory access was encountered")


def _x(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": torch.ones(p["N"], dtype=torch.float32)}


def _fault(name: str, launch: Any) -> KernelSpec:
    return KernelSpec(name=name, family="faults", kernel=spin_kernel, launch=launch,
                      reference=lambda inputs, p: {"out": inputs["x"].clone()},
                      cases=by_level(product(N=[4], dtype=["fp32"])), make_inputs=_x)


SPECS = [_fault("fault_hang", _spin), _fault("fault_segfault", _die), _fault("fault_sticky", _sticky),
         planted.correct_add]
