"""fp64 reference for attention. Inputs arrive as float64 CPU tensors in [B, T, H, D]."""

from __future__ import annotations

import torch


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, scale: float) -> torch.Tensor:
    """softmax(scale·QKᵀ + mask)·V per (batch, head); the causal mask keeps key j ≤ query i."""
    s = torch.einsum("bihd,bjhd->bhij", q, k) * scale
    if causal:
        T = q.shape[1]
        keep = torch.ones(T, T, dtype=torch.bool).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return torch.einsum("bhij,bjhd->bihd", torch.softmax(s, dim=-1), v)
