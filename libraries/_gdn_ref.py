"""fp64 references of ours for the GDN chunk-forward ops, fixed-length and varlen alike.

Every op is written for one sequence (rows bos..eos of one batch row) and applied to each
sequence in turn, so a varlen batch (B = 1 with cu_seqlens) and a fixed-length one share the
code. Gates are natural-log decays (the GDN NPU port uses tl.exp, not exp2). The math follows
FACTS.md, "Gated DeltaNet chunk forward: the math".
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import torch

Params = Mapping[str, Any]


def sequences(inputs: Mapping[str, Any], batch: int, length: int) -> Iterator[tuple[int, int, int, int]]:
    """(sequence index, batch row, bos, eos) of every sequence; an empty one is listed too."""
    cu = inputs.get("cu_seqlens")
    if cu is None:
        for b in range(batch):
            yield b, b, 0, length
        return
    bounds = [int(x) for x in cu]
    for n, (bos, eos) in enumerate(itertools.pairwise(bounds)):
        yield n, 0, bos, eos


def chunk_ranges(bos: int, eos: int, bt: int) -> list[tuple[int, int]]:
    return [(s, min(s + bt, eos)) for s in range(bos, eos, bt)]


def cumsum(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    g = inputs["g"]
    out = torch.zeros_like(g)
    for _, b, bos, eos in sequences(inputs, g.shape[0], g.shape[1]):
        for s, e in chunk_ranges(bos, eos, p["BT"]):
            out[b, s:e] = g[b, s:e].cumsum(0)
    return {"g": out}


def kkt(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """A[i, j] = beta_i (k_i . k_j) exp(g_i - g_j) for i > j inside a chunk; the rest zero."""
    k, g, beta, bt = inputs["k"], inputs["g"], inputs["beta"], p["BT"]
    a = torch.zeros(*k.shape[:3], bt, dtype=k.dtype)
    for _, b, bos, eos in sequences(inputs, k.shape[0], k.shape[1]):
        for s, e in chunk_ranges(bos, eos, bt):
            n = e - s
            kc, gc = k[b, s:e].transpose(0, 1), g[b, s:e].transpose(0, 1)  # [H, n, K], [H, n]
            blk = kc @ kc.transpose(1, 2) * torch.exp(gc[:, :, None] - gc[:, None, :])
            blk = blk * beta[b, s:e].transpose(0, 1)[:, :, None]
            a[b, s:e, :, :n] = blk.tril(-1).transpose(0, 1)
    return {"A": a}


def solve_tril(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """(I + A)^-1 per chunk; the columns past a short last chunk stay zero."""
    a, bt = inputs["A"], p["BT"]
    out = torch.zeros_like(a)
    for _, b, bos, eos in sequences(inputs, a.shape[0], a.shape[1]):
        for s, e in chunk_ranges(bos, eos, bt):
            blk = a[b, s:e, :, : e - s].transpose(0, 1)  # [H, n, n]
            eye = torch.eye(e - s, dtype=a.dtype)
            out[b, s:e, :, : e - s] = torch.linalg.inv(eye + blk).transpose(0, 1)
    return {"Ai": out}


def recompute_w_u(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """u = Ai (beta * v), w = Ai (beta * exp(g) * k), chunk by chunk."""
    k, v, beta, g, ai = (inputs[n] for n in ("k", "v", "beta", "g", "A"))
    bt = p["BT"]
    w, u = torch.zeros_like(k), torch.zeros_like(v)
    for _, b, bos, eos in sequences(inputs, k.shape[0], k.shape[1]):
        for s, e in chunk_ranges(bos, eos, bt):
            blk = ai[b, s:e, :, : e - s].transpose(0, 1)  # [H, n, n]
            bc = beta[b, s:e].transpose(0, 1)[..., None]
            u[b, s:e] = (blk @ (bc * v[b, s:e].transpose(0, 1))).transpose(0, 1)
            kg = bc * g[b, s:e].transpose(0, 1).exp()[..., None] * k[b, s:e].transpose(0, 1)
            w[b, s:e] = (blk @ kg).transpose(0, 1)
    return {"w": w, "u": u}


def delta_h(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """h[c] = H_c; v_new = u - w H_c; H_{c+1} = exp(g_last) H_c + k^T (exp(g_last - g) * v_new)."""
    k, w, u, g, h0, bt = inputs["k"], inputs["w"], inputs["u"], inputs["g"], inputs["h0"], p["BT"]
    seqs = list(sequences(inputs, k.shape[0], k.shape[1]))
    n_chunks = [len(chunk_ranges(bos, eos, bt)) for _, _, bos, eos in seqs]
    per_row = max(n_chunks) if "cu_seqlens" not in inputs else sum(n_chunks)
    h = torch.zeros(k.shape[0], per_row, k.shape[2], k.shape[3], u.shape[3], dtype=k.dtype)
    v_new, ht = torch.zeros_like(u), torch.zeros_like(h0)
    offset = 0
    for (n, b, bos, eos), count in zip(seqs, n_chunks, strict=False):
        state = h0[n].clone()  # [H, K, V]
        for c, (s, e) in enumerate(chunk_ranges(bos, eos, bt)):
            h[b, offset + c] = state
            kc, wc, uc, gc = (x[b, s:e].transpose(0, 1) for x in (k, w, u, g))  # [H, n, .]
            vn = uc - wc @ state
            v_new[b, s:e] = vn.transpose(0, 1)
            g_last = gc[:, -1]
            decay = torch.exp(g_last[:, None] - gc)[..., None]
            state = torch.exp(g_last)[:, None, None] * state + kc.transpose(1, 2) @ (decay * vn)
        ht[n] = state
        offset += count if "cu_seqlens" in inputs else 0
    return {"h": h, "v_new": v_new, "ht": ht}


def chunk_o(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """o_i = scale [exp(g_i) q_i H_c + sum_{j <= i} (q_i . k_j) exp(g_i - g_j) v_j] inside chunk c."""
    q, k, v, h, g = (inputs[n] for n in ("q", "k", "v", "h", "g"))
    bt, scale = p["BT"], p["K"] ** -0.5
    o = torch.zeros_like(v)
    offset = 0
    for _, b, bos, eos in sequences(inputs, q.shape[0], q.shape[1]):
        ranges = chunk_ranges(bos, eos, bt)
        for c, (s, e) in enumerate(ranges):
            qc, kc, vc, gc = (x[b, s:e].transpose(0, 1) for x in (q, k, v, g))
            inter = (qc @ h[b, offset + c]) * gc.exp()[..., None]
            att = (qc @ kc.transpose(1, 2) * torch.exp(gc[:, :, None] - gc[:, None, :])).tril()
            o[b, s:e] = (scale * (inter + att @ vc)).transpose(0, 1)
        offset += len(ranges) if "cu_seqlens" in inputs else 0
    return {"o": o}
