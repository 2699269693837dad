"""The GDN NPU port's ops against parity's own fp64 GDN references (reference/gdn.py).

The port shares fla's [B, T, H, ...] layout, varlen as B = 1 with `cu_seqlens`, and
natural-log gates (it uses tl.exp, not exp2), so each op is reference/gdn.py's function
with the spec's inputs and params unpacked. The math is the chunk form of Gated DeltaNet (https://arxiv.org/abs/2412.06464).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import torch

from reference import gdn

Params = Mapping[str, Any]


def sequences(inputs: Mapping[str, Any], batch: int, length: int) -> Iterator[tuple[int, int, int, int]]:
    """(sequence index, batch row, bos, eos) of every sequence; an empty one is listed too."""
    for n, (b, bos, eos) in enumerate(gdn.sequences(batch, length, inputs.get("cu_seqlens"))):
        yield n, b, bos, eos


def chunk_ranges(bos: int, eos: int, bt: int) -> list[tuple[int, int]]:
    return list(gdn.chunks(bos, eos, bt))


def cumsum(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"g": gdn.chunk_local_cumsum(inputs["g"], p["BT"], cu_seqlens=inputs.get("cu_seqlens"))}


def kkt(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """A[i, j] = beta_i (k_i . k_j) exp(g_i - g_j) for i > j inside a chunk; the rest zero."""
    return {"A": gdn.chunk_scaled_dot_kkt(inputs["k"], inputs["beta"], inputs["g"], p["BT"],
                                          inputs.get("cu_seqlens"))}


def solve_tril(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """(I + A)^-1 per chunk; the columns past a short last chunk stay zero."""
    return {"Ai": gdn.solve_tril(inputs["A"], p["BT"], inputs.get("cu_seqlens"))}


def recompute_w_u(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """u = Ai (beta * v), w = Ai (beta * exp(g) * k), chunk by chunk."""
    w, u = gdn.recompute_w_u(inputs["k"], inputs["v"], inputs["beta"], inputs["A"], inputs["g"], p["BT"],
                             inputs.get("cu_seqlens"))
    return {"w": w, "u": u}


def delta_h(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """The state entering each chunk, v_new = u - w H_c, and each sequence's final state."""
    h, v_new, ht = gdn.chunk_fwd_h(inputs["k"], inputs["w"], inputs["u"], inputs["g"], inputs["h0"], p["BT"],
                                   inputs.get("cu_seqlens"))
    return {"h": h, "v_new": v_new, "ht": ht}


def chunk_o(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """o_i = scale [exp(g_i) q_i H_c + sum_{j <= i} (q_i . k_j) exp(g_i - g_j) v_j] inside chunk c."""
    return {"o": gdn.chunk_fwd_o(inputs["q"], inputs["k"], inputs["v"], inputs["h"], inputs["g"], p["K"] ** -0.5,
                                 p["BT"], inputs.get("cu_seqlens"))}
