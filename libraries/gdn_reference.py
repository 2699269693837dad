"""Gated DeltaNet in fp64, two ways: the token recurrence and the chunk form (arXiv 2412.06464).

The recurrence is reference/gdn.py's oracle. Both are plain torch and differentiable, so the backward
specs take their gradients by autograd. The chunk form gives the same values with one state update per
chunk, which keeps autograd's saved tensors small enough for T=1024 (the recurrence saves a [B, H, K, V]
state per token). tests/test_libraries.py checks that the two agree.
"""

from __future__ import annotations

import torch

from reference import gdn


def recurrent(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
              h0: torch.Tensor, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """o [B, T, H, V] and the final state [B, H, K, V]: parity's own token-by-token oracle."""
    return gdn.recurrent_gated_delta_rule(q, k, v, g, beta, scale, h0=h0)


def _split(x: torch.Tensor, bt: int) -> torch.Tensor:
    """[B, T, H, ...] -> [B, H, N, BT, ...]."""
    x = x.transpose(1, 2)
    return x.reshape(x.shape[0], x.shape[1], x.shape[2] // bt, bt, *x.shape[3:])


def chunked(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor, beta: torch.Tensor,
            h0: torch.Tensor, scale: float, bt: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    """As `recurrent`, one chunk of `bt` tokens at a time (T a multiple of bt)."""
    q, k, v, beta = _split(q, bt), _split(k, bt), _split(v, bt), _split(beta, bt)
    gam = _split(g, bt).cumsum(-1)  # [B, H, N, BT]: decay from the chunk start
    eye = torch.eye(bt, dtype=torch.bool, device=q.device)
    causal = torch.ones(bt, bt, dtype=torch.bool, device=q.device).tril()
    # exp(gam_i - gam_j) for j <= i; masked before exp, where gam_i - gam_j > 0 could overflow
    decay = (gam[..., :, None] - gam[..., None, :]).masked_fill(~causal, float("-inf")).exp()
    a = (beta[..., None] * (k @ k.transpose(-1, -2)) * decay).masked_fill(~causal | eye, 0.0)
    ident = torch.eye(bt, dtype=q.dtype, device=q.device).expand_as(a)
    a_inv = torch.linalg.solve_triangular(ident + a, ident, upper=False)  # (I + A)^-1, A strictly lower
    u = a_inv @ (beta[..., None] * v)
    w = a_inv @ (beta[..., None] * gam.exp()[..., None] * k)
    qk = (q @ k.transpose(-1, -2)) * decay
    s, outs = h0, []
    for n in range(q.shape[2]):
        v_new = u[:, :, n] - w[:, :, n] @ s
        outs.append(scale * (gam[:, :, n].exp()[..., None] * (q[:, :, n] @ s) + qk[:, :, n] @ v_new))
        last = gam[:, :, n, -1:]  # [B, H, 1]
        k_decayed = k[:, :, n] * (last - gam[:, :, n]).exp()[..., None]
        s = last.exp()[..., None] * s + k_decayed.transpose(-1, -2) @ v_new
    o = torch.stack(outs, 2)  # [B, H, N, BT, V]
    return o.reshape(o.shape[0], o.shape[1], -1, o.shape[-1]).transpose(1, 2), s
