"""Triton versions as columns: one backend on two versions gives `version` divergences, not backend ones.

Synthetic records only: a negative control (the same results on two versions: nothing) and positive
controls for each check (status, compile, a new error, registers and shared memory beyond 20 %, a
changed compile count), through the cli so that labels and DIVERGENCE.md are covered too.
"""

from __future__ import annotations

from parity import cli
from parity.report import versions
from parity.report.divergence import Column
from parity.results import Status
from tests.test_divergence import rec, write_dir


def cuda_compile(ok=True, n_regs=40, shared=0, error_kind=None, message=None):
    return {"ok": ok, "stage_reached": "cubin" if ok else "ttgir", "error_kind": None if ok else error_kind,
            "message": message, "n_regs": n_regs if ok else None, "shared_bytes": shared if ok else None}


def same_everywhere():
    return [rec("cuda-compile", "compile", "softmax", "N=100", Status.PASSED,
                compile=cuda_compile(n_regs=40, shared=64), compiles=1),
            rec("cuda-compile", "compile", "matmul", "BM=64", Status.PASSED,
                compile=cuda_compile(n_regs=128, shared=32768), compiles=1)]


def test_the_same_results_on_two_versions_are_no_divergence(tmp_path):
    """Negative control, also with small resource moves (within 20 %)."""
    old = same_everywhere()
    new = same_everywhere()
    new[1]["compile"]["n_regs"] = 150  # +17 %
    a = write_dir(tmp_path, "cuda-compile@triton-3.2.0", {"backend": "cuda-compile", "triton": "3.2.0"}, old)
    b = write_dir(tmp_path, "cuda-compile@triton-3.9.0", {"backend": "cuda-compile", "triton": "3.9.0"}, new)
    out = tmp_path / "D.md"
    assert cli.main(["report", str(a), str(b), "--out", str(out)]) == 0
    text = out.read_text()
    assert "0 divergence(s) across 2 results dir(s)" in text, text
    assert "cuda-compile@triton-3.2.0" in text and "cuda-compile@triton-3.9.0" in text  # labels: the dir names


def test_each_version_change_is_a_version_divergence_naming_both_versions(tmp_path):
    old = [*same_everywhere(),
           rec("cuda-compile", "compile", "gdn_kkt", "T=64", Status.FAILED, repro="repros/gdn_kkt__T=64",
               compile=cuda_compile(ok=False, error_kind="unsupported", message="AttributeError: no tl.gather")),
           rec("cuda-compile", "compile", "attn", "D=64", Status.FAILED,
               compile=cuda_compile(ok=False, error_kind="unsupported", message="frontend")),
           rec("cuda-compile", "specialization", "tril", "T=*", Status.PASSED, compiles=3, suite="specialization")]
    new = same_everywhere()
    new[0]["compile"].update(n_regs=64)  # +60 % registers
    new[1]["compile"].update(shared_bytes=65536)  # shared memory doubles
    new += [rec("cuda-compile", "compile", "gdn_kkt", "T=64", Status.PASSED, compile=cuda_compile()),
            rec("cuda-compile", "compile", "attn", "D=64", Status.FAILED,
                compile=cuda_compile(ok=False, error_kind="mlir_error", message="PassManager::run failed")),
            rec("cuda-compile", "specialization", "tril", "T=*", Status.PASSED, compiles=9, suite="specialization")]
    # a compile that fails on one version: its compile count is no specialization finding
    old.append(rec("cuda-compile", "compile", "gdn_kkt", "T=64;BK=64", Status.FAILED, compiles=1,
                   compile=cuda_compile(ok=False, error_kind="crash", message="SIGABRT")))
    new.append(rec("cuda-compile", "compile", "gdn_kkt", "T=64;BK=64", Status.PASSED, compiles=3,
                   compile=cuda_compile()))
    interp_old = [rec("interpret", "interpret", "cumsum", "T=64", Status.ERROR,
                      reason="AttributeError: module 'triton.language' has no attribute 'cumsum'")]
    interp_new = [rec("interpret", "interpret", "cumsum", "T=64", Status.PASSED)]
    dirs = [write_dir(tmp_path, "cuda-compile@triton-3.2.0", {"backend": "cuda-compile", "triton": "3.2.0"}, old),
            write_dir(tmp_path, "cuda-compile", {"backend": "cuda-compile", "triton": "3.9.0"}, new),
            write_dir(tmp_path, "interpret@triton-3.2.0", {"backend": "interpret", "triton": "3.2.0"}, interp_old),
            write_dir(tmp_path, "interpret", {"backend": "interpret", "triton": "3.9.0"}, interp_new)]
    out = tmp_path / "D.md"
    assert cli.main(["report", *map(str, dirs), "--out", str(out)]) == 0
    text = out.read_text()
    assert "### version (" in text and "6 version" in text, text  # two gdn_kkt cases: one finding
    assert "compile count 1 on" not in text
    for kind in ("numeric", "compile", "specialization"):  # versions are not backends
        assert f"### {kind} (" not in text, kind
    assert "does not compile on triton 3.2.0; compiles on triton 3.9.0" in text and "(2 cases; e.g. this one)" in text
    assert r"a different compile error on triton 3.9.0 (mlir\_error) than on triton 3.2.0 (unsupported)" in text
    assert "registers 40 on triton 3.2.0 → 64 on triton 3.9.0" in text
    assert "shared memory bytes 32768 on triton 3.2.0 → 65536 on triton 3.9.0" in text
    assert "compile count 3 on triton 3.2.0, 9 on triton 3.9.0" in text
    assert "error on triton 3.2.0, passed on triton 3.9.0" in text and "has no attribute" in text
    assert "(cuda-compile@triton-3.2.0/repros/gdn_kkt__T=64)" in text  # the repro of the failing version
    assert "**cuda-compile**: compiled (40 registers" in text  # the default dir keeps the backend's name


def test_backends_compare_at_their_main_version_and_versions_pair_in_order():
    def col(label, backend, version):
        return Column(label, backend, "compile", {"triton": version})

    cols = [col("cc@3.2", "cuda-compile", "3.2.0"), col("cc", "cuda-compile", "3.10.0"),
            col("cc@3.9", "cuda-compile", "3.9.0"), col("ac", "ascend-compile", "3.2.0")]
    primary, spans = versions.split_columns(cols)
    assert [c.label for c in primary] == ["cc", "ac"]  # 3.10 is newer than 3.9
    assert [c.label for c in spans["cuda-compile"]] == ["cc@3.2", "cc@3.9", "cc"]
    assert "ascend-compile" not in spans
    # the default session's dir (labelled by the backend alone) sets the version backends compare at
    cols[1] = col("cuda-compile", "cuda-compile", "3.8.0")
    primary, spans = versions.split_columns(cols)
    assert [c.label for c in primary] == ["cuda-compile", "ac"]
    assert [c.label for c in spans["cuda-compile"]] == ["cc@3.2", "cuda-compile", "cc@3.9"]
