"""flash_attention_tma's fourth round of candidates beside SDPA, one GPU (issue 30: >= 1.0x SDPA's speed).

A benchmark script, not a test: it prints a table and writes the rows as JSON to --out; it never asserts.

    python3 bench/flash_attention_candidates.py --out $OUT/flash4.json --budget-s 150

Shape: B=4, T=8192, H=32, D=128, bf16 (the spec's perf cases), non-causal and causal. Timing:
triton.testing.do_bench (warmup 10 ms, rep 50 ms), first call outside the timed region. Every
candidate row carries its max abs difference to SDPA's output on the same inputs (above WRONG_ABS it
is marked WRONG). x SDPA = SDPA's default ms / ours. Families, in the order they run (no row starts
after --budget-s; a child process also gets a hard timeout):
- sdpa: torch's scaled_dot_product_attention by default and pinned to each backend
  (torch.nn.attention.sdpa_kernel: FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION); the table
  names the backend whose time matches the default's.
- base: the kernel pinned to the plain 128x128 tile (3 stages, 8 warps), in this process.
- poly: kernels/attention/flash_tma.py's CANDIDATE_CONFIGS (polynomial exp2 for a half or a quarter of
  the scores), in a child process: a compiler abort or a hang costs only its rows not yet printed. It
  first checks exp2_poly itself on the device (max relative error against float64 exp2 over [-125, 0];
  above bf16's half-ulp, 2**-9, it is marked WRONG).
The round's other candidates (a persistent grid, 4-D descriptors built once a program, descriptors built
on the host: commit 0933d83; two one-warpgroup programs an SM: commit 2f4c9eb) were timed and dropped:
bench/CANDIDATES.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from kernels_old_vs_new import (  # noqa: E402
    ATTENTION_SHAPE,
    _text,
    attention_inputs,
    attention_row,
    bench_ms,
    pin,
    sdpa,
)

# family -> names in flash_tma.CANDIDATE_CONFIGS, most promising first
CANDIDATE_FAMILIES = {"poly": ("poly2", "poly1", "poly2-bn64")}
FAMILIES = ("sdpa", "base", *CANDIDATE_FAMILIES)
BASE_TILE = (128, 128, 3, 8)  # BM, BN, stages, warps: the plain tile the poly candidates share
SDPA_BACKENDS = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION")
WRONG_ABS = 2e-2  # max abs difference to SDPA above which a row is marked WRONG (bf16 right stays near 1e-3)
CHILD_SLACK_S = 60.0  # a child's hard timeout: its remaining budget plus room for one compile


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="write the rows here as JSON (the table goes to stdout)")
    p.add_argument("--only", default=",".join(FAMILIES),
                   help=f"families, in order, of {','.join(FAMILIES)} (default: all; sdpa always runs first)")
    p.add_argument("--budget-s", type=float, default=150.0, help="start no row after this many seconds (default 150)")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)  # a candidate family to time in this process
    p.add_argument("--sdpa-ms", default="0;0", help=argparse.SUPPRESS)  # "non-causal;causal", for a child
    a = p.parse_args(argv)
    a.families = [f.strip() for f in a.only.split(",") if f.strip()]
    unknown = [f for f in a.families if f not in FAMILIES]
    if unknown:
        p.error(f"--only: unknown famil(ies) {unknown}; choose from {list(FAMILIES)}")
    if a.child is not None and a.child not in CANDIDATE_FAMILIES:
        p.error(f"--child: unknown family {a.child!r}")
    return a


def candidates(family: str) -> list[tuple[str, Any]]:
    """(name, config) of one candidate family, from the kernel module's CANDIDATE_CONFIGS."""
    from kernels.attention import flash_tma

    return [(name, flash_tma.CANDIDATE_CONFIGS[name]) for name in CANDIDATE_FAMILIES[family]]


def tflops(ms: float, causal: bool) -> float:
    """Forward FLOPs (two matmuls of 2·T·T·D each per head), half of them under a causal mask."""
    B, T, H, D = ATTENTION_SHAPE
    return 4 * B * H * T * T * D * (0.5 if causal else 1.0) / (ms * 1e-3) / 1e12


def case_of(causal: bool) -> str:
    return "causal" if causal else "non-causal"


def finish(row: dict[str, Any], family: str, causal: bool) -> dict[str, Any]:
    row["family"] = family
    if "ms" in row:
        row["tflops"] = tflops(row["ms"], causal)
    err = row.get("max_abs_err_vs_sdpa")
    row["wrong"] = err is not None and not err <= WRONG_ABS  # NaN too
    return row


# ---- sdpa ----

def sdpa_rows(sdpa_ms: dict[bool, float]) -> Iterator[dict[str, Any]]:
    """SDPA by default (the peer: fills sdpa_ms), then pinned to each backend; a backend that refuses
    the shape gives an error row."""
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    for causal in (False, True):
        q, k, v, _ = attention_inputs(causal)
        sdpa_ms[causal] = bench_ms(partial(sdpa, q, k, v, causal))
        rows = [{"family": "sdpa", "kernel": "sdpa", "case": case_of(causal), "version": "SDPA default",
                 "ms": sdpa_ms[causal], "ratio": 1.0, "tflops": tflops(sdpa_ms[causal], causal)}]
        yield rows[0]
        for name in SDPA_BACKENDS:
            row: dict[str, Any] = {"family": "sdpa", "kernel": "sdpa", "case": case_of(causal),
                                   "version": f"SDPA {name}"}
            try:
                with sdpa_kernel(getattr(SDPBackend, name)):
                    row["ms"] = bench_ms(partial(sdpa, q, k, v, causal))
                row["ratio"], row["tflops"] = sdpa_ms[causal] / row["ms"], tflops(row["ms"], causal)
                rows.append(row)
            except Exception as exc:  # not built in, or refuses this shape
                row["error"] = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
            yield row
        timed = [r for r in rows[1:] if "ms" in r]
        if timed:
            match = min(timed, key=lambda r: abs(r["ms"] - sdpa_ms[causal]))
            rows[0]["default_matches"] = match["version"].removeprefix("SDPA ")
        del q, k, v
        torch.cuda.empty_cache()


# ---- our kernel ----

def kernel_rows(module: Any, named: list[tuple[str, Any]], family: str, sdpa_ms: dict[bool, float],
                budget_left: Callable[[], float]) -> Iterator[dict[str, Any]]:
    """Each (name, config) pinned in turn, both cases, in this process."""
    tuner = module.flash_attention_tma_kernel
    for causal in (False, True):
        q, k, v, expect = attention_inputs(causal)
        for name, config in named:
            if budget_left() <= 0:
                return
            pin(tuner, config)
            fn = partial(module.flash_attention_tma, q, k, v, causal)
            label = f"{family}: {name} {describe(config)}"
            yield finish(attention_row(label, fn, expect, causal, sdpa_ms[causal]), family, causal)


def describe(c: Any) -> str:
    switches = " ".join(f"{k}={int(v)}" for k, v in c.kwargs.items() if k not in ("BM", "BN", "WS") and v)
    return f"{c.kwargs['BM']}x{c.kwargs['BN']} st={c.num_stages} w={c.num_warps} {switches}".strip()


def base_rows(sdpa_ms: dict[bool, float], budget_left: Callable[[], float]) -> Iterator[dict[str, Any]]:
    from kernels.attention import flash_tma

    bm, bn, st, w = BASE_TILE
    yield from kernel_rows(flash_tma, [("plain", flash_tma._config(bm, bn, st, w))], "base", sdpa_ms,
                           budget_left)


def child_rows(family: str, sdpa_ms: dict[bool, float], budget_left: Callable[[], float]) -> Iterator[dict[str, Any]]:
    """One candidate family in a child process with a timeout: rows come back as ROW: lines, a crash or
    hang as an error row naming how many rows it cost."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--out", "/dev/null", "--child", family,
           "--sdpa-ms", f"{sdpa_ms[False]};{sdpa_ms[True]}", "--budget-s", f"{max(budget_left(), 1.0):.0f}"]
    timeout = max(60.0, budget_left() + CHILD_SLACK_S)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
        out, err, why = done.stdout, done.stderr, f"child exited {done.returncode}"
    except subprocess.TimeoutExpired as exc:
        out, err, why = _text(exc.stdout), _text(exc.stderr), f"child timed out after {timeout:.0f} s"
    rows = [json.loads(line[5:]) for line in out.splitlines() if line.startswith("ROW: ")]
    yield from rows
    expected = 2 * len(CANDIDATE_FAMILIES[family]) + (family == "poly")
    if len(rows) < expected and why != "child exited 0":
        tail = " | ".join((err or out).strip().splitlines()[-3:])[-300:]
        yield {"family": family, "kernel": "flash_attention_tma", "case": "-",
               "version": f"{family}: {expected - len(rows)} rows missing", "error": f"{why}: {tail}"}


def exp2_poly_row() -> dict[str, Any]:
    """flash_tma.exp2_poly on the device against float64 exp2, x over [-125, 0] (bf16's half-ulp is 2**-9)."""
    import torch

    from kernels.attention.flash_tma import exp2_poly_kernel

    row: dict[str, Any] = {"family": "poly", "kernel": "exp2_poly", "case": "-", "version": "exp2_poly rel err"}
    try:
        x = torch.cat([torch.linspace(-125.0, 0.0, 1 << 20, device="cuda"),
                       -125.0 * torch.rand(1 << 20, device="cuda", generator=torch.Generator("cuda").manual_seed(0))])
        y = torch.empty_like(x)
        exp2_poly_kernel[(x.numel() // 1024,)](x, y, 1024)
        exact = torch.exp2(x.double())
        row["max_rel_err"] = float(((y.double() - exact).abs() / exact).max())
        row["wrong"] = not row["max_rel_err"] <= 2.0**-9
    except Exception as exc:
        row["error"] = f"{type(exc).__name__}: {str(exc).strip()[:200]}"
    return row


def run_child(a: argparse.Namespace) -> None:
    from kernels.attention import flash_tma

    t0 = time.perf_counter()
    ms = [float(x) for x in a.sdpa_ms.split(";")]
    budget_left = lambda: a.budget_s - (time.perf_counter() - t0)  # noqa: E731
    if a.child == "poly":
        print("ROW: " + json.dumps(exp2_poly_row()), flush=True)
    for row in kernel_rows(flash_tma, candidates(a.child), a.child, {False: ms[0], True: ms[1]}, budget_left):
        print("ROW: " + json.dumps(row), flush=True)


# ---- output ----

HEADER = f"{'case':<11} {'candidate':<66} {'ms':>8} {'x SDPA':>7} {'TFLOP/s':>7} {'max|err|':>9}"


def render_row(r: dict[str, Any]) -> str:
    head = f"{r.get('case', '-'):<11} {r.get('version', '-')[:66]:<66}"
    if "error" in r:
        return f"{head} error: {r['error'][:200]}"
    if "max_rel_err" in r:
        flag = "  WRONG" if r["wrong"] else ""
        return f"{head} max rel err {r['max_rel_err']:.2e} (bf16 half-ulp {2.0**-9:.2e}){flag}"
    err = r.get("max_abs_err_vs_sdpa")
    err_s = f"{err:9.2e}" if err is not None else f"{'-':>9}"
    ratio = f"{r['ratio']:7.3f}" if r.get("ratio") is not None else f"{'-':>7}"
    flag = "  WRONG" if r.get("wrong") else ("  >= 1.0: met" if r.get("meets") else "")
    match = f"  (matches {r['default_matches']})" if r.get("default_matches") else ""
    return f"{head} {r['ms']:8.3f} {ratio} {r.get('tflops', 0.0):7.1f} {err_s}{flag}{match}"


def summary(rows: list[dict[str, Any]]) -> list[str]:
    ours = [r for r in rows if r.get("family") != "sdpa" and "ms" in r and not r.get("wrong")]
    lines = []
    for case in ("non-causal", "causal"):
        best = max((r for r in ours if r["case"] == case), key=lambda r: r.get("ratio") or 0.0, default=None)
        if best and best.get("ratio"):
            lines.append(f"best {case}: {best['version']} at {best['ratio']:.3f}x SDPA ({best['ms']:.3f} ms)")
    return lines


def main(argv: list[str] | None = None) -> None:
    a = parse_args(argv)
    if a.child:
        run_child(a)
        return
    import torch
    import triton

    B, T, H, D = ATTENTION_SHAPE
    header = (f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; "
              f"B={B} T={T} H={H} D={D} bf16; x SDPA = SDPA's default ms / ours (target >= 1.0)")
    print(header + "\n\n" + HEADER, flush=True)
    t0 = time.perf_counter()
    budget_left = lambda: a.budget_s - (time.perf_counter() - t0)  # noqa: E731
    rows: list[dict[str, Any]] = []
    sdpa_ms: dict[bool, float] = {}
    sources: dict[str, Callable[[], Iterator[dict[str, Any]]]] = {
        "sdpa": lambda: sdpa_rows(sdpa_ms),
        "base": lambda: base_rows(sdpa_ms, budget_left),
        **{f: partial(child_rows, f, sdpa_ms, budget_left) for f in CANDIDATE_FAMILIES}}
    families = ["sdpa"] + [f for f in a.families if f != "sdpa"]  # the peer's times come first
    not_reached: list[str] = []
    for i, family in enumerate(families):
        if family != "sdpa" and budget_left() <= 0:
            not_reached += families[i:]
            break
        for row in sources[family]():
            row["at_s"] = round(time.perf_counter() - t0, 1)
            rows.append(row)
            print(render_row(row), flush=True)
        torch.cuda.empty_cache()
    lines = [header, "", HEADER, *map(render_row, rows), "", *summary(rows)]
    if not_reached:
        lines.append("not reached within --budget-s: " + ", ".join(not_reached))
    print("\n" + "\n".join(lines), flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"header": header, "budget_s": a.budget_s, "not_reached": not_reached,
                                 "rows": rows}, indent=1))
    print(f"wrote {a.out} ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
