"""Control kernels for the ascend-compile checker: each one must trip (or pass) a known check.

Imported only after the compile-only driver is installed (the Autotuner binds the active
driver's benchmarker when it is built).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity.spec import KernelSpec


@triton.jit
def matmul_fp16_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    i_m, i_n = tl.program_id(0), tl.program_id(1)
    o_m = i_m * BM + tl.arange(0, BM)
    o_n = i_n * BN + tl.arange(0, BN)
    o_k = tl.arange(0, BK)
    b_acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        b_a = tl.load(a + o_m[:, None] * K + (k0 + o_k)[None, :])  # [BM, BK]
        b_b = tl.load(b + (k0 + o_k)[:, None] * N + o_n[None, :])  # [BK, BN]
        b_acc = tl.dot(b_a, b_b, b_acc)
    tl.store(c + o_m[:, None] * N + o_n[None, :], b_acc.to(tl.float16))


@triton.jit
def add_one_kernel(x, out, n, BLOCK: tl.constexpr):
    o_x = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m_x = o_x < n
    tl.store(out + o_x, tl.load(x + o_x, mask=m_x) + 1.0, mask=m_x)


@triton.jit
def no_such_attribute(v):
    return v.no_such_attribute  # planted: a tensor has no such attribute


@triton.jit
def calls_a_broken_helper_kernel(x, out, n, BLOCK: tl.constexpr):
    o_x = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o_x, no_such_attribute(tl.load(x + o_x)))


add_one_tuned = triton.autotune(
    configs=[triton.Config({"BLOCK": 1024}), triton.Config({"BLOCK": 1 << 20})], key=["n"],
)(add_one_kernel)


def _matmul(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    a, tile = inputs["a"], p["tile"]
    size = a.shape[0]
    c = torch.empty_like(a)
    matmul_fp16_kernel[(size // tile, size // tile)](a, a, c, size, size, size, BM=tile, BN=tile, BK=tile)
    return {"c": c}


def _add_one(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    out = torch.empty_like(x)
    add_one_kernel[(p["grid"],)](x, out, x.numel(), BLOCK=p["block"])
    return {"out": out}


def _add_one_tuned(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    out = torch.empty_like(x)
    add_one_tuned[(1,)](x, out, x.numel())
    return {"out": out}


def _broken_helper(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    out = torch.empty_like(x)
    calls_a_broken_helper_kernel[(1,)](x, out, x.numel(), BLOCK=16)
    return {"out": out}


def _abort(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    os.abort()  # what a compiler assertion does to the process


def _hang(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    time.sleep(60)
    return {}


class CannotRunHere(RuntimeError):
    """What a replay raises for a launch it cannot rebuild on a tier (parity.record.replay.NotReplayable)."""

    parity_skip = True


def _not_runnable(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    _add_one(inputs, {"grid": 1, "block": 16})  # one kernel compiles, then the next launch cannot be rebuilt
    raise CannotRunHere("not replayable here: pointer table(s) ['t1'] hold addresses in no tensor the recording saw")


def _spec(name: str, kernel: Any, launch: Any) -> KernelSpec:
    return KernelSpec(name=name, family="ascend_controls", kernel=kernel, launch=launch,
                      reference=lambda inputs, p: {}, cases=lambda level: [], make_inputs=lambda p, gen: {})


MATMUL = _spec("ctl_matmul_fp16", matmul_fp16_kernel, _matmul)
ADD_ONE = _spec("ctl_add_one", add_one_kernel, _add_one)
ADD_ONE_TUNED = _spec("ctl_add_one_tuned", add_one_tuned, _add_one_tuned)
ABORTS = _spec("ctl_abort", add_one_kernel, _abort)
HANGS = _spec("ctl_hang", add_one_kernel, _hang)
BROKEN_HELPER = _spec("ctl_broken_helper", calls_a_broken_helper_kernel, _broken_helper)
NOT_RUNNABLE = _spec("ctl_not_runnable", add_one_kernel, _not_runnable)
