"""Time candidate kernel changes beside the peer, at the perf pass's sizes, in one run on a GPU.

A benchmark script, not a test: it prints a table (and --json rows) and never asserts.

    python bench/kernel_candidates.py --json /tmp/candidates.json
    python bench/kernel_candidates.py --only gdn --budget-s 240

Rows, each timed with triton.testing.do_bench (warmup 10 ms, rep 50 ms: the cuda backend's timer)
on the specs' own perf-case inputs, with the NaN prefill of outputs off as in the perf pass:
- gdn: every GDN spec's perf cases (B=1, T=65536, H=32, K=V=128, BT=64, fixed and varlen) beside
  fla, the peer; varlen cases also "before", with the per-cu_seqlens memo of the chunk indices
  bypassed (each launch recomputes them on the device, with a sync, as before).
- tril_mask: the perf case (B=4, T=65536, H=16, BT=64, bf16) as before (one [BT, BT] tile per chunk
  and head) and as a row stream for several rows-per-program and warp counts, each as a share of
  a device copy of the same bytes (the perf pass's roof).
- attention: flash_attention_tma at its perf cases (B=4, T=8192, H=32, D=128, bf16, causal and not)
  beside SDPA, pinned to each candidate config in turn (the autotune list, and tiles beyond it).
- chunk_h: gdn_chunk_fwd_h's perf cases beside fla, pinned to each candidate config likewise.
Nothing is quoted from another run; the script stops starting rows after --budget-s seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

GDN = ("gdn_chunk_local_cumsum", "gdn_chunk_scaled_dot_kkt", "gdn_recompute_w_u", "gdn_chunk_fwd_h",
       "gdn_chunk_fwd", "gdn_solve_tril", "gdn_chunk_fwd_o")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default="tril_mask,gdn,attention",
                   help="groups, in order: tril_mask, gdn, attention, chunk_h (default the first three)")
    p.add_argument("--kernels", default=",".join(GDN), help="GDN specs to time, in order")
    p.add_argument("--budget-s", type=float, default=300.0, help="start no row after this many seconds")
    p.add_argument("--json", type=Path, default=None, help="write the rows here after each one")
    return p.parse_args(argv)


def bench_ms(fn: Callable[[], Any]) -> float:
    import torch
    from triton.testing import do_bench

    fn()  # compile and autotune outside the timed region
    torch.cuda.synchronize()
    return float(do_bench(fn, warmup=10, rep=50))


def gdn_rows(names: list[str]) -> Iterator[dict[str, Any]]:
    from kernels import gdn
    from parity.perf.case import device_inputs
    from parity.spec import registry
    from parity.spec.context import backend_scope
    from parity.spec.inputs import unfilled

    memoised = {name: getattr(gdn, name) for name in ("prepare_chunk_indices", "prepare_chunk_offsets",
                                                      "_varlen_chunks")}
    _, specs = registry.build(names)
    for spec in specs:
        for case in spec.perf_cases:
            row = {"group": "gdn", "kernel": spec.name, "case": case.id,
                   "varlen": case.params.get("seqlens") is not None}
            try:
                with unfilled(), backend_scope("cuda"):
                    row.update(gdn_figures(spec, case, device_inputs(spec, case, 0, "cuda")[0], memoised))
            except Exception as exc:  # one broken row must not hide the others
                row["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-300:]
            yield row


def gdn_figures(spec: Any, case: Any, inputs: Any, memoised: dict[str, Any]) -> dict[str, Any]:
    from kernels import gdn

    p = case.params
    row: dict[str, Any] = {"ms": bench_ms(lambda: spec.launch(inputs, p))}
    if spec.peer is not None and spec.peer.unavailable() is None:
        row["peer_ms"] = bench_ms(spec.peer.prepare(inputs, p))
        row["vs_peer"] = row["ms"] / row["peer_ms"]
    if p.get("seqlens") is not None:
        try:
            for name, fn in memoised.items():
                setattr(gdn, name, fn.__wrapped__)
            row["before_ms"] = bench_ms(lambda: spec.launch(inputs, p))
        finally:
            for name, fn in memoised.items():
                setattr(gdn, name, fn)
    return row


def tril_before(x: Any, inclusive: bool) -> Any:
    """tril_mask as it was: one program per (chunk, head), a [BT, BT] tile of rows H·BT apart."""
    import triton
    import triton.language as tl

    from parity import nan_empty

    @triton.jit(do_not_specialize=["T"])
    def tile_per_head(x, out, T, H: tl.constexpr, BT: tl.constexpr, INCLUSIVE: tl.constexpr):  # noqa: ANN001, ANN202
        i_t, i_bh = tl.program_id(0), tl.program_id(1)
        i_b, i_h = i_bh // H, i_bh % H
        o_i = tl.arange(0, BT)
        o_t = i_t * BT + o_i
        m_t = o_t < T
        o_x = ((i_b * T + o_t[:, None]) * H + i_h) * BT + o_i[None, :]
        b_x = tl.load(x + o_x, mask=m_t[:, None], other=0.0)
        if INCLUSIVE:
            m_keep = o_i[:, None] >= o_i[None, :]
        else:
            m_keep = o_i[:, None] > o_i[None, :]
        tl.store(out + o_x, tl.where(m_keep, b_x, 0.0), mask=m_t[:, None])

    B, T, H, BT = x.shape
    out = nan_empty(x.shape, x.dtype, x.device)
    return lambda: tile_per_head[(triton.cdiv(T, BT), B * H)](x, out, T=T, H=H, BT=BT, INCLUSIVE=inclusive)


def tril_rows() -> Iterator[dict[str, Any]]:
    import torch

    from kernels.basics.tril_mask import tril_mask
    from parity.spec.inputs import unfilled

    B, T, H, BT = 4, 65536, 16, 64
    x = torch.randn(B, T, H, BT, device="cuda", dtype=torch.bfloat16)
    copy_out = torch.empty_like(x)
    copy_ms = bench_ms(lambda: copy_out.copy_(x))
    expect = torch.tril(x.view(B, T // BT, BT, H, BT).transpose(2, 3), -1).transpose(2, 3).reshape(x.shape)
    candidates: list[tuple[str, Callable[[], Any]]] = [("before: tile per (chunk, head)", tril_before(x, False))]
    for rows in (32, 64, 128, 256):
        for warps in (4, 8):
            candidates.append((f"rows={rows} warps={warps}",
                               lambda rows=rows, warps=warps: tril_mask(x, False, rows, warps)))
    with unfilled():
        for name, fn in candidates:
            row = {"group": "tril_mask", "kernel": "tril_mask", "case": name, "copy_ms": copy_ms}
            try:
                row["ms"] = bench_ms(fn)
                row["pct_of_copy"] = 100 * copy_ms / row["ms"]
                if name.startswith("rows"):
                    row["exact"] = bool(torch.equal(fn(), expect))
            except Exception as exc:
                row["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-300:]
            yield row


# configs beyond each autotune list: (BM, BN, num_stages, num_warps) for attention, (BV, num_warps,
# num_stages) for chunk_fwd_h (fla's own list on Hopper: BV 32/64, 2 or 4 warps, 2-4 stages)
ATTENTION_EXTRA = ((128, 128, 4, 8), (128, 64, 2, 8), (128, 64, 5, 8), (128, 128, 3, 4), (64, 128, 3, 4))
CHUNK_H_EXTRA = ((32, 2, 2), (32, 2, 3), (32, 2, 4), (64, 2, 3), (32, 4, 2), (32, 4, 4), (64, 4, 3))


def extra_configs(name: str) -> list[Any]:
    import triton

    if name == "flash_attention_tma":
        return [triton.Config({"BM": bm, "BN": bn}, num_stages=st, num_warps=w) for bm, bn, st, w in ATTENTION_EXTRA]
    return [triton.Config({"BV": bv}, num_warps=w, num_stages=st) for bv, w, st in CHUNK_H_EXTRA]


def sweep_rows(name: str) -> Iterator[dict[str, Any]]:
    """The spec's launch pinned to each candidate config in turn, beside its baseline or peer."""
    import torch

    from parity.perf.case import device_inputs
    from parity.run.autotune_pin import autotuners
    from parity.spec import registry

    _, (spec,) = registry.build([name])
    (tuner,) = autotuners([spec.kernel])
    listed = list(tuner.configs)
    candidates = listed + extra_configs(name)
    for case in spec.perf_cases:
        yield from sweep_case(spec, case, device_inputs(spec, case, 0, "cuda")[0], tuner, listed, candidates)
        torch.cuda.empty_cache()


def sweep_case(spec: Any, case: Any, inputs: Any, tuner: Any, listed: list[Any],
               candidates: list[Any]) -> Iterator[dict[str, Any]]:
    from parity.spec.context import backend_scope
    from parity.spec.inputs import unfilled

    p = case.params
    with unfilled(), backend_scope("cuda"):
        if spec.peer is not None and spec.peer.unavailable() is None:
            other, other_ms = "peer", bench_ms(spec.peer.prepare(inputs, p))
        else:
            other, other_ms = "baseline", bench_ms(lambda: spec.baseline(inputs, p))
    for config in candidates:
        row = {"group": "sweep", "kernel": spec.name, "case": f"{case.id} {config}", f"{other}_ms": other_ms,
               "listed": config in listed}
        try:
            tuner.configs, tuner.cache = [config], {}
            with unfilled(), backend_scope("cuda"):
                row["ms"] = bench_ms(lambda: spec.launch(inputs, p))
            if other == "peer":
                row["vs_peer"] = row["ms"] / other_ms
            else:
                row["speed_vs_sdpa"] = other_ms / row["ms"]
        except Exception as exc:
            row["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-300:]
        finally:
            tuner.configs, tuner.cache = listed, {}
        yield row


def line(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"{row['kernel']:<28} {row['case'][:60]:<60} error: {row['error'][:140]}"
    figures = [f"{row['ms']:.4f} ms"]
    if row.get("peer_ms") is not None and row.get("vs_peer") is not None:
        figures.append(f"fla {row['peer_ms']:.4f} ms ({row['vs_peer']:.3f}x fla's time)")
    if row.get("before_ms") is not None:
        figures.append(f"before {row['before_ms']:.4f} ms ({row['before_ms'] / row['peer_ms']:.3f}x)"
                       if row.get("peer_ms") else f"before {row['before_ms']:.4f} ms")
    if row.get("speed_vs_sdpa") is not None:
        figures.append(f"SDPA {row['baseline_ms']:.4f} ms ({row['speed_vs_sdpa']:.3f}x SDPA's speed)")
    if row.get("pct_of_copy") is not None:
        figures.append(f"{row['pct_of_copy']:.1f}% of copy ({row['copy_ms']:.4f} ms)"
                       + ("" if row.get("exact", True) else " WRONG OUTPUT"))
    return f"{row['kernel']:<28} {row['case'][:60]:<60} " + ", ".join(figures)


def main(argv: list[str] | None = None) -> None:
    a = parse_args(argv)
    import torch

    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    groups = [g.strip() for g in a.only.split(",")]
    sources: dict[str, Callable[[], Iterator[dict[str, Any]]]] = {
        "tril_mask": tril_rows, "attention": lambda: sweep_rows("flash_attention_tma"),
        "chunk_h": lambda: sweep_rows("gdn_chunk_fwd_h"),
        "gdn": lambda: gdn_rows([k.strip() for k in a.kernels.split(",")])}
    unknown = [g for g in groups if g not in sources]
    if unknown:
        raise SystemExit(f"--only: unknown group(s) {unknown}; choose from {sorted(sources)}")
    t0, rows = time.perf_counter(), []
    for group in groups:
        for row in sources[group]():
            row["at_s"] = round(time.perf_counter() - t0, 1)
            rows.append(row)
            print(line(row), flush=True)
            if a.json:
                a.json.write_text(json.dumps(rows, indent=1))
            if time.perf_counter() - t0 > a.budget_s:
                print(f"stopped after {a.budget_s:.0f} s (--budget-s)", flush=True)
                return


if __name__ == "__main__":
    main()
