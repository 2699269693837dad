"""fp64 references for the basics family. Inputs arrive as float64 CPU tensors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

Tensors = Mapping[str, Any]


def vector_add(inputs: Tensors, params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"] + inputs["y"]}


def block_ptr_tile(inputs: Tensors, params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]  # [B, T, H, K]
    if params["transposed"]:
        return {"yt": x.permute(0, 2, 3, 1).contiguous(), "rowsum": x.sum(-1)}  # yt: [B, H, K, T]
    return {"y": 2.0 * x, "rowsum": x.sum(-1)}


def block_ptr_col_check(inputs: Tensors, params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"y": 2.0 * inputs["x"]}


def tril_mask(inputs: Tensors, params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]  # [B, T, H, BT]; row i of a chunk is t % BT
    T, BT = x.shape[1], x.shape[3]
    i = (torch.arange(T) % BT)[:, None]
    j = torch.arange(BT)[None, :]
    keep = (i >= j) if params["inclusive"] else (i > j)
    return {"out": torch.where(keep[None, :, None, :], x, torch.zeros((), dtype=x.dtype))}


def softmax(inputs: Tensors, params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": torch.softmax(inputs["x"], dim=-1)}


def rmsnorm(inputs: Tensors, params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x, w = inputs["x"], inputs["w"]
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + params["eps"])
    return {"out": x * rstd * w}


def matmul(inputs: Tensors, params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"c": inputs["a"] @ inputs["b"].T}


def cumsum(inputs: Tensors, params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": torch.cumsum(inputs["x"], dim=-1)}


def row_gather(inputs: Tensors, params: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"][inputs["rows"].long()].to(torch.float64)}
