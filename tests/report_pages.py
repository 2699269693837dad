"""A small merged report (three results dirs, a hostile kernel name, a repro folder with its draft) and its
index.html, for the page's parser and browser tests."""

from __future__ import annotations

from pathlib import Path

from parity import cli
from parity.results import OwnerKind, Status
from parity.triage.owner import make_owner
from tests.synthetic_records import rec, write_dir

HOSTILE = "<script>alert('kernel')</script>"
HOSTILE_REASON = "output 'out': 3% outside </pre><img src=x onerror=alert(1)> | tol"
REPRO = "repros/softmax__N=781"


def report_dirs(root: Path) -> list[Path]:
    cpu = {"machine": "cpu-box", "triton": "3.8.0"}
    author = make_owner(OwnerKind.AUTHOR, "kernel author", "fails the same on every tier")
    interp = write_dir(root, "interpret", {"backend": "interpret", **cpu}, [
        rec("interpret", "interpret", "softmax", "N=100", Status.PASSED),
        rec("interpret", "interpret", "softmax", "N=781", Status.FAILED, reason=HOSTILE_REASON, repro=REPRO,
            owner=author),
        rec("interpret", "interpret", "matmul", "M=100", Status.XFAILED,
            reason="known divergence: bf16 dot (https://github.com/triton-lang/triton/issues/1)"),
        rec("interpret", "interpret", HOSTILE, "N=1", Status.PASSED),
        *(rec("interpret", "interpret", "vector_add", f"N={n}", Status.PASSED) for n in (1, 7, 1000)),
    ])
    repro = interp / REPRO
    repro.mkdir(parents=True)
    (repro / "repro.py").write_text("raise SystemExit(1)\n")
    (repro / "AUTHOR.md").write_text(f"# softmax: a change in the kernel\n\n{HOSTILE}\n")
    ok = {"ok": True, "stage_reached": "ptx"}
    cuda_compile = write_dir(root, "cuda-compile", {"backend": "cuda-compile", **cpu}, [
        rec("cuda-compile", "compile", k, "N=1", Status.PASSED, compile=ok)
        for k in ("matmul", "softmax", "vector_add")])
    ascend_compile = write_dir(root, "ascend-compile", {"backend": "ascend-compile", **cpu}, [
        rec("ascend-compile", "compile", "matmul", "N=1", Status.FAILED, repro="repros/matmul__N=1",
            compile={"ok": False, "stage_reached": "bishengir", "error_kind": "ub_overflow",
                     "message": "ub overflow, requires 3145728 bits while 1572864 bits available"}),
        rec("ascend-compile", "compile", "softmax", "N=1", Status.PASSED, compile=ok),
    ])
    return [interp, cuda_compile, ascend_compile]


def build_page(root: Path) -> Path:
    """Run `parity report` over the dirs under `root`/reports; the path of the index.html it wrote."""
    dirs = report_dirs(root / "reports")
    out = root / "reports" / "DIVERGENCE.md"
    assert cli.main(["report", *map(str, dirs), "--out", str(out)]) == 0
    return root / "reports" / "index.html"
