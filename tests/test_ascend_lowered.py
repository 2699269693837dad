"""Controls for the ascend-lowered tier (triton-ascend's ttadapter MLIR run on x86 against fp64).

The rules (signature parsing, tool discovery, library calls, skips) are tested everywhere.
The controls need triton-ascend and the LLVM/MLIR 19 tools and skip without them;
`nox -s ascend-lowered` runs them:

- positive: every basics kernel's quick cases pass here (or are expected failures with their reason);
- negative: a planted lowering fault (softmax's `other=-inf` padding changed to 0 in the captured
  module) fails here, and its repro rebuilds the module and exits 1. The unplanted kernel passes
  under the interpreter: `test_softmax_passes_under_the_interpreter` (run by `nox -s tests`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from parity.backends.ascend import cpu_build
from parity.backends.ascend.cpu_abi import Arg, parse_signature, user_values
from parity.backends.ascend.cpu_build import LoweringUnsupported, first_error, library_calls
from parity.backends.ascend.cpu_library import define_library_calls
from parity.context import backend_scope
from parity.run.refcache import ReferenceCache
from parity.run.runner import skip_reason

IR = """module {
  func.func @k(%arg0: memref<?xi8>, %arg1: memref<?xi8>, %arg2: memref<?xf16> {tt.divisibility = 16 : i32,
      tt.tensor_kind = 0 : i32}, %arg3: memref<?xbf16> {tt.tensor_kind = 1 : i32}, %arg4: i32, %arg5: f32,
      %arg6: i64, %arg7: i32, %arg8: i32, %arg9: i32, %arg10: i32, %arg11: i32, %arg12: i32) attributes
      {SyncBlockLockArgIdx = 0 : i64, WorkspaceArgIdx = 1 : i64, global_kernel = "local", mix_mode = "aiv"} {
    return
  }
}"""


# --- the rules, on any machine -------------------------------------------------------------

def test_signature_has_lock_workspace_user_and_grid_arguments():
    sig = parse_signature(IR.replace("attributes\n      {", "attributes {"))
    assert sig.name == "k" and sig.front == 2
    assert sig.user == (Arg("memref", "f16", 1), Arg("memref", "bf16", 1), Arg("scalar", "i32"),
                        Arg("scalar", "f32"), Arg("scalar", "i64"))


def test_a_signature_without_grid_arguments_is_unsupported():
    with pytest.raises(LoweringUnsupported, match="six trailing i32"):
        parse_signature("func.func @k(%arg0: memref<?xf32>) attributes {} {")


def test_constants_are_dropped_from_the_launch_values():
    assert user_values(["x", "n", "one", "y"], {"one": 1}, ["X", 5, 1, "Y"]) == ["X", 5, "Y"]


def test_library_calls_are_found_and_cumsum_gets_a_definition():
    ir = ("func.func private @triton_cumsum_0(tensor<16x4xf32>, i32, i1) -> tensor<16x4xf32>\n"
          "func.func private @triton_sort_0(tensor<8xf32>, i32, i1) -> tensor<8xf32>\nfunc.func @k(")
    assert library_calls(ir) == ["triton_cumsum_0", "triton_sort_0"]
    assert library_calls(IR) == []
    defined = define_library_calls(ir)
    assert library_calls(defined) == ["triton_sort_0"]  # only tl.cumsum's function has a CPU definition
    assert "memref.collapse_shape %src [[0, 1]] : memref<16x4xf32> into memref<64xf32>" in defined


def test_first_error_names_the_refused_op():
    stderr = "k.mlir:3:5: error: failed to legalize operation 'foo.bar'\nnote: see current operation"
    assert first_error(stderr) == "failed to legalize operation 'foo.bar'"


def test_missing_tools_name_the_apt_command(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("PARITY_LLVM_BIN", "/nonexistent")
    monkeypatch.setattr(cpu_build, "LLVM_MAJOR", 99)  # no /usr/lib/llvm-99 anywhere
    reason = cpu_build.find_tools()
    assert isinstance(reason, str) and "apt-get install -y mlir-19-tools llvm-19 gcc" in reason


def test_an_unsupported_lowering_is_a_skip_not_an_error():
    try:
        try:
            raise LoweringUnsupported("mlir-opt cannot lower this module: 'foo.bar'")
        except LoweringUnsupported as inner:
            raise RuntimeError("while loading the kernel") from inner
    except RuntimeError as exc:
        assert skip_reason(exc) == "mlir-opt cannot lower this module: 'foo.bar'"
    assert skip_reason(ValueError("x")) is None


def test_softmax_passes_under_the_interpreter(tmp_path):
    """The other half of the negative control: the kernel itself is right (upstream triton's interpreter)."""
    from parity.backends.interpret import InterpretBackend

    if os.environ.get("TRITON_INTERPRET") != "1" or InterpretBackend().unavailable():
        pytest.skip("needs upstream triton's interpreter (nox -s tests)")
    record = _run_softmax(InterpretBackend(), tmp_path)
    assert record["status"] == "passed", record["reason"]


# --- the tier, with triton-ascend and LLVM/MLIR 19 ------------------------------------------

@pytest.fixture(scope="module")
def lowered(tmp_path_factory) -> Iterator[object]:
    from parity.backends.ascend.lowered import AscendLoweredBackend

    backend = AscendLoweredBackend()
    reason = backend._missing()
    if reason:
        pytest.skip(f"ascend-lowered controls need triton-ascend and LLVM/MLIR 19: {reason}")
    # tests/conftest.py turns on the interpreter for the engine tests; these need the real JIT
    saved = os.environ.pop("TRITON_INTERPRET", None)
    try:
        backend.prepare()
        yield backend
    finally:
        if saved is not None:
            os.environ["TRITON_INTERPRET"] = saved


SOFTMAX_CASE = {"M": 37, "N": 100, "dtype": "fp32"}  # 100 of 128 lanes: 28 padded with other=-inf


def _run_softmax(backend, tmp_path: Path) -> dict:
    from parity import registry
    from parity.run.runner import run_case
    from parity.spec import Case

    _, [spec] = registry.build(["softmax"])
    record, _ = run_case(spec, Case(SOFTMAX_CASE), backend, seed=0, cache=ReferenceCache(tmp_path, enabled=False))
    return record


def pad_with_zero(ir_text: str) -> str:
    """The planted fault: the masked load's `other=` padding (the fill under scf.if) becomes 0.0."""
    fills = re.findall(r"scf\.if %\w+ \{\n\s*linalg\.fill ins\((%\w+) : (\w+)\)", ir_text)
    assert fills, "no masked-load padding in this module"
    name, elem = fills[0]
    planted = re.sub(rf"(scf\.if %\w+ \{{\n\s*linalg\.fill ins\(){name}( : {elem}\))", r"\1%planted_pad\2",
                     ir_text, count=1)
    return re.sub(r"(func\.func @[^\n]*\{\n)", rf"\1    %planted_pad = arith.constant 0.000000e+00 : {elem}\n",
                  planted, count=1)


def test_basics_pass_at_level_quick(lowered, tmp_path):
    from parity import registry
    from parity.run.runner import run_case

    _, specs = registry.build(["basics"])
    bad, statuses = [], {}
    for spec in specs:
        with backend_scope(lowered.name):  # a spec may declare itself unavailable on this tier (matmul_tma)
            if spec.unavailable is not None and spec.unavailable():
                continue
        for case in spec.cases("quick"):
            record, _ = run_case(spec, case, lowered, seed=0, cache=ReferenceCache(tmp_path, enabled=True))
            statuses[record["status"]] = statuses.get(record["status"], 0) + 1
            # xfails carry their known divergence (spec.known_divergences)
            if record["status"] not in ("passed", "xfailed"):
                bad.append(f"{spec.name}[{case.id}]: {record['status']}: {record['reason']}")
    assert not bad, "\n".join(bad)
    assert statuses.get("passed", 0) >= 50, statuses


def test_a_planted_lowering_fault_fails_here_and_its_repro_exits_1(lowered, tmp_path):
    assert _run_softmax(lowered, tmp_path)["status"] == "passed"  # the unplanted module
    from parity import registry
    from parity.compile.tools import clear_jit_caches
    from parity.repro import run_repro
    from parity.spec import Case

    _, [spec] = registry.build(["softmax"])
    lowered.rewrite_ir = pad_with_zero
    clear_jit_caches(spec.kernels)
    try:
        record = _run_softmax(lowered, tmp_path)
        assert record["status"] == "failed", record["reason"]
        assert "col" in record["metrics"]["region"] or record["metrics"]["mismatch_frac"] > 0
        run_repro.attach(record, spec, Case(SOFTMAX_CASE), lowered, seed=0,
                         cache=ReferenceCache(tmp_path, enabled=False), results_dir=tmp_path)
    finally:
        lowered.rewrite_ir = None
        clear_jit_caches(spec.kernels)
    folder = tmp_path / record["repro"] / "lowered"
    assert {p.name for p in folder.iterdir()} >= {"inputs.npz", "repro_lowered.py"}, record
    assert list(folder.glob("*.mlir")), "the captured module is kept beside the script"
    done = subprocess.run([sys.executable, "repro_lowered.py"], cwd=folder, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "MISMATCH out" in done.stdout


def test_the_nox_session_skips_without_llvm19_before_installing(monkeypatch):
    pytest.importorskip("nox", reason="the noxfile needs nox")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    try:
        import noxfile
    finally:
        sys.path.pop(0)
    from tests.test_noxfile import FakeSession

    class Skipped(Exception):
        pass

    session = FakeSession("ascend-lowered")

    def skip(message: str) -> None:
        raise Skipped(message)

    session.skip = skip
    monkeypatch.setattr(noxfile, "llvm19_missing", lambda: ["mlir-opt"])
    with pytest.raises(Skipped, match=re.escape(noxfile.LLVM19_APT)):
        noxfile.ascend_lowered(session)
    assert session.installed == []


def test_scalars_of_every_width_and_a_3d_grid(lowered):
    import torch

    from tests.lowered_controls import abi_kernel

    x = torch.arange(-500, 500, dtype=torch.int32)
    offset = 2**40 + 123  # an i64 argument: % 1000 is 899 only if all 64 bits arrive
    for negate in (False, True):
        out = torch.full((1000,), float("nan"))
        abi_kernel[(4, 3, 2)](x, out, 1000, 0.5, offset, negate, BLOCK=64)  # 24 programs x 64 >= 1000
        want = (x.double() * 0.5 + offset % 1000) * (-1 if negate else 1)
        assert torch.equal(out.double(), want), (negate, (out.double() - want).abs().max())
