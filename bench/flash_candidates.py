"""flash_attention_tma's candidates beside SDPA, one process on one GPU (issue 30: >= 1.0x SDPA's speed).

A benchmark script, not a test: it prints a table and writes the rows as JSON to --out; it never asserts.

    python3 bench/flash_candidates.py --out /tmp/flash_candidates.json

Shape: B=4, T=8192, H=32, D=128, bf16 (the spec's perf cases), non-causal and causal. Each candidate
is the kernel pinned to one config (kernels/attention/flash_tma.py: tile, stages, warps, maxnreg and
the constexpr switches PIPE, WS), timed with triton.testing.do_bench (warmup 10 ms, rep 50 ms, first
call outside the timed region), with its max abs difference to SDPA's output on the same inputs, so a
fast but wrong candidate shows (a bf16 kernel right at this shape stays near 1e-3; above WRONG_ABS it
is marked). Families, in the order they run (a row is not started after --budget-s):
- sdpa: torch's scaled_dot_product_attention, the peer (in this process).
- occupancy: the autotune list's new head: four warpgroups an SM (two 128x64 programs capped at
  128 registers, or one 256x64 program of 16 warps), child process.
- plain: the three fastest tiles of the list before (128x128 at 3 stages: 0.908x last time), in this process.
- autotuned: the shipped autotune list, unpinned (what the suite would pick), in this process; the
  configs timed above come from Triton's cache, so it costs little more than the autotuner's timing.
- pipe: the next block's q·kᵀ issued before this block's softmax (PIPE), child process.
- ws: warp-specialized configs (Triton >= 3.5 on Hopper), child process: a compiler abort or a hang
  there costs only that family's rows not yet printed.
- plain-rest (only when named in --only): the rest of the list before, slower there (0.70x-0.82x).
The budget bounds when rows start; a child also gets a hard timeout of its remaining budget + 45 s.
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

from issue30_kernels import ATTENTION_SHAPE, _text, attention_inputs, attention_row, bench_ms, pin, sdpa  # noqa: E402

FAMILIES = ("occupancy", "plain", "autotuned", "pipe", "ws", "plain-rest")
DEFAULT = FAMILIES[:5]
CHILD_FAMILIES = {"occupancy", "pipe", "ws"}  # new code paths or compiler features: isolated
WRONG_ABS = 2e-2  # max abs difference to SDPA above which a row is marked WRONG


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="write the rows here as JSON (the table goes to stdout)")
    p.add_argument("--only", default=",".join(DEFAULT),
                   help=f"families, in order, of {','.join(FAMILIES)} (default: {','.join(DEFAULT)})")
    p.add_argument("--budget-s", type=float, default=150.0, help="start no row after this many seconds")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)  # a family to time in this process
    p.add_argument("--sdpa-ms", default="0;0", help=argparse.SUPPRESS)  # "non-causal;causal", for a child
    return p.parse_args(argv)


def configs(family: str) -> list[Any]:
    from kernels.attention import flash_tma

    plain = flash_tma.PLAIN_CONFIGS  # the fastest three first
    return {"occupancy": flash_tma.OCCUPANCY_CONFIGS, "plain": plain[:3], "plain-rest": plain[3:],
            "pipe": flash_tma.PIPE_CONFIGS, "ws": flash_tma.WS_CONFIGS}[family]


def label(family: str, c: Any) -> str:
    extra = f" maxnreg={c.maxnreg}" if getattr(c, "maxnreg", None) else ""
    return f"{family} {c.kwargs['BM']}x{c.kwargs['BN']} st={c.num_stages} w={c.num_warps}{extra}"


def tflops(ms: float, causal: bool) -> float:
    """Forward FLOPs (two matmuls of 2·T·T·D each per head), half of them under a causal mask."""
    B, T, H, D = ATTENTION_SHAPE
    return 4 * B * H * T * T * D * (0.5 if causal else 1.0) / (ms * 1e-3) / 1e12


def finish(row: dict[str, Any], family: str, causal: bool) -> dict[str, Any]:
    row["family"] = family
    if "ms" in row:
        row["tflops"] = tflops(row["ms"], causal)
    err = row.get("max_abs_err_vs_sdpa")
    row["wrong"] = err is not None and not err <= WRONG_ABS  # NaN too
    return row


def family_rows(family: str, sdpa_ms: dict[bool, float], budget_left: Callable[[], float]) -> Iterator[dict[str, Any]]:
    """Each config of one family pinned in turn, both cases, in this process."""
    from kernels.attention import flash_tma

    tuner = flash_tma.flash_attention_tma_kernel
    inputs = {causal: attention_inputs(causal) for causal in (False, True)}
    for config in configs(family):
        for causal in (False, True):
            if budget_left() <= 0:
                return
            pin(tuner, config)
            q, k, v, expect = inputs[causal]
            fn = partial(flash_tma.flash_attention_tma, q, k, v, causal)
            yield finish(attention_row(label(family, config), fn, expect, causal, sdpa_ms[causal]), family, causal)


def autotuned_rows(sdpa_ms: dict[bool, float], budget_left: Callable[[], float]) -> Iterator[dict[str, Any]]:
    """The shipped list, unpinned: the autotuner times each config that fits, as the suite's perf pass does."""
    from kernels.attention import flash_tma

    tuner = flash_tma.flash_attention_tma_kernel
    tuner.configs, tuner.cache = list(flash_tma.CONFIGS), {}
    for causal in (False, True):
        if budget_left() <= 0:
            return
        q, k, v, expect = attention_inputs(causal)
        fn = partial(flash_tma.flash_attention_tma, q, k, v, causal)
        row = finish(attention_row("autotuned (shipped list)", fn, expect, causal, sdpa_ms[causal]), "autotuned",
                     causal)
        best = tuner.best_config
        row["picked"] = label("picked", best) if best is not None else None
        yield row


def child_rows(family: str, sdpa_ms: dict[bool, float], budget_left: Callable[[], float]) -> Iterator[dict[str, Any]]:
    """One family in a child process with a timeout: rows come back as ROW: lines, a crash or hang as an
    error row naming how many rows it cost."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--out", "/dev/null", "--child", family,
           "--sdpa-ms", f"{sdpa_ms[False]};{sdpa_ms[True]}", "--budget-s", f"{max(budget_left(), 1.0):.0f}"]
    # the child stops starting rows at its budget; the timeout catches a hang, with room for one compile
    timeout = max(60.0, budget_left() + 45.0)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        out, err, why = done.stdout, done.stderr, f"child exited {done.returncode}"
    except subprocess.TimeoutExpired as exc:
        out, err, why = _text(exc.stdout), _text(exc.stderr), f"child timed out after {timeout:.0f} s"
    rows = [json.loads(line[5:]) for line in out.splitlines() if line.startswith("ROW: ")]
    yield from rows
    expected = 2 * len(configs(family))
    if len(rows) < expected and why != "child exited 0":
        tail = " | ".join((err or out).strip().splitlines()[-3:])[-300:]
        yield {"family": family, "kernel": "flash_attention_tma", "case": "-",
               "version": f"{family}: {expected - len(rows)} rows missing", "error": f"{why}: {tail}"}


def render_row(r: dict[str, Any]) -> str:
    head = f"{r.get('case', '-'):<11} {r.get('version', '-')[:44]:<44}"
    if "error" in r:
        return f"{head} error: {r['error'][:200]}"
    err = r.get("max_abs_err_vs_sdpa")
    err_s = f"{err:9.2e}" if err is not None else f"{'-':>9}"
    ratio = f"{r['ratio']:7.3f}" if r.get("ratio") is not None else f"{'-':>7}"
    flag = "  WRONG" if r.get("wrong") else ("  >= 1.0: met" if r.get("meets") else "")
    picked = f"  ({r['picked']})" if r.get("picked") else ""
    return f"{head} {r['ms']:8.3f} {ratio} {r.get('tflops', 0.0):7.1f} {err_s}{flag}{picked}"


HEADER = f"{'case':<11} {'candidate':<44} {'ms':>8} {'x SDPA':>7} {'TFLOP/s':>7} {'max|err|':>9}"


def run_child(a: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    ms = [float(x) for x in a.sdpa_ms.split(";")]
    sdpa_ms = {False: ms[0], True: ms[1]}
    for row in family_rows(a.child, sdpa_ms, lambda: a.budget_s - (time.perf_counter() - t0)):
        print("ROW: " + json.dumps(row), flush=True)


def main(argv: list[str] | None = None) -> None:
    a = parse_args(argv)
    if a.child:
        run_child(a)
        return
    import torch
    import triton

    families = [f.strip() for f in a.only.split(",") if f.strip()]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise SystemExit(f"--only: unknown famil(ies) {unknown}; choose from {list(FAMILIES)}")
    B, T, H, D = ATTENTION_SHAPE
    header = (f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; "
              f"B={B} T={T} H={H} D={D} bf16; x SDPA = SDPA's ms / ours (target >= 1.0)")
    print(header + "\n\n" + HEADER, flush=True)
    t0 = time.perf_counter()
    budget_left = lambda: a.budget_s - (time.perf_counter() - t0)  # noqa: E731
    rows: list[dict[str, Any]] = []
    sdpa_ms: dict[bool, float] = {}
    for causal in (False, True):
        q, k, v, _ = attention_inputs(causal)
        sdpa_ms[causal] = bench_ms(partial(sdpa, q, k, v, causal))
        row = {"family": "sdpa", "kernel": "sdpa", "case": "causal" if causal else "non-causal", "version": "SDPA",
               "ms": sdpa_ms[causal], "ratio": 1.0, "tflops": tflops(sdpa_ms[causal], causal)}
        rows.append(row)
        print(render_row(row), flush=True)
        del q, k, v
    torch.cuda.empty_cache()
    not_reached: list[str] = []
    for i, family in enumerate(families):
        if budget_left() <= 0:
            not_reached += families[i:]
            break
        if family in CHILD_FAMILIES:
            source = child_rows(family, sdpa_ms, budget_left)
        elif family == "autotuned":
            source = autotuned_rows(sdpa_ms, budget_left)
        else:
            source = family_rows(family, sdpa_ms, budget_left)
        for row in source:
            row["at_s"] = round(time.perf_counter() - t0, 1)
            rows.append(row)
            print(render_row(row), flush=True)
        torch.cuda.empty_cache()
    timed = [r for r in rows if r.get("family") != "sdpa" and "ms" in r and not r.get("wrong")]
    lines = [header, "", HEADER, *map(render_row, rows)]
    for causal in ("non-causal", "causal"):
        best = max((r for r in timed if r["case"] == causal), key=lambda r: r["ratio"], default=None)
        if best:
            lines.append(f"best {causal}: {best['version']} at {best['ratio']:.3f}x SDPA ({best['ms']:.3f} ms)")
    if not_reached:
        lines.append("not reached within --budget-s: " + ", ".join(not_reached))
    print("\n" + "\n".join(lines), flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"header": header, "budget_s": a.budget_s, "not_reached": not_reached,
                                 "rows": rows}, indent=1))
    print(f"wrote {a.out} ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
