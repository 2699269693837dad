"""Time the kernels that issue 19 sets speed targets for, beside their baselines, in one run.

A benchmark script, not a test: it prints a table and never asserts. Needs a CUDA GPU
(the targets are H200 figures). Every figure comes from this run; nothing is quoted.

    python3 bench/perf_targets.py                     # everything, about 2 minutes on an H200
    python3 bench/perf_targets.py --only matmul,attention --json /tmp/perf_targets.json

Targets (issue 19): matmul bf16 8192^3 at >= 0.9x torch.matmul's speed (cuBLAS); flash attention
forward (B=4, T=8192, H=32, D=128, bf16, causal and not) at >= 1.0x SDPA's speed; GDN at
B=1, T=65536, H=32, K=V=128, BT=64: full chunk forward and kkt at <= 1.0x fla's time (fla when
installed: pip install fla-core==0.6.0). Each row's median comes from triton.testing.do_bench
after one untimed call that compiles and autotunes; a row that fails prints its error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GROUPS = ("matmul", "attention", "gdn")
DEVICE = "cuda"  # a dry run under TRITON_INTERPRET=1 sets "cpu"
Fn = Callable[[], Any]


@dataclass
class Row:
    group: str
    kernel: str
    ms: float | None = None
    tflops: float | None = None
    baseline: str = ""
    baseline_ms: float | None = None
    peer_ms: float | None = None  # the library the kernel family comes from (fla for GDN)
    peer_error: str | None = None
    target: str = ""
    verdict: str = ""
    error: str | None = None


def time_ms(fn: Fn | None, warmup_ms: int, rep_ms: int) -> tuple[float | None, str | None]:
    if fn is None:
        return None, None
    from triton.testing import do_bench

    from parity.spec.inputs import unfilled

    try:
        with unfilled():  # the NaN prefill of outputs is the test harness's cost, not the kernel's
            fn()
            return float(do_bench(fn, warmup=warmup_ms, rep=rep_ms)), None
    except Exception as exc:  # one broken row must not hide the others
        return None, "".join(traceback.format_exception_only(type(exc), exc)).strip().splitlines()[-1][:160]


def matmul_rows(n: int) -> list[tuple[str, Fn, str, Fn, Fn | None, float, str]]:
    import torch

    from kernels.basics.matmul import matmul
    from kernels.basics.matmul_persistent import matmul_persistent
    from kernels.basics.matmul_tma import matmul_tma

    gen = torch.Generator(device=DEVICE).manual_seed(0)
    a = torch.randn(n, n, device=DEVICE, generator=gen).to(torch.bfloat16)
    b = torch.randn(n, n, device=DEVICE, generator=gen).to(torch.bfloat16)
    cublas = lambda: a @ b.T  # noqa: E731  B is [N, K], as the kernels take it
    flops = 2.0 * n**3
    target = "speed >= 0.9x cuBLAS"
    return [(f"matmul {n}^3 bf16", lambda: matmul(a, b), "torch.matmul", cublas, None, flops, target),
            (f"matmul_persistent {n}^3", lambda: matmul_persistent(a, b), "torch.matmul", cublas, None, flops, target),
            (f"matmul_tma {n}^3", lambda: matmul_tma(a, b), "torch.matmul", cublas, None, flops, target)]


def attention_rows(B: int, T: int, H: int, D: int) -> list[tuple[str, Fn, str, Fn, Fn | None, float, str]]:
    import torch
    import torch.nn.functional as F

    from kernels.attention.flash import flash_attention_fwd
    from kernels.attention.flash_tma import flash_attention_tma

    gen = torch.Generator(device=DEVICE).manual_seed(0)
    q, k, v = (torch.randn(B, T, H, D, device=DEVICE, generator=gen).to(torch.bfloat16) for _ in range(3))
    rows = []
    for causal in (False, True):
        sdpa = lambda c=causal: F.scaled_dot_product_attention(  # noqa: E731  [B, H, T, D] views of [B, T, H, D]
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=c)
        flops = 4.0 * B * H * T * T * D * (0.5 if causal else 1.0)
        tag = f"B={B} T={T} H={H} D={D} causal={int(causal)}"
        target = "speed >= 1.0x SDPA"
        rows += [(f"flash per_block {tag}", lambda c=causal: flash_attention_fwd(q, k, v, c), "SDPA", sdpa, None,
                  flops, target),
                 (f"flash persistent {tag}", lambda c=causal: flash_attention_fwd(q, k, v, c, grid="persistent"),
                  "SDPA", sdpa, None, flops, target),
                 (f"flash_tma {tag}", lambda c=causal: flash_attention_tma(q, k, v, c), "SDPA", sdpa, None, flops,
                  target)]
    return rows


def _fla(path: str) -> Any:
    """An fla function by 'module:name', or None when fla is not installed."""
    import importlib

    module, name = path.split(":")
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        return None


def gdn_rows(T: int, H: int, K: int, BT: int) -> list[tuple[str, Fn, str, Fn | None, Fn | None, float, str]]:
    import torch
    import torch.nn.functional as F

    from kernels.gdn.chunk import chunk_gated_delta_rule_fwd
    from kernels.gdn.chunk_h import chunk_fwd_h
    from kernels.gdn.chunk_o import chunk_fwd_o
    from kernels.gdn.cumsum import chunk_local_cumsum
    from kernels.gdn.kkt import chunk_scaled_dot_kkt
    from kernels.gdn.solve_tril import solve_tril
    from kernels.gdn.wy import recompute_w_u

    gen = torch.Generator(device=DEVICE).manual_seed(0)
    shape = (1, T, H, K)
    q, k = (F.normalize(torch.randn(shape, device=DEVICE, generator=gen), dim=-1).to(torch.bfloat16)
            for _ in range(2))
    v = torch.randn(shape, device=DEVICE, generator=gen).to(torch.bfloat16)
    beta = torch.sigmoid(torch.randn(1, T, H, device=DEVICE, generator=gen)).to(torch.bfloat16)
    g = F.logsigmoid(torch.randn(1, T, H, device=DEVICE, generator=gen))
    h0 = torch.randn(1, H, K, K, device=DEVICE, generator=gen)
    scale = K**-0.5
    g_c = chunk_local_cumsum(g, BT)
    A = chunk_scaled_dot_kkt(k, beta, g_c, BT)
    Ai = solve_tril(A, output_dtype=k.dtype)
    w, u = recompute_w_u(k, v, beta, Ai, g_c)
    h, v_new, _ = chunk_fwd_h(k, w, u, g_c, h0, True, BT)

    # fla's own entry points, fed the same tensors (fla works in the log2 domain, so its outputs differ;
    # the work, and so the time, is the same)
    fla_kkt = _fla("fla.ops.common.chunk_scaled_dot_kkt:chunk_scaled_dot_kkt_fwd")
    fla_tril = _fla("fla.ops.utils.solve_tril:solve_tril")
    fla_wu = _fla("fla.ops.gated_delta_rule.wy_fast:recompute_w_u_fwd")
    fla_h = _fla("fla.ops.common.chunk_delta_h:chunk_gated_delta_rule_fwd_h")
    fla_o = _fla("fla.ops.common.chunk_o:chunk_fwd_o")
    fla_gdn = _fla("fla.ops.gated_delta_rule:chunk_gated_delta_rule")
    peer = lambda f, call: (lambda: call(f)) if f is not None else None  # noqa: E731
    tag = f"T={T} H={H} K=V={K} BT={BT}"
    fwd_flops = 0.0  # GDN is judged against fla's time, not a flop rate
    return [
        (f"gdn kkt {tag}", lambda: chunk_scaled_dot_kkt(k, beta, g_c, BT), "", None,
         peer(fla_kkt, lambda f: f(k, g=g_c, beta=beta, chunk_size=BT)), fwd_flops, "time <= 1.0x fla"),
        (f"gdn solve_tril {tag}", lambda: solve_tril(A, output_dtype=k.dtype), "", None,
         peer(fla_tril, lambda f: f(A, output_dtype=k.dtype)), fwd_flops, "time <= 0.8x fla"),
        (f"gdn recompute_w_u {tag}", lambda: recompute_w_u(k, v, beta, Ai, g_c), "", None,
         peer(fla_wu, lambda f: f(k, v, beta, Ai, g=g_c)), fwd_flops, ""),
        (f"gdn chunk_fwd_h {tag}", lambda: chunk_fwd_h(k, w, u, g_c, h0, True, BT), "", None,
         peer(fla_h, lambda f: f(k, w, u, g=g_c, initial_state=h0, output_final_state=True, chunk_size=BT)),
         fwd_flops, ""),
        (f"gdn chunk_fwd_o {tag}", lambda: chunk_fwd_o(q, k, v_new, h, g_c, scale, BT), "", None,
         peer(fla_o, lambda f: f(q, k, v_new, h, g=g_c, scale=scale, chunk_size=BT)), fwd_flops, ""),
        (f"gdn chunk fwd (full) {tag}",
         lambda: chunk_gated_delta_rule_fwd(q, k, v, g, beta, scale, h0, True, None, BT), "", None,
         peer(fla_gdn, lambda f: f(q, k, v, g, beta, scale=scale, initial_state=h0, output_final_state=True)),
         fwd_flops, "time <= 1.0x fla"),
    ]


def verdict(row: Row) -> str:
    """Met or missed, with the figure; targets are printed, never asserted."""
    if row.ms is None or not row.target:
        return f"fla failed: {row.peer_error}" if row.peer_error else ""
    if row.target.startswith("speed"):
        if row.baseline_ms is None:
            return "no baseline"
        need = float(row.target.split(">=")[1].split("x")[0])
        speed = row.baseline_ms / row.ms
        return f"{'met' if speed >= need else 'MISSED'} ({speed:.2f}x)"
    if row.peer_ms is None:
        return f"fla failed: {row.peer_error}" if row.peer_error else "no peer (pip install fla-core==0.6.0)"
    need = float(row.target.split("<=")[1].split("x")[0])
    ratio = row.ms / row.peer_ms
    return f"{'met' if ratio <= need else 'MISSED'} ({ratio:.2f}x fla)"


def measure(a: argparse.Namespace) -> list[Row]:
    builders = {"matmul": lambda: matmul_rows(a.matmul_n),
                "attention": lambda: attention_rows(a.attn_B, a.attn_T, a.attn_H, a.attn_D),
                "gdn": lambda: gdn_rows(a.gdn_T, a.gdn_H, a.gdn_K, 64)}
    rows: list[Row] = []
    timed: dict[int, tuple[float | None, str | None]] = {}  # a baseline shared by several rows is timed once
    for group in a.only:
        t0 = time.perf_counter()
        try:
            specs = builders[group]()
        except Exception as exc:
            rows.append(Row(group, group, error=f"setup failed: {exc!r}"[:200]))
            continue
        for name, fn, base_name, base_fn, peer_fn, flops, target in specs:
            row = Row(group, name, baseline=base_name, target=target)
            row.ms, row.error = time_ms(fn, a.warmup_ms, a.rep_ms)
            if id(base_fn) not in timed:
                timed[id(base_fn)] = time_ms(base_fn, a.warmup_ms, a.rep_ms)
            row.baseline_ms = timed[id(base_fn)][0]
            row.peer_ms, row.peer_error = time_ms(peer_fn, a.warmup_ms, a.rep_ms)
            row.tflops = flops / row.ms / 1e9 if row.ms and flops else None
            row.verdict = verdict(row)
            rows.append(row)
            print(render([row], header=False), flush=True)
        print(f"  ({group}: {time.perf_counter() - t0:.0f} s with compiles and autotuning)", flush=True)
    return rows


def render(rows: list[Row], header: bool = True) -> str:
    fmt = lambda v, spec=".3f": "-" if v is None else format(v, spec)  # noqa: E731
    head = (f"{'kernel':44s} {'ms':>8s} {'TFLOP/s':>8s} {'baseline':>13s} {'base ms':>8s} {'fla ms':>8s}  "
            f"{'target':22s} verdict")
    lines = [head, "-" * len(head)] if header else []
    for r in rows:
        lines.append(f"{r.kernel:44s} {fmt(r.ms):>8s} {fmt(r.tflops, '.1f'):>8s} {r.baseline or '-':>13s} "
                     f"{fmt(r.baseline_ms):>8s} {fmt(r.peer_ms):>8s}  {r.target or '-':22s} "
                     f"{r.verdict if not r.error else 'ERROR: ' + r.error}")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(GROUPS),
                   type=lambda s: [g for g in s.split(",") if g in GROUPS] or p.error(f"--only takes {GROUPS}"),
                   help=f"comma-separated groups out of {', '.join(GROUPS)}")
    p.add_argument("--matmul-n", type=int, default=8192)
    p.add_argument("--attn-B", type=int, default=4)
    p.add_argument("--attn-T", type=int, default=8192)
    p.add_argument("--attn-H", type=int, default=32)
    p.add_argument("--attn-D", type=int, default=128)
    p.add_argument("--gdn-T", type=int, default=65536)
    p.add_argument("--gdn-H", type=int, default=32)
    p.add_argument("--gdn-K", type=int, default=128)
    p.add_argument("--warmup-ms", type=int, default=25)
    p.add_argument("--rep-ms", type=int, default=100)
    p.add_argument("--json", type=Path, default=None, help="also write the rows to this JSON file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("perf_targets needs an NVIDIA GPU: torch.cuda.is_available() is False. Run it on the GPU host.",
              file=sys.stderr)
        return 2
    import triton

    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    print(render([]))
    rows = measure(a)
    print("\nsummary\n" + render(rows))
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": [asdict(r) for r in rows]},
                                     indent=2) + "\n")
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
