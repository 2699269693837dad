"""Four correct kernels a newcomer would write, run once each on the GPU (issue 49), for `parity record`:

    parity record --out B -- python3 bench/record_harness/correct_kernels.py

- a seeded dropout with tl.rand (its random stream is the backend's own);
- a column sum of a [M, N] matrix whose programs add their partials into shared rows under a spin lock
  (tl.atomic_cas / tl.atomic_xchg), as layer-norm backward kernels accumulate dw;
- an fp32 sum of 2^20 elements with tl.atomic_add of block partials (order free on a GPU);
- an fp32 matmul whose tl.dot keeps its default input_precision (TF32 on NVIDIA).
Each is checked against torch here and prints its largest difference; none of them is wrong.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def dropout_kernel(x, out, N, p, seed, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < N
    b_x = tl.load(x + o, mask=m, other=0.0)
    keep = tl.rand(seed, o) > p
    tl.store(out + o, tl.where(keep, b_x / (1 - p), 0.0), mask=m)


@triton.jit
def locked_colsum_kernel(x, acc, locks, M, N, ROWS_PER_PROGRAM: tl.constexpr, GROUPS: tl.constexpr,
                         BN: tl.constexpr):
    i = tl.program_id(0)
    o_n = tl.arange(0, BN)
    m_n = o_n < N
    b_part = tl.zeros([BN], dtype=tl.float32)
    for r in range(i * ROWS_PER_PROGRAM, (i + 1) * ROWS_PER_PROGRAM):
        b_part += tl.load(x + r * N + o_n, mask=m_n & (r < M), other=0.0)
    g = i % GROUPS
    lock = locks + g
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    b_acc = tl.load(acc + g * N + o_n, mask=m_n, other=0.0)
    tl.store(acc + g * N + o_n, b_acc + b_part, mask=m_n)
    tl.atomic_xchg(lock, 0)


@triton.jit
def atomic_sum_kernel(x, out, N, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(out, tl.sum(tl.load(x + o, mask=o < N, other=0.0), axis=0))


@triton.jit
def matmul_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    o_m = tl.program_id(0) * BM + tl.arange(0, BM)
    o_n = tl.program_id(1) * BN + tl.arange(0, BN)
    b_acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k in range(0, K, BK):
        o_k = k + tl.arange(0, BK)
        b_a = tl.load(a + o_m[:, None] * K + o_k[None, :], mask=(o_m[:, None] < M) & (o_k[None, :] < K), other=0.0)
        b_b = tl.load(b + o_k[:, None] * N + o_n[None, :], mask=(o_k[:, None] < K) & (o_n[None, :] < N), other=0.0)
        b_acc += tl.dot(b_a, b_b)
    tl.store(c + o_m[:, None] * N + o_n[None, :], b_acc, mask=(o_m[:, None] < M) & (o_n[None, :] < N))


def main() -> None:
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    gen = torch.Generator().manual_seed(0)

    x = torch.randn(10_000, generator=gen).to(dev)
    y = torch.full_like(x, float("nan"))
    dropout_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), 0.25, 1234, BLOCK=1024)
    kept = y != 0
    print(f"dropout: kept {kept.float().mean().item():.3f} (p=0.25), "
          f"max |y - x/0.75| where kept {(y[kept] - x[kept] / 0.75).abs().max().item():.3g}")

    m, n, groups = 4096, 96, 8
    x2 = torch.randn(m, n, generator=gen).to(dev)
    acc = torch.zeros(groups, n, device=dev)
    locks = torch.zeros(groups, dtype=torch.int32, device=dev)
    locked_colsum_kernel[(m // 32,)](x2, acc, locks, m, n, ROWS_PER_PROGRAM=32, GROUPS=groups, BN=128)
    print(f"locked colsum: max |err| {(acc.sum(0) - x2.sum(0)).abs().max().item():.3g}")

    x3 = torch.randn(1 << 20, generator=gen).to(dev)
    s = torch.zeros(1, device=dev)
    atomic_sum_kernel[(triton.cdiv(x3.numel(), 1024),)](x3, s, x3.numel(), BLOCK=1024)
    print(f"atomic sum: {s.item():.6g} vs {x3.double().sum().item():.6g}")

    a = torch.randn(128, 512, generator=gen).to(dev)
    b = torch.randn(512, 128, generator=gen).to(dev)
    c = torch.full((128, 128), float("nan"), device=dev)
    matmul_kernel[(2, 2)](a, b, c, 128, 128, 512, BM=64, BN=64, BK=32)
    ref = a.double() @ b.double()
    print(f"matmul (default input_precision): max rel err {((c - ref).abs() / ref.abs().max()).max().item():.3g}")


if __name__ == "__main__":
    main()
