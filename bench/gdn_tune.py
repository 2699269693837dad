"""Sweep a wide config grid for each autotuned GDN kernel and print every config's time.

A tuning aid, not a test: it widens each kernel's autotune list for one run, lets the
Autotuner time them all at the benchmark shape, and prints them fastest first, so the
shipped lists in kernels/gdn/ can be chosen from measurements. Needs a CUDA GPU.

    python bench/gdn_tune.py                        # B=1, T=65536, H=32, K=V=128, BT=64, bf16
    python bench/gdn_tune.py --kernels kkt,chunk_h --T 16384
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def grids() -> dict[str, tuple[str, str, list[dict[str, Any]]]]:
    """name -> (module, kernel attribute, configs as dicts of meta + num_warps/num_stages)."""
    def grid(**axes: tuple[Any, ...]) -> list[dict[str, Any]]:
        names = list(axes)
        return [dict(zip(names, vals, strict=True)) for vals in itertools.product(*axes.values())]

    return {
        "kkt": ("kernels.gdn.kkt", "chunk_scaled_dot_kkt_kernel",
                grid(BK=(64, 128), num_warps=(2, 4, 8), num_stages=(1, 2, 3))),
        "solve_tril": ("kernels.gdn.solve_tril", "solve_tril_kernel",
                       grid(num_warps=(1, 2, 4, 8), num_stages=(1, 2, 3))),
        "recompute_w_u": ("kernels.gdn.wy", "recompute_w_u_kernel",
                          grid(num_warps=(2, 4, 8), num_stages=(1, 2, 3))),
        "chunk_h": ("kernels.gdn.chunk_h", "chunk_fwd_h_kernel",
                    grid(BV=(16, 32, 64), num_warps=(2, 4, 8), num_stages=(1, 2, 3))),
        "chunk_o": ("kernels.gdn.chunk_o", "chunk_fwd_o_kernel",
                    grid(BK=(64, 128), BV=(64, 128), num_warps=(4, 8), num_stages=(2, 3))),
    }


def calls(a: argparse.Namespace) -> dict[str, Callable[[], Any]]:
    from bench import gdn_perf

    shape = gdn_perf.parse_args([f"--B={a.B}", f"--T={a.T}", f"--H={a.H}", f"--K={a.K}", f"--V={a.V}",
                                 f"--BT={a.BT}", f"--dtype={a.dtype}", "--no-baselines"])
    runs = gdn_perf.triton_runs(gdn_perf.make_inputs(shape), shape)
    return {"kkt": runs["kkt (g)"], "solve_tril": runs["solve_tril"], "recompute_w_u": runs["recompute_w_u"],
            "chunk_h": runs["chunk_fwd_h"], "chunk_o": runs["chunk_fwd_o"]}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("B", 1), ("T", 65536), ("H", 32), ("K", 128), ("V", 128), ("BT", 64)):
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"))
    p.add_argument("--kernels", default=",".join(grids()), help=f"subset of {', '.join(grids())}")
    p.add_argument("--top", type=int, default=8, help="rows to print per kernel")
    a = p.parse_args(argv)
    import importlib

    import torch
    import triton

    from parity.run.autotune_pin import autotuners
    from parity.spec.inputs import unfilled

    if not torch.cuda.is_available():
        print("gdn_tune needs an NVIDIA GPU (torch.cuda.is_available() is False).", file=sys.stderr)
        return 2
    wanted = [k.strip() for k in a.kernels.split(",") if k.strip()]
    unknown = sorted(set(wanted) - set(grids()))
    if unknown:
        p.error(f"unknown kernel(s) {unknown}; valid: {', '.join(grids())}")
    fns = calls(a)
    for name in wanted:
        module, attr, grid = grids()[name]
        (tuner,) = autotuners([getattr(importlib.import_module(module), attr)])
        shipped = [str(c) for c in tuner.configs]
        tuner.configs = [triton.Config({k: v for k, v in g.items() if k not in ("num_warps", "num_stages")},
                                       num_warps=g["num_warps"], num_stages=g["num_stages"]) for g in grid]
        tuner.cache.clear()
        with unfilled():
            fns[name]()
        torch.cuda.synchronize()
        timings = sorted(((t[0] if isinstance(t, list) else t, str(c)) for c, t in tuner.configs_timings.items()),
                         key=lambda x: x[0])
        print(f"\n{name}: {len(grid)} configs at B={a.B} T={a.T} H={a.H} K={a.K} V={a.V} BT={a.BT} {a.dtype}")
        for ms, cfg in timings[:a.top]:
            mark = "  (shipped)" if cfg in shipped else ""
            print(f"  {ms:8.4f} ms  {cfg}{mark}")
        for ms, cfg in timings:
            if cfg in shipped and (ms, cfg) not in timings[:a.top]:
                print(f"  {ms:8.4f} ms  {cfg}  (shipped)")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
