"""Issue 30's kernel targets, old and new side by side, in one run on one GPU (about 4 minutes on an H200).

A benchmark script, not a test: it prints a table and writes it to --out (with the rows as JSON
beside it, --out + ".json"); it never asserts.

    python3 bench/kernels_old_vs_new.py --out /tmp/issue30.txt

Rows, in priority order (a group is not started after --budget-s seconds; the table says which):
- attention: flash_attention_tma at its perf shape (B=4, T=8192, H=32, D=128, bf16; non-causal, causal)
  beside SDPA, "new" (kernels/) and "old" (the kernel at b07746c, read from git) pinned to the same tile
  (PINNED), with the max abs difference to SDPA's output. Ratio = SDPA's time / ours (target >= 1.0).
- attention_ws: the new kernel pinned to each warp-specialized config of its list (flash_tma.WS_CONFIGS),
  in a child process, so a compiler abort or a hang costs only the rows not yet printed.
- gdn_chunk_fwd (B=1, T=65536, H=32, K=V=128, BT=64, fixed and varlen) beside fla-core 0.6.0:
  "new" runs kkt + solve_tril as one kernel (gdn_kkt_solve), "old" as two (the b07746c path), both
  autotuned. Ratio = ours / fla's time (targets: 1.0 fixed, 1.05 varlen).
- gdn_kkt_solve beside fla's fused kkt + solve kernel: "new" the fused kernel, "old" kkt then
  solve_tril (ratio = ours / fla; target 1.1 varlen).
- gdn_other: every other GDN kernel's perf cases beside fla (unchanged kernels; target 1.1 varlen).
Timing: triton.testing.do_bench (warmup 10 ms, rep 50 ms), first call outside the timed region;
the NaN prefill of outputs is off, as in the perf pass.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

OTHER_GDN = ("gdn_chunk_local_cumsum", "gdn_chunk_scaled_dot_kkt", "gdn_solve_tril", "gdn_recompute_w_u",
             "gdn_chunk_fwd_h", "gdn_chunk_fwd_o")
GROUPS = ("attention", "attention_ws", "gdn_chunk_fwd", "gdn_kkt_solve", "gdn_other")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True, help="write the table here (and the rows to OUT.json)")
    p.add_argument("--only", default=",".join(GROUPS), help=f"groups, in order (default: {','.join(GROUPS)})")
    p.add_argument("--budget-s", type=float, default=160.0, help="start no row after this many seconds")
    # "sdpa_ms_noncausal;sdpa_ms_causal": time the warp-specialized configs in this process
    p.add_argument("--ws-child", default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def bench_ms(fn: Callable[[], Any]) -> float:
    import torch
    from triton.testing import do_bench

    fn()  # compile and autotune outside the timed region
    torch.cuda.synchronize()
    return float(do_bench(fn, warmup=10, rep=50))


def spec_and_inputs(name: str) -> Iterator[tuple[Any, Any, Any]]:
    """(spec, case, device inputs) for each perf case of one spec."""
    from parity.perf.case import device_inputs
    from parity.spec import registry

    _, (spec,) = registry.build([name])
    for case in spec.perf_cases:
        yield spec, case, device_inputs(spec, case, 0, "cuda")[0]


def timed_row(kernel: str, case: str, version: str, ours: Callable[[], Any], peer: str, peer_ms: float | None,
              ratio_kind: str, target: float | None) -> dict[str, Any]:
    """One row: our time, the peer's, and the ratio the target reads (speed vs SDPA, or time vs fla)."""
    from parity.spec.context import backend_scope
    from parity.spec.inputs import unfilled

    row: dict[str, Any] = {"kernel": kernel, "case": case, "version": version, "peer": peer, "peer_ms": peer_ms,
                           "ratio_kind": ratio_kind, "target": target}
    try:
        with unfilled(), backend_scope("cuda"):
            row["ms"] = bench_ms(ours)
        if peer_ms:
            row["ratio"] = peer_ms / row["ms"] if ratio_kind == "speed" else row["ms"] / peer_ms
            if target is not None:
                row["meets"] = row["ratio"] >= target if ratio_kind == "speed" else row["ratio"] <= target
    except Exception as exc:  # one broken row must not hide the others
        row["error"] = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-300:]
    return row


def peer_ms(spec: Any, inputs: Any, p: Any) -> float | None:
    """The peer's (or, without one, the baseline's) time; None, with a line on stdout, when it fails."""
    from parity.spec.context import backend_scope
    from parity.spec.inputs import unfilled

    try:
        with unfilled(), backend_scope("cuda"):
            if spec.peer is not None:
                return None if spec.peer.unavailable() else bench_ms(spec.peer.prepare(inputs, p))
            return bench_ms(lambda: spec.baseline(inputs, p))
    except Exception as exc:
        print(f"{spec.name}: the peer failed: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
        return None


def case_name(case: Any) -> str:
    p = case.params
    if "causal" in p:
        return "causal" if p["causal"] else "non-causal"
    return "varlen" if p.get("seqlens") else "fixed"


# ---- groups ----

ATTENTION_SHAPE = (4, 8192, 32, 128)  # B, T, H, D: the spec's perf cases, bf16
# the tile both versions are pinned to (the best non-specialized one on the H200 before, 0.861x SDPA's speed):
# one compile a version and case instead of the whole autotune list, and the same tile isolates the code change
PINNED = (128, 128, 3, 8)


def attention_inputs(causal: bool) -> tuple[Any, Any, Any, Any]:
    """q, k, v [B, T, H, D] bf16 made on the device (seeded), and SDPA's output for the error column."""
    import torch

    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(ATTENTION_SHAPE, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(3))
    return q, k, v, sdpa(q, k, v, causal)


def sdpa(q: Any, k: Any, v: Any, causal: bool) -> Any:
    import torch.nn.functional as F

    return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                          is_causal=causal).transpose(1, 2)


def attention_row(version: str, fn: Callable[[], Any], expect: Any, causal: bool, sdpa_ms: float) -> dict[str, Any]:
    row = timed_row("flash_attention_tma", "causal" if causal else "non-causal", version, fn, "SDPA", sdpa_ms,
                    "speed", 1.0)
    if "error" not in row:
        row["max_abs_err_vs_sdpa"] = float((fn().float() - expect.float()).abs().max())
    return row


def pin(tuner: Any, config: Any) -> None:
    tuner.configs, tuner.cache = [config], {}


OLD_ATTENTION = ("b07746c", "kernels/attention/flash_tma.py")  # the kernel before issue 30's changes


def module_at(commit: str, path: str) -> Any:
    """A module of this repository as it was at `commit`, read with `git show` (a clone is needed) and loaded
    from a file under parity's cache, so Triton reads the kernel's source from there."""
    import importlib.util

    from parity.paths import cache_root

    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"], capture_output=True, text=True,
                           check=False)
    if shown.returncode != 0:
        raise RuntimeError(f"git show {commit}:{path} failed (run the bench from a clone of parity): "
                           f"{shown.stderr.strip()[:200]}")
    where = cache_root() / "bench-sources" / commit / path
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(shown.stdout, encoding="utf-8")
    name = f"{Path(path).stem}_at_{commit}"
    spec = importlib.util.spec_from_file_location(name, where)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def attention_rows(sdpa_ms: dict[bool, float]) -> Iterator[dict[str, Any]]:
    """Old and new kernels pinned to the same tile, beside SDPA (timed here; kept for the WS children)."""
    from kernels.attention import flash_tma as new

    try:
        old = module_at(*OLD_ATTENTION)
    except Exception as exc:  # no git here: the new kernel's rows still come
        old = None
        yield {"kernel": "flash_attention_tma", "case": "-", "version": f"old ({OLD_ATTENTION[0]})",
               "error": f"{type(exc).__name__}: {exc}"[:300]}
    bm, bn, st, w = PINNED
    if old is not None:
        pin(old.flash_attention_tma_kernel, triton_config({"BM": bm, "BN": bn}, st, w))
    pin(new.flash_attention_tma_kernel, new._config(bm, bn, st, w))
    for causal in (False, True):
        q, k, v, expect = attention_inputs(causal)
        sdpa_ms[causal] = bench_ms(partial(sdpa, q, k, v, causal))
        yield attention_row(f"new, BM={bm} BN={bn} st={st} w={w}", partial(new.flash_attention_tma, q, k, v, causal),
                            expect, causal, sdpa_ms[causal])
        if old is not None:
            old_fn = partial(old.flash_attention_tma, q, k, v, causal)
            yield attention_row(f"old ({OLD_ATTENTION[0]}), same tile", old_fn, expect, causal, sdpa_ms[causal])


def triton_config(kwargs: dict[str, Any], stages: int, warps: int) -> Any:
    import triton

    return triton.Config(kwargs, num_stages=stages, num_warps=warps)


def ws_rows(sdpa_ms: dict[bool, float], budget_left: Callable[[], float]) -> Iterator[dict[str, Any]]:
    """The warp-specialized configs of the new kernel's list, timed in one child process: a compiler
    abort or a hang there loses the rows not yet printed, never the parent's."""
    from kernels.attention import flash_tma

    cmd = [sys.executable, str(Path(__file__).resolve()), "--out", "/dev/null", "--ws-child",
           f"{sdpa_ms.get(False, 0.0)};{sdpa_ms.get(True, 0.0)}"]
    expected = 2 * len(flash_tma.WS_CONFIGS)
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=max(60.0, min(150.0, budget_left())))
        out, err, why = done.stdout, done.stderr, f"child exited {done.returncode}"
    except subprocess.TimeoutExpired as exc:
        out, err, why = _text(exc.stdout), _text(exc.stderr), "child timed out (a hang or a slow compile)"
    rows = [json.loads(line[5:]) for line in out.splitlines() if line.startswith("ROW: ")]
    yield from rows
    if len(rows) < expected:
        tail = " | ".join((err or out).strip().splitlines()[-3:])[-300:]
        yield {"kernel": "flash_attention_tma", "case": "-", "version": f"WS: {expected - len(rows)} rows missing",
               "error": f"{why}: {tail}"}


def _text(data: bytes | str | None) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")


def ws_child(arg: str) -> None:
    """Time the new kernel pinned to each warp-specialized config, both cases; print ROW: lines as they come."""
    from kernels.attention import flash_tma

    ms = [float(x) for x in arg.split(";")]
    for config in flash_tma.WS_CONFIGS:
        pin(flash_tma.flash_attention_tma_kernel, config)
        bm, bn, st, w = config.kwargs["BM"], config.kwargs["BN"], config.num_stages, config.num_warps
        for causal in (False, True):
            q, k, v, expect = attention_inputs(causal)
            sdpa_ms = ms[int(causal)] or bench_ms(partial(sdpa, q, k, v, causal))
            row = attention_row(f"new, WS BM={bm} BN={bn} st={st} w={w}",
                                partial(flash_tma.flash_attention_tma, q, k, v, causal), expect, causal, sdpa_ms)
            print("ROW: " + json.dumps(row), flush=True)


def old_chunk_fwd(inputs: Any, p: Any) -> Any:
    """The b07746c composition: kkt and solve_tril as two kernels, A in fp32 through memory."""
    from kernels import gdn
    from kernels.gdn.chunk_h import chunk_fwd_h
    from kernels.gdn.chunk_o import chunk_fwd_o
    from kernels.gdn.cumsum import chunk_local_cumsum
    from kernels.gdn.kkt import chunk_scaled_dot_kkt
    from kernels.gdn.solve_tril import solve_tril
    from kernels.gdn.wy import recompute_w_u

    q, k, v, beta, cu, BT = inputs["q"], inputs["k"], inputs["v"], inputs["beta"], gdn.cu_of(inputs), p["BT"]
    ci = gdn.prepare_chunk_indices(cu, BT) if cu is not None else None
    g_c = chunk_local_cumsum(inputs["g"], BT, cu_seqlens=cu, chunk_indices=ci)
    A = chunk_scaled_dot_kkt(k, beta, g_c, BT, cu, ci)
    Ai = solve_tril(A, cu, k.dtype, ci)
    w, u = recompute_w_u(k, v, beta, Ai, g_c, cu, ci)
    h, v_new, ht = chunk_fwd_h(k, w, u, g_c, inputs.get("h0"), True, BT, cu)
    return chunk_fwd_o(q, k, v_new, h, g_c, p["K"] ** -0.5, BT, cu, ci), ht


def gdn_chunk_fwd_rows() -> Iterator[dict[str, Any]]:
    for spec, case, inputs in spec_and_inputs("gdn_chunk_fwd"):
        p, name = case.params, case_name(case)
        fla = peer_ms(spec, inputs, p)
        target = 1.05 if name == "varlen" else 1.0
        yield timed_row(spec.name, name, "new", partial(spec.launch, inputs, p), "fla", fla, "time", target)
        yield timed_row(spec.name, name, "old (b07746c)", partial(old_chunk_fwd, inputs, p), "fla", fla, "time",
                        target)


def gdn_kkt_solve_rows() -> Iterator[dict[str, Any]]:
    from kernels import gdn
    from kernels.gdn.kkt import chunk_scaled_dot_kkt
    from kernels.gdn.solve_tril import solve_tril

    def old(inputs: Any) -> Any:
        cu, k = gdn.cu_of(inputs), inputs["k"]
        return solve_tril(chunk_scaled_dot_kkt(k, inputs["beta"], inputs.get("g_cumsum"), 64, cu), cu, k.dtype)

    for spec, case, inputs in spec_and_inputs("gdn_kkt_solve"):
        p, name = case.params, case_name(case)
        fla = peer_ms(spec, inputs, p)
        yield timed_row(spec.name, name, "new", partial(spec.launch, inputs, p), "fla", fla, "time", 1.1)
        yield timed_row(spec.name, name, "old: kkt, solve_tril", partial(old, inputs), "fla", fla, "time", 1.1)


def gdn_other_rows() -> Iterator[dict[str, Any]]:
    import torch

    for name in OTHER_GDN:
        for spec, case, inputs in spec_and_inputs(name):
            p, which = case.params, case_name(case)
            fla = peer_ms(spec, inputs, p)
            target = spec.perf_target.max_time_vs_peer if spec.perf_target and which == "fixed" else 1.1
            yield timed_row(spec.name, which, "unchanged", partial(spec.launch, inputs, p), "fla", fla, "time",
                            target)
        torch.cuda.empty_cache()


# ---- output ----

def render(rows: list[dict[str, Any]], header: str, not_reached: list[str]) -> str:
    lines = [header, "",
             f"{'kernel':<26} {'case':<11} {'version':<40} {'ours ms':>9} {'peer':<5} {'peer ms':>9} "
             f"{'ratio':>7}  target"]
    for r in rows:
        head = f"{r['kernel']:<26} {r['case']:<11} {r['version'][:40]:<40}"
        if "error" in r:
            lines.append(f"{head} error: {r['error'][:160]}")
            continue
        peer_ms_s = f"{r['peer_ms']:9.4f}" if r.get("peer_ms") else f"{'-':>9}"
        ratio = f"{r['ratio']:7.3f}" if r.get("ratio") is not None else f"{'-':>7}"
        if r.get("meets") is None:
            verdict = ""
        else:
            sign = ">=" if r["ratio_kind"] == "speed" else "<="
            what = "x SDPA's speed" if r["ratio_kind"] == "speed" else "x fla's time"
            verdict = f"{sign} {r['target']} ({what}): {'met' if r['meets'] else 'MISSED'}"
        lines.append(f"{head} {r['ms']:9.4f} {r['peer']:<5} {peer_ms_s} {ratio}  {verdict}")
    if not_reached:
        lines += ["", "not reached within --budget-s: " + ", ".join(not_reached)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    a = parse_args(argv)
    if a.ws_child:
        ws_child(a.ws_child)
        return
    import torch
    import triton

    header = (f"{torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}; "
              "ratio: SDPA ms / ours (attention), ours / fla ms (GDN)")
    print(header, flush=True)
    t0 = time.perf_counter()
    budget_left = lambda: a.budget_s - (time.perf_counter() - t0)  # noqa: E731
    sdpa_ms: dict[bool, float] = {}
    sources: dict[str, Callable[[], Iterator[dict[str, Any]]]] = {
        "attention": lambda: attention_rows(sdpa_ms), "attention_ws": lambda: ws_rows(sdpa_ms, budget_left),
        "gdn_chunk_fwd": gdn_chunk_fwd_rows, "gdn_kkt_solve": gdn_kkt_solve_rows, "gdn_other": gdn_other_rows}
    groups = [g.strip() for g in a.only.split(",") if g.strip()]
    unknown = [g for g in groups if g not in sources]
    if unknown:
        raise SystemExit(f"--only: unknown group(s) {unknown}; choose from {list(sources)}")
    rows: list[dict[str, Any]] = []
    not_reached: list[str] = []
    for i, group in enumerate(groups):
        if budget_left() <= 0:
            not_reached += groups[i:]
            break
        try:
            for row in sources[group]():
                row["at_s"] = round(time.perf_counter() - t0, 1)
                rows.append(row)
                print(render([row], "", []).splitlines()[-1], flush=True)
                if budget_left() <= 0:
                    not_reached.append(f"the rest of {group}")
                    break
        except Exception as exc:  # inputs or imports of a whole group
            rows.append({"kernel": group, "case": "-", "version": "-",
                         "error": "".join(traceback.format_exception_only(type(exc), exc)).strip()[-300:]})
        torch.cuda.empty_cache()
    table = render(rows, header, not_reached)
    print("\n" + table, flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(table)
    Path(str(a.out) + ".json").write_text(json.dumps(rows, indent=1))
    print(f"wrote {a.out} and {a.out}.json ({time.perf_counter() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
