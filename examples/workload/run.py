"""A workload as a user would have it: a script that launches Triton kernels at its own shapes.

    parity record --out reports/record-example -- python -m examples.workload.run
"""

import torch
import triton

from examples.user_kernels.l2norm import l2norm_rows
from examples.workload.kernels import row_sum_kernel, scale_kernel
from kernels.basics.vector_add import vector_add


def main(steps: int = 3, spec_shapes: bool = False) -> None:
    torch.manual_seed(0)
    if spec_shapes:  # the l2norm spec's quick cases, one launch each (bench/record_replay.py compares the two)
        for T in (1, 100):
            for D in (64, 100):
                for dtype in (torch.float16, torch.bfloat16, torch.float32):
                    l2norm_rows(torch.randn(T, D, dtype=dtype))
        return
    for step in range(steps):  # the same shapes each step: deduplication keeps the first 2 per key
        for T, dtype in ((100, torch.float32), (37, torch.float16)):
            l2norm_rows(torch.randn(T, 64, dtype=dtype))
        x = torch.randn(1000)
        vector_add(x, torch.randn(1000))
        out = torch.empty_like(x)
        scale_kernel[lambda m: (triton.cdiv(1000, m["BLOCK"]),)](x, out, 1000, 0.5 + step)
        rows = torch.randn(8, 50, dtype=torch.bfloat16)[:, :40]  # a strided view
        sums = torch.empty(8, dtype=torch.float32)
        row_sum_kernel[(8,)](rows, sums, 40, rows.stride(0), BN=64)
    print("workload done")


if __name__ == "__main__":
    import sys

    main(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 3, "--spec-shapes" in sys.argv)
