"""fp64 references for the Gated DeltaNet chunk forward (https://arxiv.org/abs/2412.06464, chunk form).

Plain torch on the CPU. Layout [B, T, H, ...]; varlen is B = 1 with `cu_seqlens`
([N+1] offsets), and every chunk restarts at its sequence's start. Each function
walks the sequences one by one, so empty sequences simply contribute nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import torch

Tensor = torch.Tensor


def sequences(batch: int, length: int, cu_seqlens: Tensor | None) -> Iterator[tuple[int, int, int]]:
    """(batch row, first token, end token) of every sequence, empty ones included."""
    if cu_seqlens is None:
        for b in range(batch):
            yield b, 0, length
        return
    offsets = [int(x) for x in cu_seqlens.tolist()]
    for bos, eos in itertools.pairwise(offsets):
        yield 0, bos, eos


def chunks(bos: int, eos: int, chunk_size: int) -> Iterator[tuple[int, int]]:
    """[start, end) of each chunk of one sequence; the last one may be ragged."""
    for start in range(bos, eos, chunk_size):
        yield start, min(start + chunk_size, eos)


def n_chunks(cu_seqlens: Tensor | None, batch: int, length: int, chunk_size: int) -> int:
    return sum(-(-(e - s) // chunk_size) for _, s, e in sequences(batch, length, cu_seqlens))


def chunk_local_cumsum(g: Tensor, chunk_size: int, scale: float | None = None,
                       cu_seqlens: Tensor | None = None) -> Tensor:
    """Inclusive cumsum of g [B, T, H] inside each chunk, times `scale` when given."""
    out = torch.zeros_like(g)
    for b, bos, eos in sequences(g.shape[0], g.shape[1], cu_seqlens):
        for s, e in chunks(bos, eos, chunk_size):
            out[b, s:e] = g[b, s:e].cumsum(0)
    return out * scale if scale is not None else out


def _decay(g_c: Tensor | None, rows: slice, cols: slice, b: int) -> Tensor | float:
    """exp(g_i - g_j) as [H, i, j], or 1 without gates."""
    if g_c is None:
        return 1.0
    gi, gj = g_c[b, rows].T, g_c[b, cols].T  # [H, i], [H, j]
    return torch.exp(gi[:, :, None] - gj[:, None, :])


def chunk_scaled_dot_kkt(k: Tensor, beta: Tensor, g_cumsum: Tensor | None, chunk_size: int,
                         cu_seqlens: Tensor | None = None) -> Tensor:
    """A[i, j] = β_i (k_i·k_j) exp(g_i - g_j) for i > j in the chunk, else 0; [B, T, H, BT]."""
    B, T, H, _ = k.shape
    A = torch.zeros(B, T, H, chunk_size, dtype=k.dtype)
    for b, bos, eos in sequences(B, T, cu_seqlens):
        for s, e in chunks(bos, eos, chunk_size):
            n = e - s
            kc = k[b, s:e].transpose(0, 1)  # [H, n, K]
            a = kc @ kc.transpose(1, 2) * beta[b, s:e].T[:, :, None] * _decay(g_cumsum, slice(s, e), slice(s, e), b)
            a = torch.tril(a, diagonal=-1)
            A[b, s:e, :, :n] = a.permute(1, 0, 2)
    return A


def solve_tril(A: Tensor, chunk_size: int, cu_seqlens: Tensor | None = None) -> Tensor:
    """(I + A)^-1 per chunk, A strictly lower [B, T, H, BT]; columns past the chunk stay 0."""
    B, T, H, _ = A.shape
    Ai = torch.zeros_like(A)
    for b, bos, eos in sequences(B, T, cu_seqlens):
        for s, e in chunks(bos, eos, chunk_size):
            n = e - s
            L = torch.tril(A[b, s:e, :, :n].permute(1, 0, 2), diagonal=-1)  # [H, n, n]
            eye = torch.eye(n, dtype=A.dtype).expand(H, n, n)
            inv = torch.linalg.solve_triangular(eye + L, eye, upper=False, unitriangular=True)
            Ai[b, s:e, :, :n] = inv.permute(1, 0, 2)
    return Ai


def recompute_w_u(k: Tensor, v: Tensor, beta: Tensor, Ai: Tensor, g_cumsum: Tensor | None, chunk_size: int,
                  cu_seqlens: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """u = Ai·(β ⊙ v), w = Ai·(β ⊙ exp(g) ⊙ k), chunk by chunk."""
    B, T, _, _ = k.shape
    w, u = torch.zeros_like(k), torch.zeros_like(v)
    for b, bos, eos in sequences(B, T, cu_seqlens):
        for s, e in chunks(bos, eos, chunk_size):
            n = e - s
            a = Ai[b, s:e, :, :n].transpose(0, 1)  # [H, n, n]
            scale_k = beta[b, s:e] * (torch.exp(g_cumsum[b, s:e]) if g_cumsum is not None else 1.0)  # [n, H]
            u[b, s:e] = (a @ (v[b, s:e] * beta[b, s:e, :, None]).transpose(0, 1)).transpose(0, 1)
            w[b, s:e] = (a @ (k[b, s:e] * scale_k[:, :, None]).transpose(0, 1)).transpose(0, 1)
    return w, u


def chunk_fwd_h(k: Tensor, w: Tensor, u: Tensor, g_cumsum: Tensor | None, h0: Tensor | None, chunk_size: int,
                cu_seqlens: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Per-chunk states h [B, NT, H, K, V] (the state entering each chunk), v_new, and the final state."""
    B, T, H, K = k.shape
    V = u.shape[-1]
    n_seq = B if cu_seqlens is None else len(cu_seqlens) - 1
    nt_per_b = -(-T // chunk_size)
    nt = nt_per_b if cu_seqlens is None else n_chunks(cu_seqlens, B, T, chunk_size)
    h = torch.zeros(B, nt, H, K, V, dtype=k.dtype)
    v_new = torch.zeros_like(u)
    ht = torch.zeros(n_seq, H, K, V, dtype=k.dtype)
    i_c = 0
    for i_n, (b, bos, eos) in enumerate(sequences(B, T, cu_seqlens)):
        if cu_seqlens is None:
            i_c = 0
        state = h0[i_n].clone() if h0 is not None else torch.zeros(H, K, V, dtype=k.dtype)
        for s, e in chunks(bos, eos, chunk_size):
            h[b, i_c] = state
            kc, wc = k[b, s:e].transpose(0, 1), w[b, s:e].transpose(0, 1)  # [H, n, K]
            vn = u[b, s:e].transpose(0, 1) - wc @ state  # [H, n, V]
            v_new[b, s:e] = vn.transpose(0, 1)
            if g_cumsum is not None:
                g_last = g_cumsum[b, e - 1]  # [H]
                vn = vn * torch.exp(g_last[None, :] - g_cumsum[b, s:e]).T[:, :, None]
                state = state * torch.exp(g_last)[:, None, None]
            state = state + kc.transpose(1, 2) @ vn
            i_c += 1
        ht[i_n] = state
    return h, v_new, ht


def chunk_fwd_o(q: Tensor, k: Tensor, v_new: Tensor, h: Tensor, g_cumsum: Tensor | None, scale: float,
                chunk_size: int, cu_seqlens: Tensor | None = None) -> Tensor:
    """o_i = scale·[exp(g_i) q_i·H_c + Σ_{j≤i} (q_i·k_j) exp(g_i - g_j) v_new_j] (inclusive mask)."""
    B, T, _, _ = q.shape
    o = torch.zeros_like(v_new)
    i_c = 0
    for b, bos, eos in sequences(B, T, cu_seqlens):
        if cu_seqlens is None:
            i_c = 0
        for s, e in chunks(bos, eos, chunk_size):
            qc, kc, vc = (x[b, s:e].transpose(0, 1) for x in (q, k, v_new))  # [H, n, *]
            inter = qc @ h[b, i_c]  # [H, n, V]
            if g_cumsum is not None:
                inter = inter * torch.exp(g_cumsum[b, s:e]).T[:, :, None]
            att = torch.tril(qc @ kc.transpose(1, 2) * _decay(g_cumsum, slice(s, e), slice(s, e), b))
            o[b, s:e] = (scale * (inter + att @ vc)).transpose(0, 1)
            i_c += 1
    return o


def recurrent_gated_delta_rule(q: Tensor, k: Tensor, v: Tensor, g: Tensor | None, beta: Tensor, scale: float,
                               h0: Tensor | None = None,
                               cu_seqlens: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """The token-by-token oracle (the gated delta rule): returns o [B, T, H, V] and the final states [N, H, K, V].

    S ← exp(g_t)·S;  v′ = β_t (v_t − Sᵀk_t);  S ← S + k_t v′ᵀ;  o_t = Sᵀ(scale·q_t).
    """
    B, T, H, K = k.shape
    V = v.shape[-1]
    o = torch.zeros(B, T, H, V, dtype=q.dtype)
    states = []
    for i_n, (b, bos, eos) in enumerate(sequences(B, T, cu_seqlens)):
        S = h0[i_n].clone() if h0 is not None else torch.zeros(H, K, V, dtype=q.dtype)  # [H, K, V]
        for t in range(bos, eos):
            if g is not None:
                S = S * torch.exp(g[b, t])[:, None, None]
            kt = k[b, t]  # [H, K]
            v_prime = beta[b, t][:, None] * (v[b, t] - torch.einsum("hkv,hk->hv", S, kt))
            S = S + kt[:, :, None] * v_prime[:, None, :]
            o[b, t] = torch.einsum("hkv,hk->hv", S, scale * q[b, t])
        states.append(S)
    return o, torch.stack(states)


def chunk_gated_delta_rule(q: Tensor, k: Tensor, v: Tensor, g: Tensor | None, beta: Tensor, scale: float,
                           h0: Tensor | None, chunk_size: int,
                           cu_seqlens: Tensor | None = None, until: str = "o") -> dict[str, Tensor]:
    """The chunked pipeline in fp64, step by step; every intermediate, for building realistic inputs.

    `until` is the last step whose outputs are needed, of PIPELINE_STEPS; the steps after it are skipped
    (an input builder that needs w and u need not run the state recurrence and o)."""
    if until not in PIPELINE_STEPS:
        raise ValueError(f"until={until!r}: one of {PIPELINE_STEPS}")
    stop = PIPELINE_STEPS.index(until)
    g_c = chunk_local_cumsum(g, chunk_size, cu_seqlens=cu_seqlens) if g is not None else None
    out: dict[str, Any] = {"g_cumsum": g_c}
    out["A"] = chunk_scaled_dot_kkt(k, beta, g_c, chunk_size, cu_seqlens)
    if stop >= 1:
        out["Ai"] = solve_tril(out["A"], chunk_size, cu_seqlens)
    if stop >= 2:
        out["w"], out["u"] = recompute_w_u(k, v, beta, out["Ai"], g_c, chunk_size, cu_seqlens)
    if stop >= 3:
        out["h"], out["v_new"], out["ht"] = chunk_fwd_h(k, out["w"], out["u"], g_c, h0, chunk_size, cu_seqlens)
    if stop >= 4:
        out["o"] = chunk_fwd_o(q, k, out["v_new"], out["h"], g_c, scale, chunk_size, cu_seqlens)
    return out


# the steps of chunk_gated_delta_rule, each named by its first output
PIPELINE_STEPS = ("A", "Ai", "w", "h", "o")
