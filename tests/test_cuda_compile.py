"""Controls for the cuda-compile tier and the generic compile suite: each check must fire.

The rules (judging, record ids, the report, --cuda-arch) run everywhere. The real-compile
controls live in tests/cuda_compile_controls.py and run here in a fresh process with the
interpreter off; they need upstream triton's nvidia backend and skip without it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.backends.cuda.compile import CudaCompileBackend, parse_cuda_arch
from parity.report.compile_sections import compile_sections, headline
from parity.run.compile_judge import compile_records, judge
from parity.spec import Case, ExpectedCompileError, KernelSpec

CONTROLS = Path(__file__).with_name("cuda_compile_controls.py")
SPEC = KernelSpec(name="ctl", family="controls", kernel=object(), launch=lambda i, p: {},
                  reference=lambda i, p: {}, cases=lambda level: [], make_inputs=lambda p, g: {})


# --- options and pure rules -----------------------------------------------------------------

def test_cuda_arch_option_lists_valid_values():
    assert parse_cuda_arch("sm_80") == 80
    assert parse_cuda_arch("9.0") == 90
    with pytest.raises(argparse.ArgumentTypeError, match="valid: 80, 86, 89, 90"):
        parse_cuda_arch("75")


def _ok(**extra) -> dict:
    return {"kernel": "k", "variant": {}, "config": {}, "ok": True, "stage_reached": "cubin",
            "error_kind": None, "message": None, "launch_error": None, **extra}


def test_judge_fails_a_compile_failure_and_a_launch_finding():
    assert judge(_ok(), None) == ("passed", None)
    status, reason = judge(_ok(ok=False, error_kind="mlir_error", stage_reached="ttgir", message="boom"), None)
    assert status == "failed" and "mlir_error after ttgir: boom" in reason
    status, reason = judge(_ok(launch_error="grid should be less than 65536!"), None)
    assert status == "failed" and reason.startswith("launch: grid should be")


def test_judge_expected_errors_need_the_matching_failure():
    expected = ExpectedCompileError("cuda", r"must be a power of 2", "probe")
    rejected = _ok(ok=False, error_kind="unsupported", stage_reached=None,
                   message="Shape element 0 must be a power of 2")
    assert judge(rejected, expected)[0] == "passed"
    assert judge(_ok(), expected)[0] == "failed"  # compiled although it must not
    other = _ok(ok=False, error_kind="crash", message="killed by SIGABRT")
    assert judge(other, expected)[0] == "failed"  # failed, but not the expected way


def test_records_carry_variant_and_config_in_the_case_id():
    compiles = [_ok(config={"BLOCK": 32, "num_warps": 1}, seconds=0.1),
                _ok(config={"BLOCK": 64, "num_warps": 2}, seconds=0.1, ok=False, error_kind="mlir_error")]
    records = compile_records("cuda-compile", SPEC, Case({"n": 256}), compiles)
    assert [r["case"] for r in records] == ["n=256;BLOCK=32,num_warps=1", "n=256;BLOCK=64,num_warps=2"]
    assert [r["status"] for r in records] == ["passed", "failed"]
    assert all(r["mode"] == "compile" and r["compiles"] == 1 for r in records)
    assert compile_records("cuda-compile", SPEC, Case({"n": 256}), [])[0]["status"] == "skipped"


def test_report_has_compile_failures_and_a_ub_table_only_with_ub_figures():
    records = compile_records("cuda-compile", SPEC, Case({"n": 1}), [_ok(ok=False, error_kind="mlir_error",
                                                                          message="a | b")])
    titles = dict(compile_sections(records))
    assert "a \\| b" in titles["Compile failures"]
    assert "Compile: unified buffer (Ascend)" not in titles
    ub = compile_records("ascend-compile", SPEC, Case({"n": 1}),
                         [_ok(ok=False, error_kind="ub_overflow", ub_bits=33554432, ub_limit_bits=1572864)])
    assert "33554432" in dict(compile_sections(ub))["Compile: unified buffer (Ascend)"]
    assert compile_sections([]) == []


def test_the_report_quotes_the_reason_after_the_caret_not_the_source():
    message = "CompilationError: at 2:8:\ndef k(x, n):\n    o = tl.arange(0, n)\n        ^\narange's arguments must be"
    assert headline(message) == "at 2:8: arange's arguments must be"
    assert headline("PassManager::run failed") == "PassManager::run failed"


def test_real_compiles_in_a_clean_process():
    reason = CudaCompileBackend().unavailable()
    if reason:
        pytest.skip(reason)
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", str(CONTROLS)], env=env,
                          cwd=CONTROLS.parent.parent, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, f"cuda-compile controls failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"


def test_an_autotune_config_over_the_sm_is_skipped_only_while_another_config_fits():
    from parity import KernelSpec
    from parity.cases import by_level, product
    from parity.spec import Case

    spec = KernelSpec(name="oor_probe", family="planted", kernel=object(), launch=lambda i, p: {},
                      reference=lambda i, p: {}, cases=by_level(product(N=[1])), make_inputs=lambda p, g: {})

    def compile_(stages: int, ok: bool) -> dict:
        return {"kernel": "k", "variant": {"EVEN": True}, "config": {"num_stages": stages}, "ok": ok,
                "stage_reached": "cubin", "error_kind": None if ok else "out_of_resources",
                "message": None if ok else "shared memory: requires 245760 bytes while 232448 bytes are available"}

    case = Case({"N": 1})
    mixed = compile_records("cuda-compile", spec, case, [compile_(2, True), compile_(4, False)])
    assert [r["status"] for r in mixed] == ["passed", "skipped"]
    assert "Autotuner drops" in mixed[1]["reason"]
    none_fit = compile_records("cuda-compile", spec, case, [compile_(3, False), compile_(4, False)])
    assert [r["status"] for r in none_fit] == ["failed", "failed"]


def test_a_trimmed_message_keeps_the_reason_a_jit_helper_raised():
    from parity.compile.tools import trim_message

    nested = "\n".join(["triton.compiler.errors.CompilationError: at 30:27:",
                        *(f"    source line {i}" for i in range(40)),
                        "TypeError(\"max() got an unexpected keyword argument 'propagate_nan'\")",
                        *(f"    outer call site {i}" for i in range(40))])
    trimmed = trim_message(nested)
    assert "propagate_nan" in trimmed and len(trimmed) <= 600 and trimmed.startswith("triton.compiler")
    plain = "\n".join(["CompilationError: at 1:2:", *(f"    line {i}" for i in range(80))])
    assert "Error(" not in trim_message(plain)  # control: nothing to lift, the tail is kept as before
