"""Controls for the ascend-compile tier: each check must fire on a kernel that breaks it.

The rules (message parsing, grid limits, the arch table) are tested everywhere. The compile
controls need triton-ascend and ascendnpu-ir and skip without them; `nox -s ascend-compile`
runs them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from parity.backends.ascend.arch import ASCEND_ARCHS, parse_ascend_arch
from parity.backends.ascend.compile import AscendCompileBackend
from parity.backends.ascend.diagnostics import clean_message, diagnose, grid_finding, hivmc_only_failure
from parity.errors import CannotRunHere
from parity.spec import Case

HIVMC_ONLY = """[ERROR] Cannot find hivmc under $PATH
loc("k.mlir":1:1): error: External hivmc run fails, returning module before running external compiler
[ERROR] Failed to run BiShengIR pipeline"""
UB_OVERFLOW = """[ERROR] Cannot find hivmc under $PATH
loc("k.mlir":1:1): error: Failed to run BiShengHIR pipeline
loc("k.mlir":2:3): error: ub overflow, requires 33554432 bits while 1572864 bits available! (possible reason: ...)"""


# --- the rules, on any machine -------------------------------------------------------------

def test_hivmc_alone_is_a_clean_bishengir_run():
    assert hivmc_only_failure(HIVMC_ONLY)


def test_a_real_error_beside_the_missing_hivmc_is_not_clean():
    assert not hivmc_only_failure(HIVMC_ONLY + '\nloc("k":3:1): error: failed to legalize operation')
    assert not hivmc_only_failure(UB_OVERFLOW)
    assert not hivmc_only_failure("")


def test_ub_overflow_is_parsed_with_its_bits():
    found = diagnose("MLIRCompilationError", "ConvertLinalgRToBinary", UB_OVERFLOW)
    assert (found.error_kind, found.stage_reached) == ("ub_overflow", "ttadapter")
    assert (found.ub_bits, found.ub_limit_bits) == (33554432, 1572864)


def test_other_buffer_overflows_are_not_called_ub():
    found = diagnose("MLIRCompilationError", "ConvertLinalgRToBinary",
                     "error: cc overflow, requires 2097152 bits while 1048576 bits available!")
    assert found.error_kind == "cc_overflow"
    assert found.ub_bits is None


def test_error_kinds_and_stages():
    assert diagnose("MLIRCompilationError", "ConvertLinalgRToBinary", "error: failed").error_kind == "mlir_error"
    assert diagnose("MLIRCompilationError", "ConvertTritonIRToLinalgIR", "x").stage_reached == "ttir"
    frontend = diagnose("CompilationError", None, "at 3:4: unsupported")
    assert (frontend.error_kind, frontend.stage_reached) == ("unsupported", None)


def test_clean_message_drops_noise_only():
    text = clean_message(UB_OVERFLOW)
    assert "hivmc" not in text
    assert "ub overflow, requires 33554432 bits" in text


@pytest.mark.parametrize(("grid", "flagged"), [((65535,), False), ((65536,), True), ((256, 256, 1), True),
                                               ((255, 257), False), ((0, 4), True), ((1, 1, 1), False)])
def test_grid_limits(grid, flagged):
    finding = grid_finding(grid)
    assert (finding is not None) == flagged
    if finding and 0 not in grid:
        assert "grid should be less than 65536!" in finding


def test_arch_option_lists_the_valid_names():
    assert parse_ascend_arch("Ascend910B1") == "Ascend910B1"
    with pytest.raises(argparse.ArgumentTypeError, match="Ascend910B3"):
        parse_ascend_arch("Ascend910C")
    assert (ASCEND_ARCHS["Ascend910B3"].aic_cores, ASCEND_ARCHS["Ascend910B3"].aiv_cores) == (20, 40)
    assert ASCEND_ARCHS["Ascend910B2"].aiv_cores == 48
    assert ASCEND_ARCHS["Ascend910B3"].ub_bits == 1_572_864


# --- compiling, with triton-ascend and bishengir-compile ---------------------------------------

@pytest.fixture(scope="module")
def ascend() -> Iterator[tuple[AscendCompileBackend, object]]:
    backend = AscendCompileBackend()
    reason = backend._missing()
    if reason:
        pytest.skip(f"ascend-compile controls need the Ascend toolchain: {reason}")
    # tests/conftest.py turns on the interpreter for the engine tests; these need the real JIT
    saved = os.environ.pop("TRITON_INTERPRET", None)
    try:
        backend.prepare()
        from tests import ascend_controls

        yield backend, ascend_controls
    finally:
        if saved is not None:
            os.environ["TRITON_INTERPRET"] = saved


def _compile(ascend, spec_name: str, inputs: dict, **params) -> list[dict]:
    backend, controls = ascend
    return backend.compile_case(getattr(controls, spec_name), Case(params), inputs)


def _fp16(size: int) -> dict:
    return {"a": torch.randn(size, size, dtype=torch.float16)}


def test_a_launch_this_tier_cannot_run_is_raised_for_a_skip_not_recorded_as_a_failed_compile(ascend):
    """A replay's NotReplayable after a kernel compiled was a failed 'launch' compile owned by the author (FlagGems'
    output_counts_flat_kernel); the pipeline turns a parity_skip exception into a skip with its reason. Control: the
    same kernel without the raise gives its compile records."""
    backend, controls = ascend
    with pytest.raises(CannotRunHere, match="not replayable here"):
        backend.compile_case(controls.NOT_RUNNABLE, Case({}), {"x": torch.zeros(16)})
    records = _compile(ascend, "ADD_ONE", {"x": torch.zeros(16)}, grid=1, block=16)
    assert records and all(r["ok"] for r in records)


def test_matmul_128_tiles_pass_bishengir(ascend):
    [c] = _compile(ascend, "MATMUL", _fp16(256), tile=128)
    assert c["ok"], c["message"]
    assert c["stage_reached"] == "bishengir"  # no hivmc here: never claimed as a binary
    assert c["core_type"] == "mix"  # tl.dot plus vector work
    assert c["grid"] == [2, 2, 1]


def test_matmul_256_tiles_overflow_a_local_buffer_with_its_bits(ascend):
    # BiShengIR plans the 256x256 fp32 accumulator into L0C (cc) first: 2 Mbit against 1 Mbit
    [c] = _compile(ascend, "MATMUL", _fp16(512), tile=256)
    assert not c["ok"]
    assert c["error_kind"] == "cc_overflow", c["message"]
    assert "requires 2097152 bits while 1048576 bits available" in c["message"]
    assert c["stage_reached"] == "ttadapter"


def test_ub_overflow_is_reported_with_its_requested_bits(ascend):
    [c] = _compile(ascend, "ADD_ONE", {"x": torch.randn(1 << 20)}, grid=1, block=1 << 20)
    assert (c["ok"], c["error_kind"]) == (False, "ub_overflow"), c["message"]
    assert c["ub_bits"] == 33554432  # 2^20 fp32 elements, double-buffered
    assert c["ub_limit_bits"] == 1_572_864


def test_a_small_block_fits_the_ub(ascend):
    [c] = _compile(ascend, "ADD_ONE", {"x": torch.randn(4096)}, grid=4, block=1024)
    assert c["ok"] and c["error_kind"] is None and c["launch_error"] is None
    assert c["core_type"] == "aiv"


def test_grid_over_65535_is_a_launch_finding(ascend):
    [c] = _compile(ascend, "ADD_ONE", {"x": torch.randn(4096)}, grid=70000, block=16)
    assert c["ok"]  # the kernel compiles; the launcher refuses it
    assert "grid should be less than 65536!" in c["launch_error"]
    assert c["grid"] == [70000, 1, 1]


def test_grid_at_the_limit_is_not_flagged(ascend):
    [c] = _compile(ascend, "ADD_ONE", {"x": torch.randn(4096)}, grid=65535, block=16)
    assert c["launch_error"] is None


def test_every_autotune_config_is_compiled_and_judged(ascend):
    compiles = _compile(ascend, "ADD_ONE_TUNED", {"x": torch.randn(4096)})
    by_block = {c["config"]["BLOCK"]: c for c in compiles}
    assert set(by_block) == {1024, 1 << 20}
    assert by_block[1024]["ok"]
    assert by_block[1 << 20]["error_kind"] == "ub_overflow"


def test_a_jit_helpers_frontend_error_keeps_its_reason(ascend):
    """The call site's CompilationError is the kernel's source and a caret; the reason is its cause (the
    helper's error): the message keeps it, and the key line is it."""
    from parity.reasons import key_line

    [c] = _compile(ascend, "BROKEN_HELPER", {"x": torch.randn(16)})
    assert not c["ok"] and "no_such_attribute" in c["message"].split("^", 1)[-1], c["message"]
    key = key_line(c["message"])  # triton 3.2 quotes the helper's error as a repr after the caret
    assert key.startswith("AttributeError: 'tensor' object has no attribute 'no_such_attribute'"), key


def test_a_compiler_abort_is_a_crash_and_the_tier_goes_on(ascend):
    [c] = _compile(ascend, "ABORTS", {})
    assert (c["ok"], c["error_kind"]) == (False, "crash")
    assert "SIGABRT" in c["message"]
    [after] = _compile(ascend, "ADD_ONE", {"x": torch.randn(4096)}, grid=4, block=1024)
    assert after["ok"]


def test_a_hang_is_a_timeout(ascend):
    backend, _ = ascend
    saved, backend.timeout_s = backend.timeout_s, 3
    try:
        [c] = _compile(ascend, "HANGS", {})
    finally:
        backend.timeout_s = saved
    assert (c["ok"], c["error_kind"]) == (False, "timeout")


AUTOTUNED_IMPORT = """
import os, sys
from parity.backends.ascend import compile as ac
ac.bishengir_bin_dir = lambda: None
ac.shutil.which = lambda name: None
backend = ac.AscendCompileBackend()
backend.prepare()
assert "bishengir" in backend.unavailable(), backend.unavailable()
import tests.planted_autotune  # an @triton.autotune at import: triton-ascend 3.2 asks the driver then
print("imported")
"""


def test_autotuned_modules_import_even_when_bishengir_is_missing():
    pytest.importorskip("triton.backends.ascend")  # the ascend toolchain only
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    proc = subprocess.run([sys.executable, "-c", AUTOTUNED_IMPORT], env=env, cwd=Path(__file__).parents[1],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0 and "imported" in proc.stdout, proc.stderr[-2000:]


def test_perf_advice_finds_a_hard_coded_core_count_and_not_in_its_twin(ascend):
    from tests import ascend_perf_controls as ctl

    backend, _ = ascend
    x = {"x": torch.randn(1 << 19)}  # 2 MiB in, 2 MiB out: large enough to judge 40 vector cores
    [planted] = backend.compile_case(ctl.TWENTY, Case({}), x)
    assert planted["ok"] and planted["core_type"] == "aiv", planted["message"]
    found = planted["ascend_perf"]["findings"]
    assert [f["rule"] for f in found] == ["cores.hard_coded"]
    assert found[0]["line"].endswith("ascend_perf_controls.py:19") and "20 of Ascend910B3's 40 vector" in \
        found[0]["evidence"]
    [twin] = backend.compile_case(ctl.ALL, Case({}), x)
    assert twin["ok"] and twin["grid"] == [40, 1, 1]
    assert twin["ascend_perf"]["findings"] == [] and "ub.larger_fits" in twin["ascend_perf"]["not_checked"]


def test_ub_use_claims_a_larger_tile_for_a_small_plan_and_not_for_its_twin(ascend):
    from tests import planted_small_tile as ctl

    backend, _ = ascend
    x = {"x": torch.randn(ctl.N)}
    small, large = ctl.SPECS
    [planted] = backend.compile_case(small, Case({"N": ctl.N, "dtype": "fp32"}), x)
    claim = planted["ascend_perf"]["ub_claim"]
    assert claim["config"] == {"BLOCK": 64} and claim["used"] < claim["of"] // 4, claim
    assert claim["larger"]["BLOCK"] > 64 and claim["larger_used"] > claim["used"]
    # compiled is not proven: the finding waits for ascend-lowered's fp64 run (parity.perf.proof)
    assert planted["ascend_perf"]["findings"] == [] and "not yet run" in planted["ascend_perf"]["not_checked"][
        "ub.larger_fits"]
    [twin] = backend.compile_case(large, Case({"N": ctl.N, "dtype": "fp32"}), x)
    assert "ub_claim" not in twin["ascend_perf"] and twin["ascend_perf"]["findings"] == []
    assert "ub.larger_fits" not in twin["ascend_perf"]["not_checked"]  # checked: its plan is over a quarter
