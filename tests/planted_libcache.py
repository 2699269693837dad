"""A library-like op that keeps its compiled kernel in a module-level dict, as libraries do.

The first call compiles through the JIT; every later call (same dtype) reuses the cached binary
and never reaches the JIT, so parity's clear_jit_caches cannot make it compile again. Without a
fork per case, a compile tier's second case records no compile ("the launcher compiled no kernel
for this case"); with one, every case starts from an empty dict. `LIBCACHE_CRASH` dies by SIGSEGV
inside its launcher: the forked case must come back as an error naming the signal.
"""

from __future__ import annotations

import os
import signal
from dataclasses import replace

import torch
import triton
import triton.language as tl

from parity import KernelSpec
from parity.cases import by_level, product

_COMPILED: dict[torch.dtype, object] = {}  # the library's own cache: parity cannot see or clear it


@triton.jit
def libcache_double_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, 2 * tl.load(x + o, mask=o < n), mask=o < n)


def double(x: torch.Tensor) -> torch.Tensor:
    """The library's public op: allocates on its input's device, compiles once per dtype."""
    if x.device.type not in ("cuda", "cpu"):
        raise ValueError(f"double: unsupported device {x.device}")
    out = torch.empty_like(x, device=x.device)
    if x.dtype not in _COMPILED:
        _COMPILED[x.dtype] = libcache_double_kernel.warmup(x, out, x.numel(), BLOCK=256, grid=(1,))
    # a real library would launch the cached binary here; on a compile tier nothing runs anyway
    return out


def _launch(inputs, p):
    return {"out": double(inputs["x"])}


def _crash(inputs, p):
    os.kill(os.getpid(), signal.SIGSEGV)
    return {}


LIBCACHE = KernelSpec(name="libcache_forked", family="planted", kernel=libcache_double_kernel, launch=_launch,
                      reference=lambda inputs, p: {"out": 2 * inputs["x"]},
                      cases=by_level(product(n=[256, 1000], dtype=["fp32"])),
                      make_inputs=lambda p, gen: {"x": torch.randn(p["n"], generator=gen)}, fork=True)
LIBCACHE_UNFORKED = replace(LIBCACHE, name="libcache_unforked", fork=False)
LIBCACHE_CRASH = replace(LIBCACHE, name="libcache_crash", launch=_crash, cases=by_level(product(n=[64])))

SPECS = [LIBCACHE, LIBCACHE_CRASH]
