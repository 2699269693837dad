"""Size (and time to write) of reports/index.html for a big merged report, beside its DIVERGENCE.md.

    python bench/html_page.py [--kernels 200] [--cases 40] [--fail-every 7]

Synthetic results dirs (interpret, cuda-compile, ascend-compile) with `--kernels` kernels of `--cases` cases each;
every `--fail-every`-th case fails with a compiler-like message of a few hundred characters and a repro folder
holding a draft. Runs `parity report` over them in a temporary dir and prints the bytes of each file and the
wall time of the report. Prints, never asserts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parity import cli
from parity.results import empty_record

TIERS = (("interpret", "interpret"), ("cuda-compile", "compile"), ("ascend-compile", "compile"))
MESSAGE = ("error: failed to legalize operation 'tt.dot' that was explicitly marked illegal; "
           "loc(\"kernel.py\":{line}:12): the block shape [{bm}, 64] x [64, 128] needs {bits} bits of UB "
           "while 1572864 bits are available on Ascend910B3 " + "(context " * 20 + ")")


def record(tier: str, mode: str, kernel: str, case: int, failing: bool, repro: str | None) -> dict[str, object]:
    r = empty_record(tier, mode, kernel, f"N={case},BM={16 << (case % 4)}", {"N": case})
    r.update(status="failed" if failing else "passed", suite="compile" if mode == "compile" else "accuracy",
             tolerance={"rtol": 1e-3, "atol": 1e-5})
    if mode == "compile":
        r["compile"] = {"ok": not failing, "stage_reached": "ttir" if failing else "bishengir",
                        "message": MESSAGE.format(line=case, bm=16 << (case % 4), bits=3145728) if failing else None}
    else:
        r["metrics"] = {"err_ratio": 0.5 if failing else 1e-5, "max_tol_ratio": 40.0 if failing else 0.1}
        r["reason"] = MESSAGE.format(line=case, bm=64, bits=0) if failing else None
    r["repro"] = repro
    return r


def write_dirs(root: Path, kernels: int, cases: int, fail_every: int) -> list[Path]:
    dirs = []
    for tier, mode in TIERS:
        d = root / tier
        records = []
        for k in range(kernels):
            for c in range(cases):
                failing = (k * cases + c) % fail_every == 0
                repro = f"repros/k{k:03d}__N={c}" if failing else None
                if repro:
                    (d / repro).mkdir(parents=True)
                    (d / repro / "repro.py").write_text("raise SystemExit(1)\n")
                    (d / repro / "ISSUE.md").write_text("# a draft\n\n" + "text of the draft " * 100 + "\n")
                records.append(record(tier, mode, f"kernel_{k:03d}", c, failing, repro))
        d.mkdir(parents=True, exist_ok=True)
        (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        (d / "env.json").write_text(json.dumps({"backend": tier, "triton": "3.8.0"}))
        dirs.append(d)
    return dirs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernels", type=int, default=200)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--fail-every", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="parity-html-bench-") as tmp:
        root = Path(tmp) / "reports"
        dirs = write_dirs(root, args.kernels, args.cases, args.fail_every)
        n = sum(len((d / "results.jsonl").read_text().splitlines()) for d in dirs)
        page_s = []
        write = cli.index_page.write

        def timed(*a: object, **kw: object) -> Path:
            began = time.perf_counter()
            try:
                return write(*a, **kw)  # type: ignore[arg-type]
            finally:
                page_s.append(time.perf_counter() - began)

        cli.index_page.write = timed  # type: ignore[assignment]
        began = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(["report", *map(str, dirs), "--out", str(root / "DIVERGENCE.md")])
        wall_s = time.perf_counter() - began
        print(f"{n} records in {len(dirs)} results dirs ({args.kernels} kernels x {args.cases} cases each; "
              f"every {args.fail_every}th fails); parity report exit {code}, {wall_s:.1f} s, of which "
              f"index.html {sum(page_s):.1f} s")
        for name in ("DIVERGENCE.md", "index.html", "divergence.png"):
            path = root / name
            print(f"  {name}: {path.stat().st_size / 1e6:.2f} MB" if path.exists() else f"  {name}: not written")


if __name__ == "__main__":
    main()
