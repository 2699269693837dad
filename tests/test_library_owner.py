"""Issue drafts for a library's kernels go to the library, or stay with the compiler, by a written rule."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from parity.backends import get_backend
from parity.driver import pipeline
from parity.report.backend_md import render_report
from parity.report.portability import cell
from parity.repro import compile_repro
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from parity.triage import decide
from parity.triage import library_rule as owner
from tests import planted_prefill


def _in_library(name: str) -> object:
    def kernel() -> None: ...
    kernel.__module__ = name
    return kernel


@pytest.mark.parametrize(("family", "kernels", "expected"), [
    ("flag_gems", (), "FlagGems"),
    ("liger", (), "Liger-Kernel"),
    ("mine", (_in_library("fla.ops.utils.cumsum"),), "fla (flash-linear-attention)"),
    ("mine", ("liger_kernel.ops.rms_norm:_rms_norm_forward_kernel",), "Liger-Kernel"),  # a label: not importable
    ("controls", (planted_prefill.relu_short_kernel,), None),  # parity's own kernels have no library
])
def test_the_library_is_found_by_family_or_by_the_kernels_package(family, kernels, expected):
    found = owner.library_of(family, kernels)
    assert (found.name if found else None) == expected


def _rec(status: str, reason: str = "", kind: str | None = None) -> dict:
    comp = {"error_kind": kind, "ok": False} if kind else None
    return {"status": status, "reason": reason, "compile": comp, "kernel": "k", "case": "N=1"}


@pytest.mark.parametrize(("record", "library_owns"), [
    (_rec("failed", "output 'y': 3 non-finite value(s)"), True),  # wrong result
    (_rec("failed", "ub overflow, requires 2621696 bits while 1572864 bits available", "ub_overflow"), True),
    (_rec("failed", "too much shared memory", "out_of_resources"), True),  # a config the library chose
    (_rec("failed", "[ConvertLinalgRToBinary] encounters error: Cc overflow", "cc_overflow"), True),  # cube buffer
    (_rec("error", "libraries._load.LibraryImportError: import error: importing fla raised ..."), True),
    (_rec("error", "AttributeError: module 'triton.language.extra' has no attribute 'cann'"), True),  # missing API
    (_rec("error", "ModuleNotFoundError: No module named 'triton.language.extra.cann'"), True),
    (_rec("error", "ImportError: cannot import name 'libdevice' from 'triton.language.math'"), True),
    (_rec("failed", "unsupported ...: TypeError(\"max() got an unexpected keyword argument 'propagate_nan'\")",
          "unsupported"), True),  # a triton-ascend-only keyword on upstream
    (_rec("failed", "launch: KeyError: 'Keyword argument enable_ubuf_saving was specified but unrecognised'",
          "launch_option"), True),  # a launch option this triton(-ascend) does not take
    (_rec("failed", "launch: KeyError: 'Keyword argument enable_ubuf_saving was specified but unrecognised'"),
     True),  # the same where the compile tier leaves error_kind empty
    (_rec("error", "triton.runtime.errors.InterpreterError: AttributeError(\"'int' object has no attribute 'to'\")"),
     False),  # the interpreter's gap on valid code, not a triton API the library reached for
    (_rec("failed", "error: failed to legalize operation 'tt.dot'", "mlir_error"), False),  # frontend: compiler's
    (_rec("failed", "Unsupported op in the frontend", "unsupported"), False),
    (_rec("failed", "Segmentation fault", "crash"), False),  # a compiler crash
    (_rec("crashed", "CUDA error: an illegal memory access"), False),
    (_rec("xfailed", "known divergence: ..."), False),
])
def test_the_rule_splits_library_and_compiler_failures(record, library_owns):
    assert (owner.library_owns(record) is not None) == library_owns


def _library_failure(results: Path) -> dict:
    """A library op (family flag_gems) that leaves its own output's tail unwritten, run and repro'd."""
    spec = replace(planted_prefill.relu_own_output, family="flag_gems")
    backend, cache = get_backend("interpret"), ReferenceCache(enabled=False)
    case = spec.cases("quick")[0]
    record, _ = run_case(spec, case, backend, seed=0, cache=cache)
    assert record["status"] == "failed"
    pipeline.judge_and_repro(record, spec, case, backend, seed=0, cache=cache, results_dir=results)
    return record


def test_a_library_failure_is_drafted_to_the_library_and_reported_as_its_finding(tmp_path):
    record = _library_failure(tmp_path)
    assert record["finding_of"]["name"] == "FlagGems"
    folder = tmp_path / record["repro"]
    draft = (folder / "ISSUE.md").read_text()
    assert "https://github.com/FlagOpen/FlagGems/issues/new" in draft and "the library's finding" in draft
    assert not (folder / "AUTHOR.md").exists() and not list(folder.glob("ISSUE-*.md"))  # no compiler drafts
    report = render_report([record], {"backend": "interpret"})
    assert "## Findings of the libraries under test" in report and "FlagGems" in report
    assert cell([record]).startswith("FlagGems")


def test_an_import_failure_without_a_launch_still_gets_the_library_draft(tmp_path):
    def launch(inputs, p):
        raise RuntimeError("import error: importing flag_gems.ops.softmax raised RuntimeError: No device")

    spec = replace(planted_prefill.relu_own_output, family="flag_gems", launch=launch)
    backend, cache = get_backend("interpret"), ReferenceCache(enabled=False)
    case = spec.cases("quick")[0]
    record, _ = run_case(spec, case, backend, seed=0, cache=cache)
    pipeline.judge_and_repro(record, spec, case, backend, seed=0, cache=cache, results_dir=tmp_path)
    draft = (tmp_path / record["repro"] / "ISSUE.md").read_text()
    assert 'TRITON_INTERPRET=1 python -c "import flag_gems.ops.softmax"' in draft
    assert "fails to import" in draft


def _compile_record(kind: str, message: str) -> dict:
    return {"status": "failed", "kernel": "liger_ce", "case": "V=32000", "reason": message,
            "compile": {"ok": False, "error_kind": kind, "message": message, "kernel": "liger_cross_entropy_kernel",
                        "stage_reached": "bishengir", "ub_bits": 2621696 if kind == "ub_overflow" else None,
                        "ub_limit_bits": 1572864 if kind == "ub_overflow" else None}}


def test_compile_findings_go_to_the_library_or_to_the_compiler(tmp_path):
    kernels = ("liger_kernel.ops.cross_entropy:liger_cross_entropy_kernel",)
    ub = _compile_record("ub_overflow", "ub overflow, requires 2621696 bits while 1572864 bits available")
    assert owner.mark(ub, "liger", kernels) is not None
    compile_repro.write_repro(tmp_path / "ub", "print()", ub, {}, "ascend-compile")
    draft = (tmp_path / "ub" / "ISSUE.md").read_text()
    assert "https://github.com/linkedin/Liger-Kernel/issues/new" in draft and "requires 2621696 bits" in draft

    frontend = _compile_record("unsupported", "libdevice.rsqrt: empty stub")  # the compiler's, by the rule
    assert owner.mark(frontend, "liger", kernels) is None and frontend["library"]["name"] == "Liger-Kernel"
    # the evidence that makes it the compiler's: upstream compiles the same case
    frontend["backend"] = "ascend-compile"
    frontend["owner"] = decide(frontend, {"cuda-compile": {"backend": "cuda-compile", "status": "passed"}})
    assert frontend["owner"].who == "triton-ascend" and not frontend["owner"].provisional
    compile_repro.write_repro(tmp_path / "fe", "print()", frontend, {}, "ascend-compile")
    vendor = (tmp_path / "fe" / "ISSUE.md").read_text()
    assert "triton-lang/triton-ascend" in vendor and "ships in Liger-Kernel" in vendor  # named, not addressed
    assert "github.com/linkedin/Liger-Kernel/issues" not in vendor


def test_a_launcher_error_on_a_compile_tier_reads_as_a_launch_not_a_code_generator_error():
    from parity.run.compile_judge import judge

    # ascend-compile records a launcher that raised before compiling as ok=False with no error kind
    status, reason = judge({"ok": False, "error_kind": None, "message": "LeftoverDebug: device_print"}, None)
    assert (status, reason) == ("failed", "launch: LeftoverDebug: device_print")
    status, reason = judge({"ok": False, "error_kind": "unsupported", "message": "m"}, None)
    assert reason == "unsupported in the code generator, before any IR: m"  # control: a compiler finding


def test_a_library_records_the_ascend_modules_the_installed_triton_ascend_lacks():
    """LibraryAdapter.ascend_needs is probed on triton-ascend tiers alone and kept on the record for triage."""
    from parity.spec.library import LibraryAdapter

    info = LibraryAdapter("L", "l", "https://example.invalid/l", ("l_pkg",), ("l_family",),
                          ascend_needs=("parity_absent_module.cann", "json"))
    assert owner.missing_needs(info, "ascend-lowered") == ["parity_absent_module.cann"]
    assert owner.missing_needs(info, "ascend-compile") == ["parity_absent_module.cann"]
    # negative controls: an upstream tier, and a library that declares nothing
    assert owner.missing_needs(info, "cuda-compile") == []
    assert owner.missing_needs(replace(info, ascend_needs=()), "ascend-lowered") == []
