"""vllm-ascend's rotary embedding (`ops/triton/rope.py`, `rope_forward_triton`) at the shapes test_rope.py names.

Loaded as libraries/vllm_ascend.py loads its kernels (the same checkout, PARITY_VLLM_ASCEND, and stand-ins); a module
of its own so that neither grows past the layout's size limit. The reference is ours, in fp64.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from libraries.vllm_ascend import LIBRARY, _spec, kernels, op
from parity import randn
from parity.cases import by_level, product

__all__ = ["LIBRARY", "SPECS"]
Params = Mapping[str, Any]
ROPE = "vllm_ascend.ops.triton.rope"


def _rope_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """test_rotary_embedding_triton_kernel's tensors: cos and sin drawn from randn as there (not unit circle)."""
    t, half = p["T"], p["R"] // 2
    return {"sin": randn((t, half), p["dtype"], gen), "cos": randn((t, half), p["dtype"], gen),
            "q": randn((t, p["Hq"], p["D"]), p["dtype"], gen), "k": randn((t, p["Hk"], p["D"]), p["dtype"], gen)}


def _rope_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    q, k = inputs["q"].clone(), inputs["k"].clone()  # rotated in place
    q, k = op(f"{ROPE}:rope_forward_triton")(q, k, inputs["cos"], inputs["sin"], rope_dim=p["R"],
                                             is_neox_style=bool(p["neox"]))
    return {"q": q, "k": k}


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, r: int, neox: bool) -> torch.Tensor:
    rot, rest = x[..., :r], x[..., r:]
    if neox:  # halves: (x1, x2) -> (x1 c - x2 s, x2 c + x1 s)
        x1, x2 = rot[..., : r // 2], rot[..., r // 2:]
        c, s = cos[:, None, :], sin[:, None, :]
        out = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)
    else:  # interleaved pairs (GPT-J)
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        c, s = cos[:, None, :], sin[:, None, :]
        out = torch.stack([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1).flatten(-2)
    return torch.cat([out, rest], dim=-1)


def _rope_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    cos, sin, r, neox = inputs["cos"], inputs["sin"], p["R"], bool(p["neox"])
    return {"q": _rotate(inputs["q"], cos, sin, r, neox), "k": _rotate(inputs["k"], cos, sin, r, neox)}


def _cases(tokens: list[int]) -> list[Any]:
    return [c for d, r in ((64, 32), (128, 128)) for hq, hk in ((64, 1), (96, 8))
            for c in product(neox=[1, 0], T=tokens, Hq=[hq], Hk=[hk], D=[d], R=[r], dtype=["bf16", "fp16"])]


SPECS = [
    _spec("rope", kernels(f"{ROPE}:_triton_rope"), launch=_rope_launch, reference=_rope_ref, make_inputs=_rope_inputs,
          cases=by_level(product(neox=[1], T=[4], Hq=[64], Hk=[1], D=[64], R=[32], dtype=["bf16"]),
                         _cases([1, 4, 8, 16, 1024])),
          doc="test_rope.py::test_rotary_embedding_triton_kernel: q and k rotated over the first R of D columns, "
              "NeoX halves or GPT-J pairs, rows over min(T, 40) programs"),
]
