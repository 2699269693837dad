"""Planted production-envelope bugs, each with the exact size where it breaks, and a control safe to 1M tokens.

- env_grid_bh: a chunked kernel with grid (cdiv(T, 64), B*H), H=32: on Ascend the grid's product passes 65,535 at
  T = 131,009 (2,048 * 32 = 65,536 programs); CUDA's grid takes it to 1M;
- env_grid_y: grid (B, cdiv(T, 8)): CUDA's y limit (65,535) and Ascend's product both pass at T = 524,281;
- env_int32: rows of D = 4,096 at offset `row * D` in int32: x's last offset passes 2^31 - 1 at T = 524,289;
- env_storm: T as a tl.constexpr: a new compile at every length;
- env_safe: a persistent grid and int64 offsets: safe on both targets to 1M tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product

D_ROW = 4096


@triton.jit(do_not_specialize=["T"])
def env_grid_kernel(x, y, T, BT: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    o = i_bh * T + i_t * BT + tl.arange(0, BT)
    m = i_t * BT + tl.arange(0, BT) < T
    tl.store(y + o, tl.load(x + o, mask=m) * 2, mask=m)


@triton.jit(do_not_specialize=["T"])
def env_grid_y_kernel(x, y, T, BT: tl.constexpr):
    i_b, i_t = tl.program_id(0), tl.program_id(1)
    o = i_b * T + i_t * BT + tl.arange(0, BT)
    m = i_t * BT + tl.arange(0, BT) < T
    tl.store(y + o, tl.load(x + o, mask=m) * 2, mask=m)


@triton.jit(do_not_specialize=["T"])
def env_rows_kernel(x, y, T, D: tl.constexpr):
    # a persistent grid over rows; the row's offset is computed in int32 and wraps past 2^31 - 1
    for row in range(tl.program_id(0), T, tl.num_programs(0)):
        o = row * D + tl.arange(0, D)
        tl.store(y + o, tl.load(x + o) * 2)


@triton.jit(do_not_specialize=["T"])
def env_rows_wide_kernel(x, y, T, D: tl.constexpr):
    # the control: the same rows at an int64 offset
    for row in range(tl.program_id(0), T, tl.num_programs(0)):
        o = row.to(tl.int64) * D + tl.arange(0, D)
        tl.store(y + o, tl.load(x + o) * 2)


@triton.jit
def env_storm_kernel(x, y, T: tl.constexpr, BT: tl.constexpr):
    i_t = tl.program_id(0)
    o = i_t * BT + tl.arange(0, BT)
    tl.store(y + o, tl.load(x + o, mask=o < T) * 2, mask=o < T)


def _bh_inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["B"], p["H"], p["T"]), "fp32", gen)}


def _grid_bh(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, Any]:
    x = inputs["x"]
    y = nan_empty(x.shape, x.dtype, x.device)
    env_grid_kernel[(triton.cdiv(p["T"], 64), p["B"] * p["H"])](x, y, p["T"], BT=64)
    return {"y": y}


def _grid_y(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, Any]:
    x = inputs["x"]
    y = nan_empty(x.shape, x.dtype, x.device)
    env_grid_y_kernel[(p["B"] * p["H"], triton.cdiv(p["T"], 8))](x, y, p["T"], BT=8)
    return {"y": y}


def _row_inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["T"], D_ROW), "fp16", gen)}


def _rows(kernel: Any) -> Any:
    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, Any]:
        x = inputs["x"]
        y = nan_empty(x.shape, x.dtype, x.device)
        kernel[(min(p["T"], 1024),)](x, y, p["T"], D=D_ROW)
        return {"y": y}

    return launch


def _storm(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, Any]:
    x = inputs["x"]
    y = nan_empty(x.shape, x.dtype, x.device)
    env_storm_kernel[(triton.cdiv(p["T"], 64),)](x, y, T=p["T"], BT=64)
    return {"y": y}


def _ref(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, Any]:
    return {"y": inputs["x"] * 2}


def _spec(name: str, kernel: Any, launch: Any, make_inputs: Any, cases: Any) -> KernelSpec:
    return KernelSpec(name=name, family="planted", kernel=kernel, launch=launch, reference=_ref,
                      cases=by_level(cases), make_inputs=make_inputs, dynamic_args=("T",))


SPECS = [
    _spec("env_grid_bh", env_grid_kernel, _grid_bh, _bh_inputs, product(B=[1], H=[32], T=[100, 1000])),
    _spec("env_grid_y", env_grid_y_kernel, _grid_y, _bh_inputs, product(B=[1], H=[1], T=[100, 1000])),
    _spec("env_int32", env_rows_kernel, _rows(env_rows_kernel), _row_inputs, product(T=[3, 100])),
    _spec("env_storm", env_storm_kernel, _storm, lambda p, gen: {"x": randn((p["T"],), "fp32", gen)},
          product(T=[100, 1000])),
    _spec("env_safe", env_rows_wide_kernel, _rows(env_rows_wide_kernel), _row_inputs, product(T=[3, 100])),
]
