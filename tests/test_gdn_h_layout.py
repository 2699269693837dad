"""The transposed-state chunk_fwd_h candidate (bench/gdn_h_layout.py) against the shipped kernel,
under TRITON_INTERPRET=1 in fp32: a GPU timing of it only matters if it computes the same thing."""

from __future__ import annotations

import pytest
import torch
import triton

from kernels.gdn.chunk_h import chunk_fwd_h_kernel
from tests import bench_module

gdn_h_layout = bench_module.load("gdn_h_layout")

B, T, H, K, V, BT, BV = 2, 100, 2, 32, 32, 16, 16


def inputs() -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, generator=gen)) * 0.1
    return {"k": 0.2 * torch.randn(B, T, H, K, generator=gen), "w": 0.05 * torch.randn(B, T, H, K, generator=gen),
            "u": torch.randn(B, T, H, V, generator=gen), "g": g.cumsum(1), "h0": torch.randn(B, H, K, V, generator=gen)}


def run(fn, x: dict[str, torch.Tensor], use_g: bool, shipped: bool) -> tuple[torch.Tensor, ...]:
    NT = triton.cdiv(T, BT)
    h, ht = torch.full((B, NT, H, K, V), float("nan")), torch.full((B, H, K, V), float("nan"))
    v_new = torch.full_like(x["u"], float("nan"))
    kw = dict(**x, h=h, ht=ht, v_new=v_new, T=T, H=H, K=K, V=V, BT=BT, BK=K, BV=BV, USE_G=use_g,
              USE_INITIAL_STATE=True, STORE_FINAL_STATE=True)
    if shipped:
        kw.update(cu_seqlens=None, chunk_offsets=None, IS_VARLEN=False)
    fn[(triton.cdiv(V, BV), B * H)](**kw)
    return h, ht, v_new


@pytest.mark.parametrize("use_g", [False, True])
def test_transposed_state_matches_the_shipped_kernel(use_g):
    x = inputs()
    shipped = run(chunk_fwd_h_kernel.fn.fn, x, use_g, shipped=True)
    candidate = run(gdn_h_layout.chunk_fwd_h_transposed, x, use_g, shipped=False)
    for a, b in zip(candidate, shipped, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


def test_the_comparison_sees_a_dropped_gate():
    x = inputs()
    shipped = run(chunk_fwd_h_kernel.fn.fn, x, True, shipped=True)
    candidate = run(gdn_h_layout.chunk_fwd_h_transposed, x, False, shipped=False)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(candidate[1], shipped[1], rtol=1e-5, atol=1e-5)
