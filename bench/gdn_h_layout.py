"""Candidate for chunk_fwd_h: the state kept transposed, timed against the shipped kernel.

A tuning aid, not a test, and not yet measured on a GPU. chunk_fwd_h is latency-bound: each
of its NT steps waits on the previous state. The shipped kernel keeps h [BK, BV] and feeds it
to tl.dot as the right operand, which on tensor cores goes through shared memory on every
step. Kept transposed, hᵀ [BV, BK] is the left operand of both products,
    v_newᵀ = uᵀ − hᵀ·wᵀ    and    hᵀ ← exp(g_last)·hᵀ + v_newᵀ·k,
so the state can stay in registers. The two agree to rounding under TRITON_INTERPRET=1 (fp32,
K=V=32); this script checks that again on the GPU and times both over a config grid.

    python bench/gdn_h_layout.py                    # B=1, T=65536, H=32, K=V=128, BT=64, bf16
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import triton
import triton.language as tl

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@triton.jit(do_not_specialize=["T"])
def chunk_fwd_h_transposed(k, w, u, g, h0, h, ht, v_new, T, H: tl.constexpr, K: tl.constexpr,
                           V: tl.constexpr, BT: tl.constexpr, BK: tl.constexpr, BV: tl.constexpr,
                           USE_G: tl.constexpr, USE_INITIAL_STATE: tl.constexpr,
                           STORE_FINAL_STATE: tl.constexpr):
    i_v, i_nh = tl.program_id(0), tl.program_id(1)
    i_n, i_h = i_nh // H, i_nh % H
    bos = i_n * T
    NT = tl.cdiv(T, BT)
    o_i = tl.arange(0, BT)
    b_h = tl.zeros([BV, BK], dtype=tl.float32)  # hᵀ
    if USE_INITIAL_STATE:
        p_h0 = tl.make_block_ptr(h0 + i_nh * K * V, (V, K), (1, V), (i_v * BV, 0), (BV, BK), (0, 1))
        b_h += tl.load(p_h0, boundary_check=(0, 1)).to(tl.float32)
    for i_t in range(NT):
        p_h = tl.make_block_ptr(h + ((i_n * NT + i_t) * H + i_h) * K * V, (V, K), (1, V), (i_v * BV, 0), (BV, BK),
                                (0, 1))
        tl.store(p_h, b_h.to(p_h.dtype.element_ty), boundary_check=(0, 1))
        p_w = tl.make_block_ptr(w + (bos * H + i_h) * K, (K, T), (1, H * K), (0, i_t * BT), (BK, BT), (0, 1))
        p_u = tl.make_block_ptr(u + (bos * H + i_h) * V, (V, T), (1, H * V), (i_v * BV, i_t * BT), (BV, BT), (0, 1))
        b_w = tl.load(p_w, boundary_check=(0, 1))  # wᵀ [BK, BT]
        b_v = tl.load(p_u, boundary_check=(0, 1)).to(tl.float32) - tl.dot(b_h.to(b_w.dtype), b_w)  # [BV, BT]
        p_vn = tl.make_block_ptr(v_new + (bos * H + i_h) * V, (V, T), (1, H * V), (i_v * BV, i_t * BT), (BV, BT),
                                 (0, 1))
        tl.store(p_vn, b_v.to(p_vn.dtype.element_ty), boundary_check=(0, 1))
        if USE_G:
            last = tl.minimum((i_t + 1) * BT, T) - 1
            b_g_last = tl.load(g + (bos + last) * H + i_h).to(tl.float32)
            p_g = tl.make_block_ptr(g + bos * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))
            b_g = tl.load(p_g, boundary_check=(0,)).to(tl.float32)
            b_v = b_v * tl.where(i_t * BT + o_i < T, tl.exp(b_g_last - b_g), 0.0)[None, :]
            b_h *= tl.exp(b_g_last)
        p_k = tl.make_block_ptr(k + (bos * H + i_h) * K, (T, K), (H * K, 1), (i_t * BT, 0), (BT, BK), (1, 0))
        b_k = tl.load(p_k, boundary_check=(0, 1))  # [BT, BK]
        b_h += tl.dot(b_v.to(b_k.dtype), b_k)
    if STORE_FINAL_STATE:
        p_ht = tl.make_block_ptr(ht + i_nh * K * V, (V, K), (1, V), (i_v * BV, 0), (BV, BK), (0, 1))
        tl.store(p_ht, b_h.to(p_ht.dtype.element_ty), boundary_check=(0, 1))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("B", 1), ("T", 65536), ("H", 32), ("K", 128), ("V", 128), ("BT", 64)):
        p.add_argument(f"--{name}", type=int, default=default)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    import torch
    import torch.nn.functional as F
    from triton.testing import do_bench

    from kernels.gdn.chunk_h import chunk_fwd_h_kernel

    a = parse_args(argv)
    if not torch.cuda.is_available():
        print("gdn_h_layout needs an NVIDIA GPU: torch.cuda.is_available() is False.", file=sys.stderr)
        return 2
    B, T, H, K, V, BT = a.B, a.T, a.H, a.K, a.V, a.BT
    dt, dev = torch.bfloat16, "cuda"
    gen = torch.Generator(device=dev).manual_seed(0)
    k = F.normalize(torch.randn(B, T, H, K, device=dev, generator=gen), dim=-1).to(dt)
    w = (0.05 * torch.randn(B, T, H, K, device=dev, generator=gen)).to(dt)
    u = (0.3 * torch.randn(B, T, H, V, device=dev, generator=gen)).to(dt)
    g = F.logsigmoid(torch.randn(B, T // BT, BT, H, device=dev, generator=gen)).cumsum(2).reshape(B, T, H)
    h0 = torch.randn(B, H, K, V, device=dev, generator=gen)
    NT = triton.cdiv(T, BT)
    shipped = chunk_fwd_h_kernel.fn.fn  # the JITFunction under the heuristics and the autotuner
    first: dict[str, tuple[Any, ...]] = {}
    rows = []

    def launch(fn: Callable[..., Any], name: str, BV: int, warps: int, stages: int) -> tuple[Any, ...]:
        h = torch.empty(B, NT, H, K, V, device=dev, dtype=dt)
        ht, vn = torch.empty(B, H, K, V, device=dev), torch.empty_like(u)
        kw = dict(k=k, w=w, u=u, g=g, h0=h0, h=h, ht=ht, v_new=vn, T=T, H=H, K=K, V=V, BT=BT, BK=K, BV=BV,
                  USE_G=True, USE_INITIAL_STATE=True, STORE_FINAL_STATE=True, num_warps=warps, num_stages=stages)
        if name == "shipped":
            kw.update(cu_seqlens=None, chunk_offsets=None, IS_VARLEN=False)
        grid = (triton.cdiv(V, BV), B * H)
        fn[grid](**kw)
        ms = do_bench(lambda: fn[grid](**kw), warmup=25, rep=100)
        return ms, h.float(), ht, vn.float()

    for (name, fn), BV, warps, stages in itertools.product(
            (("shipped", shipped), ("transposed", chunk_fwd_h_transposed)), (16, 32, 64), (2, 4, 8), (1, 2, 3, 4)):
        try:
            ms, *outs = launch(fn, name, BV, warps, stages)
        except Exception as exc:  # out of resources and the like: report and go on
            print(f"{name:10s} BV={BV:<3d} warps={warps} stages={stages}: {str(exc).splitlines()[0][:100]}")
            continue
        if name == "shipped":
            first.setdefault("shipped", tuple(outs))  # the reference: the first shipped config that ran
        diff = (max(float((x - y).abs().max() / y.abs().max().clamp_min(1e-12))
                    for x, y in zip(outs, first["shipped"], strict=True)) if "shipped" in first else float("nan"))
        rows.append((ms, name, BV, warps, stages, diff))
        print(f"{name:10s} BV={BV:<3d} warps={warps} stages={stages}: {ms:.3f} ms  max rel diff vs shipped "
              f"{diff:.1e}", flush=True)
    print("\nfastest 8:")
    for ms, name, BV, warps, stages, diff in sorted(rows, key=lambda r: r[0])[:8]:
        print(f"  {name:10s} BV={BV:<3d} warps={warps} stages={stages}: {ms:.3f} ms (rel diff {diff:.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
