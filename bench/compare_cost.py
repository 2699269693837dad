"""What does comparing outputs with the fp64 reference cost, and where does it go? Before and after.

A benchmark script, not a test: it prints figures and never asserts. CPU only; no kernel runs.

    python bench/compare_cost.py                                  # gdn and basics, quick cases
    python bench/compare_cost.py --kernels gdn --level full --before add9468 --profile

For every case of the chosen specs it builds the inputs and the fp64 reference (parity's reference
cache), makes a stand-in output (the reference rounded to the case dtype, so the statistics see
realistic errors), and times `compare_outputs` the way the accuracy pass calls it, plus the spec's
extra check. `--before COMMIT` loads parity/run/compare.py as it was at that commit and times it on
the same outputs, so one run prints both figures; `--profile` prints where the time goes (the top
functions by own time over all cases).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import pstats
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernels", default="gdn,basics", help="kernel names or families (default gdn,basics)")
    p.add_argument("--level", default="quick", choices=("quick", "full"))
    p.add_argument("--before", default=None, help="a git commit whose parity/run/compare.py to time as well")
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions per case (the minimum counts)")
    p.add_argument("--profile", action="store_true", help="print the top functions by own time")
    p.add_argument("--threads", type=int, default=1, help="torch threads (an xdist worker gets one core)")
    p.add_argument("--synthetic", type=int, nargs="*", default=(),
                   help="also time outputs of these sizes (elements): randn fp64 reference, bf16-rounded output")
    return p.parse_args(argv)


def compare_at(commit: str) -> ModuleType:
    """parity/run/compare.py as it was at `commit`, imported under another name."""
    text = subprocess.run(["git", "show", f"{commit}:parity/run/compare.py"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "compare_before.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("compare_before", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["compare_before"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def stand_in(ref: Any, dtype: Any) -> Any:
    """The reference rounded to the case dtype: an output with a kernel's kind of error."""
    return ref.to(dtype).to(ref.dtype) if ref.is_floating_point() else ref


def prepared(kernels: str, level: str) -> list[tuple[str, Callable[[Any], Any]]]:
    """(case label, run(compare function)) for every case: inputs and references made up front."""
    import torch

    from parity.run import runner
    from parity.run.refcache import ReferenceCache
    from parity.spec import DTYPES, registry
    from parity.spec.inputs import as_fp64

    _, specs = registry.build([k.strip() for k in kernels.split(",")])
    cache = ReferenceCache()
    out: list[tuple[str, Callable[[Any], Any]]] = []
    for spec in specs:
        if spec.compile_only or spec.family not in ("gdn", "basics", "attention", "planted"):
            continue
        for case in spec.cases(level):
            try:
                inputs = runner.build_inputs(spec, case, 0)
                ref = runner.reference_outputs(spec, case, inputs, cache)
            except Exception as exc:  # a case this host cannot build is left out, and said so
                print(f"  skip {spec.name}[{case.id}]: {type(exc).__name__}: {str(exc)[:80]}")
                continue
            dtype = DTYPES.get(case.params.get("dtype", "fp32"), torch.float32)
            outputs = {k: stand_in(v, dtype) for k, v in ref.items()}
            tol = spec.tolerance_for(case.params)
            fp64_inputs = as_fp64(inputs) if spec.extra_check else None

            def run(compare_fn: Any, spec: Any = spec, case: Any = case, outputs: Any = outputs, ref: Any = ref,
                    tol: Any = tol, fp64_inputs: Any = fp64_inputs) -> Any:
                metrics = [compare_fn(outputs[k], r, tol, spec.out_dims.get(k),
                                      spec.valid(k, case.params, r.shape) if spec.valid else None, k)
                           for k, r in ref.items()]
                if spec.extra_check is not None:
                    spec.extra_check(fp64_inputs, {k: v.double() for k, v in outputs.items()}, case.params)
                return metrics

            out.append((f"{spec.name}[{case.id}]", run))
    return out


def synthetic(sizes: list[int]) -> list[tuple[str, Callable[[Any], Any]]]:
    import torch

    from parity.spec import Tolerance

    out = []
    for n in sizes:
        ref = torch.randn(n, generator=torch.Generator().manual_seed(n), dtype=torch.float64)
        bf16 = ref.to(torch.bfloat16)
        tol = Tolerance(rtol=1.6e-2, atol=1e-5)
        out.append((f"synthetic n={n} bf16", lambda fn, bf16=bf16, ref=ref, tol=tol: fn(bf16, ref, tol)))
    return out


def timed(cases: list[tuple[str, Callable[[Any], Any]]], impls: list[tuple[str, Any]],
          repeat: int) -> dict[str, dict[str, float]]:
    """{impl: {case: best seconds}}; the implementations take turns on each case, so a busy host
    slows them alike."""
    figures: dict[str, dict[str, float]] = {name: {} for name, _ in impls}
    for label, run in cases:
        for _ in range(repeat):
            for name, fn in impls:
                t0 = time.perf_counter()
                run(fn)
                elapsed = time.perf_counter() - t0
                figures[name][label] = min(figures[name].get(label, float("inf")), elapsed)
    return figures


def main(argv: list[str] | None = None) -> None:
    a = parse_args(argv)
    import torch

    from parity.run import compare

    torch.set_num_threads(a.threads)
    cases = (prepared(a.kernels, a.level) if a.kernels else []) + synthetic(a.synthetic)
    print(f"{len(cases)} case(s) of {a.kernels} ({a.level}), {a.threads} thread(s), min of {a.repeat}")
    impls = [("now", compare.compare)]
    if a.before:
        impls.insert(0, (f"at {a.before}", compare_at(a.before).compare))
    results = timed(cases, impls, a.repeat)
    for name, figures in results.items():
        top = sorted(figures.items(), key=lambda kv: -kv[1])[:5]
        print(f"{name:>14}: {sum(figures.values()):.3f} s in all; slowest: "
              + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in top))
    if a.before:
        before, now = (sum(r.values()) for r in results.values())
        print(f"{'ratio':>14}: now / before = {now / before:.2f}")
    if a.profile:
        for name, fn in impls:
            prof = cProfile.Profile()
            prof.enable()
            for _, run in cases:
                run(fn)
            prof.disable()
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(14)
            print(f"--- profile ({name}), by own time ---")
            print("\n".join(line for line in text.getvalue().splitlines()[6:] if line.strip()))


if __name__ == "__main__":
    main()
