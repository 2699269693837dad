"""gdn_kkt_solve's candidates beside fla's fused kkt + solve, at the perf shapes, in one process on one GPU.

A benchmark script, not a test: it prints a table, writes the rows as JSON to --out, never asserts.

    python3 bench/kkt_solve_candidates.py --out /tmp/kkt_solve_candidates.json

Shapes: the spec's perf cases (B=1, T=65536, H=32, K=V=128, BT=64, bf16, use_g; fixed, and varlen
with seqlens 1000,3096,8192,16384,36864). Rows, in order (none is started after --budget-s seconds):
- fla: fla-core 0.6.0's chunk_gated_delta_rule_fwd_kkt_solve_kernel, autotuned, A allocated outside.
- default: gdn_kkt_solve as it ships (kernels/gdn/kkt_solve.py, its autotune list), via the spec's launch.
- pinned candidates: chunk_kkt_solve_kernel with INV (how the diagonal blocks are inverted: rolled,
  unrolled = the kernel before issue 30, dots,
  batched), DOT_PRECISION of the merges and one config (BK,
  num_warps, num_stages) each, Ai allocated outside the timed region. "before" rows are the
  pre-issue-30 kernel at each of its old configs (the best of them is what its autotune picked);
  "default" rows are the shipped kernel at each config of its list.
Each candidate's Ai is compared with the before kernel's (INV unrolled, ieee, BK=64, 2 warps) on the
same inputs: `diff` is the max |difference| over both cases (a bf16 ulp at 1.0 is 0.0078), so a
fast but wrong candidate shows. Timing: triton.testing.do_bench (warmup 10 ms, rep 50 ms), first
call (compile) outside the timed region.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from kernels_old_vs_new import bench_ms, case_name, peer_ms, spec_and_inputs  # noqa: E402  (after the path)


class Candidate(NamedTuple):
    name: str
    inv: int  # kernels.gdn.kkt_solve.INV_*
    precision: str  # DOT_PRECISION of the merges (and of INV_DOTS's products)
    bk: int
    num_warps: int
    num_stages: int


ROLLED, UNROLLED, DOTS, BATCHED = 0, 1, 2, 3  # mirror kernels.gdn.kkt_solve.INV_*; checked in main()
REFERENCE = Candidate("before: unrolled ieee BK64 w2 s2", UNROLLED, "ieee", 64, 2, 2)


def candidates() -> list[Candidate]:
    """Most telling first: the old kernel at its old configs, the new default's configs, then one change at a time."""
    def c(inv: int, prec: str, bk: int, w: int, st: int, prefix: str = "") -> Candidate:
        kind = {ROLLED: "rolled", UNROLLED: "unrolled", DOTS: "dots", BATCHED: "batched"}[inv]
        return Candidate(f"{prefix}{kind} {prec} BK{bk} w{w} s{st}", inv, prec, bk, w, st)

    return [REFERENCE, c(UNROLLED, "ieee", 64, 4, 2, "before: "), c(UNROLLED, "ieee", 128, 4, 1, "before: "),
            # the shipped default's two configs (rolled substitution, tf32 merges), then each change alone
            c(ROLLED, "tf32", 64, 1, 2, "default: "), c(ROLLED, "tf32", 64, 2, 2, "default: "),
            c(ROLLED, "tf32", 64, 4, 2),
            c(ROLLED, "ieee", 64, 2, 2), c(ROLLED, "ieee", 64, 4, 2), c(UNROLLED, "tf32", 64, 4, 2),
            c(BATCHED, "tf32", 64, 1, 2), c(BATCHED, "tf32", 64, 2, 2),
            c(ROLLED, "tf32", 32, 2, 3), c(ROLLED, "tf32", 32, 4, 3), c(ROLLED, "tf32", 128, 4, 1),
            c(ROLLED, "tf32", 64, 1, 3), c(ROLLED, "tf32", 32, 1, 3), c(ROLLED, "tf32", 64, 4, 3),
            c(DOTS, "tf32", 64, 1, 2), c(DOTS, "tf32", 64, 2, 2), c(DOTS, "ieee", 64, 2, 2),
            c(ROLLED, "tf32x3", 64, 1, 2), c(ROLLED, "ieee", 64, 1, 2)]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="write the rows here as JSON")
    p.add_argument("--budget-s", type=float, default=120.0, help="start no candidate after this many seconds")
    p.add_argument("--only", default="", help="comma-separated substrings: time only candidates whose name has one")
    return p.parse_args(argv)


def inner_jit(kernel: Any) -> Any:
    """The JITFunction under the heuristics and autotune wrappers, to launch with one pinned config."""
    from triton.runtime.jit import JITFunction

    while not isinstance(kernel, JITFunction):
        kernel = kernel.fn
    return kernel


def pinned(c: Candidate, inputs: Any) -> tuple[Callable[[], Any], Any]:
    """A thunk that launches the kernel at candidate c into a preallocated Ai, and that Ai."""
    import torch
    import triton

    from kernels import gdn
    from kernels.gdn.kkt_solve import BT_FUSED, chunk_kkt_solve_kernel

    k, cu = inputs["k"], gdn.cu_of(inputs)
    B, T, H, K = k.shape
    chunk_indices = gdn.prepare_chunk_indices(cu, BT_FUSED) if cu is not None else None
    NT = triton.cdiv(T, BT_FUSED) if cu is None else len(chunk_indices)
    Ai = torch.empty((B, T, H, BT_FUSED), dtype=k.dtype, device=k.device)
    g = inputs.get("g_cumsum")
    jit = inner_jit(chunk_kkt_solve_kernel)

    def launch() -> None:
        jit[(NT, B * H)](k, inputs["beta"], g, Ai, cu, chunk_indices, T, H=H, K=K, BT=BT_FUSED, BK=c.bk,
                         DOT_PRECISION=c.precision, USE_G=g is not None, IS_VARLEN=cu is not None, INV=c.inv,
                         num_warps=c.num_warps, num_stages=c.num_stages)

    return launch, Ai


def max_diff(a: Any, b: Any) -> float:
    """max |a − b|; NaN (a candidate that wrote NaN, or left Ai unwritten) counts as infinite."""
    d = (a.float() - b.float()).abs()
    return float("inf") if bool(d.isnan().any()) else float(d.max())


def render(rows: list[dict[str, Any]], header: str, skipped: list[str]) -> str:
    lines = [header, "", f"{'candidate':<44} {'fixed ms':>9} {'x fla':>6} {'varlen ms':>10} {'x fla':>6} "
                         f"{'diff':>9}  note"]
    for r in rows:
        cells = []
        for case in ("fixed", "varlen"):
            ms, x = r.get(f"{case}_ms"), r.get(f"{case}_x_fla")
            w = 9 if case == "fixed" else 10
            cells.append(f"{ms:{w}.4f}" if ms is not None else f"{'-':>{w}}")
            cells.append(f"{x:6.3f}" if x is not None else f"{'-':>6}")
        diff = f"{r['diff']:9.2e}" if r.get("diff") is not None else f"{'-':>9}"
        lines.append(f"{r['name'][:44]:<44} {' '.join(cells)} {diff}  {r.get('note', '')}{r.get('error', '')[:200]}")
    if skipped:
        lines += ["", f"not started within --budget-s ({len(skipped)}): " + ", ".join(skipped)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    a = parse_args(argv)
    import torch
    import triton

    from kernels.gdn import kkt_solve
    from parity.spec.context import backend_scope
    from parity.spec.inputs import unfilled

    if (ROLLED, UNROLLED, DOTS, BATCHED) != (kkt_solve.INV_ROLLED, kkt_solve.INV_UNROLLED, kkt_solve.INV_DOTS,
                                             kkt_solve.INV_BATCHED):
        raise SystemExit("bench/kkt_solve_candidates.py: INV codes differ from kernels/gdn/kkt_solve.py's; "
                         "update ROLLED, UNROLLED, DOTS, BATCHED here")
    header = (f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; "
              "x fla = ours / fla's time (target <= 1.0); diff = max |Ai - before kernel's Ai|")
    print(header, flush=True)
    t0 = time.perf_counter()
    cases = {case_name(case): (spec, case, inputs) for spec, case, inputs in spec_and_inputs("gdn_kkt_solve")}
    fla = {name: peer_ms(spec, inputs, case.params) for name, (spec, case, inputs) in cases.items()}
    rows: list[dict[str, Any]] = [{"name": "fla-core 0.6.0 fused kkt+solve (autotuned)",
                                   **{f"{n}_ms": ms for n, ms in fla.items()}}]
    print(render(rows, "", []).splitlines()[-1], flush=True)

    def timed(row: dict[str, Any], name: str, fn: Callable[[], Any]) -> None:
        with unfilled(), backend_scope("cuda"):
            ms = bench_ms(fn)
        row[f"{name}_ms"] = ms
        row[f"{name}_x_fla"] = ms / fla[name] if fla.get(name) else None

    # the reference outputs: the kernel before issue 30 at one of its old configs
    ref_out: dict[str, Any] = {}
    for name, (_, _, inputs) in cases.items():
        launch, Ai = pinned(REFERENCE, inputs)
        launch()
        ref_out[name] = Ai.clone()

    default: dict[str, Any] = {"name": "default (shipped autotune list)"}
    try:
        diffs = []
        for name, (spec, case, inputs) in cases.items():
            timed(default, name, lambda spec=spec, inputs=inputs, case=case: spec.launch(inputs, case.params))
            with backend_scope("cuda"):
                out = spec.launch(inputs, case.params)["Ai"]
            diffs.append(max_diff(out, ref_out[name]))
        default["diff"] = max(diffs)
        best = getattr(kkt_solve.chunk_kkt_solve_kernel.fn, "best_config", None)
        default["note"] = f"picked {best}" if best is not None else ""
    except Exception as exc:  # the table must still come out
        default["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-300:]
    rows.append(default)
    print(render(rows, "", []).splitlines()[-1], flush=True)

    only = [s.strip() for s in a.only.split(",") if s.strip()]
    todo = [c for c in candidates() if not only or any(s in c.name for s in only)]
    skipped: list[str] = []
    for i, c in enumerate(todo):
        if time.perf_counter() - t0 > a.budget_s:
            skipped = [x.name for x in todo[i:]]
            print(f"--budget-s {a.budget_s:.0f} s spent: {len(skipped)} candidates not started", flush=True)
            break
        row: dict[str, Any] = {"name": c.name, **c._asdict()}
        try:
            diffs = []
            for name, (_, _, inputs) in cases.items():
                launch, Ai = pinned(c, inputs)
                timed(row, name, launch)
                diffs.append(max_diff(Ai, ref_out[name]))
            row["diff"] = max(diffs)
        except Exception as exc:  # one broken candidate must not hide the others
            row["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-300:]
        row["at_s"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        print(render([row], "", []).splitlines()[-1], flush=True)
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps({"header": header, "rows": rows, "skipped": skipped}, indent=1, default=str))

    print("\n" + render(rows, header, skipped), flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"header": header, "rows": rows, "skipped": skipped}, indent=1, default=str))
    print(f"wrote {a.out} ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
