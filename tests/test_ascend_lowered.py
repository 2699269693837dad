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
from pathlib import Path

import pytest

from parity.backends.ascend import cpu_build, cpu_library
from parity.backends.ascend.cpu_abi import Arg, parse_signature, user_values
from parity.backends.ascend.cpu_build import LoweringUnsupported, first_error, library_calls
from parity.backends.ascend.cpu_library import define_library_calls
from parity.driver import pipeline
from parity.errors import skip_reason
from parity.results import OwnerKind
from parity.run.refcache import ReferenceCache
from parity.spec.context import backend_scope

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
def lowered(ascend_lowered: object) -> object:
    return ascend_lowered  # tests/conftest.py prepares the tier


SOFTMAX_CASE = {"M": 37, "N": 100, "dtype": "fp32"}  # 100 of 128 lanes: 28 padded with other=-inf


def _run_softmax(backend, tmp_path: Path) -> dict:
    from parity.run.runner import run_case
    from parity.spec import Case, registry

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
    from parity.run.runner import run_case
    from parity.spec import registry

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
    from parity.compile.tools import clear_jit_caches
    from parity.spec import Case, registry

    _, [spec] = registry.build(["softmax"])
    lowered.rewrite_ir = pad_with_zero
    clear_jit_caches(spec.kernels)
    try:
        record = _run_softmax(lowered, tmp_path)
        assert record["status"] == "failed", record["reason"]
        assert "col" in record["metrics"]["region"] or record["metrics"]["mismatch_frac"] > 0
        pipeline.judge_and_repro(record, spec, Case(SOFTMAX_CASE), lowered, seed=0,
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


# --- the lowering gaps the libraries hit, each with a control that fails without the fix --------------

def _modules_of(lowered, kernel, launch) -> list[str]:
    """The ttadapter modules the tier loads for one fresh launch of `kernel` (through the rewrite hook, unchanged)."""
    from parity.compile.tools import clear_jit_caches

    seen: list[str] = []
    lowered.rewrite_ir = lambda text: seen.append(text) or text
    clear_jit_caches([kernel])
    try:
        launch()
    finally:
        lowered.rewrite_ir = None
    return seen


def _host_libgcc_has(symbol: str) -> bool:
    import ctypes
    import ctypes.util

    try:
        return hasattr(ctypes.CDLL(ctypes.util.find_library("gcc_s") or "libgcc_s.so.1"), symbol)
    except OSError:
        return False


def test_bf16_arithmetic_and_int_casts_load_and_round_as_torch(lowered, tmp_path, monkeypatch):
    import ctypes

    import torch

    from tests.lowered_controls import bf16_kernel

    gen = torch.Generator().manual_seed(0)
    x = torch.randint(-3000, 3000, (1000,), generator=gen, dtype=torch.int32)  # 12 bits: the cast rounds
    y = torch.randn(1000, generator=gen).to(torch.bfloat16)
    out = torch.full((1000,), float("nan"), dtype=torch.bfloat16)
    [module] = _modules_of(lowered, bf16_kernel, lambda: bf16_kernel[(16,)](x, y, out, 1000, BLOCK=64))
    want = x.to(torch.bfloat16) * y + y  # torch rounds each op to bf16 (round to nearest even), as LLVM does
    assert torch.equal(out.view(torch.int16), want.view(torch.int16)), (out.float() - want.float()).abs().max()
    if _host_libgcc_has("__truncsfbf2"):
        pytest.skip("this host's libgcc has the bf16 builtins: the control below needs one without (gcc < 13)")
    # the control: the same module linked without parity's builtins does not load on this host
    runtime = cpu_build._runtime_object
    monkeypatch.setattr(cpu_build, "_runtime_object", lambda tools, root: runtime(tools, root)[:1])
    built = cpu_build.build(module, lowered.tools, root=tmp_path)
    with pytest.raises(OSError, match="undefined symbol: __truncsfbf2"):
        ctypes.CDLL(str(built.so_path))


def test_the_bf16_builtin_rounds_to_nearest_even_and_keeps_nan(lowered, tmp_path):
    """__truncsfbf2 on its own, on ties, carries into the exponent, overflow, subnormals and NaN."""
    import ctypes
    import subprocess

    import torch

    from parity.backends.ascend.cpu_softfloat import BF16_BUILTINS_LL

    ll, obj, so = tmp_path / "b.ll", tmp_path / "b.o", tmp_path / "b.so"
    ll.write_text(BF16_BUILTINS_LL)
    subprocess.run([lowered.tools.llc, "-O2", "--relocation-model=pic", "-filetype=obj", str(ll), "-o", str(obj)],
                   check=True)
    subprocess.run([lowered.tools.cc, "-shared", "-o", str(so), str(obj)], check=True)
    # bf16 comes back in xmm0's low 16 bits: read it as a float and keep those bits
    fn = ctypes.CDLL(str(so)).__truncsfbf2
    fn.argtypes, fn.restype = [ctypes.c_float], ctypes.c_float
    values = [1.0 + 2**-8, 1.0 + 3 * 2**-8, 1.0 + 2**-8 + 2**-20, -(1.0 + 2**-8), 3.3961e38, 3.4e38, 1e-40,
              -1e-45, 0.0, -0.0, float("inf"), float("-inf"), 65504.0, 1 / 3]

    def bits(v: float) -> int:
        return int(torch.tensor([fn(v)]).view(torch.int32).item()) & 0xFFFF

    want = [b & 0xFFFF for b in torch.tensor(values).to(torch.bfloat16).view(torch.int16).tolist()]
    assert [bits(v) for v in values] == want
    nan = bits(float("nan"))
    assert (nan & 0x7F80) == 0x7F80 and nan & 0x7F, hex(nan)  # all-ones exponent, nonzero mantissa


def test_a_barrier_orders_nothing_on_the_host_and_is_dropped(lowered, tmp_path, monkeypatch):
    import torch

    from tests.lowered_controls import barrier_kernel

    x = torch.randn(256, generator=torch.Generator().manual_seed(0))
    scratch, out = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
    [module] = _modules_of(lowered, barrier_kernel, lambda: barrier_kernel[(4,)](x, scratch, out, BLOCK=64))
    assert "gpu.barrier" in module
    # every lane read what its mirror lane stored before the barrier: the store was complete
    assert torch.equal(out, (x * 2).view(4, 64).flip(1).reshape(-1))
    # the control: with the barrier kept, LLVM cannot lower the module (the library cases skipped before)
    monkeypatch.setattr(cpu_build, "drop_barriers", lambda text: text)
    with pytest.raises(LoweringUnsupported, match=r"gpu\.barrier"):
        cpu_build.build(module, lowered.tools, root=tmp_path)


def test_a_boolean_cumsum_is_declined_as_a_named_limit(lowered, tmp_path, monkeypatch):
    import torch

    from parity.backends.ascend import cpu_library
    from tests.lowered_controls import bool_cumsum_kernel

    x = torch.randn(64, generator=torch.Generator().manual_seed(0))
    out = torch.full((64,), -1, dtype=torch.int32)
    with pytest.raises(Exception) as info:  # whatever triton wraps it in, the skip reason survives
        _modules_of(lowered, bool_cumsum_kernel, lambda: bool_cumsum_kernel[(1,)](x, out, BLOCK=64))
    assert "lowered-cumsum-i1" in (skip_reason(info.value) or ""), info.value
    # the control: the stand-in's own i1 meaning (a wrapping 1-bit sum) is not the count a user means
    monkeypatch.setattr(cpu_library, "DECLINED_CUMSUM", {})
    monkeypatch.setattr(cpu_build, "cache_root", lambda: tmp_path)
    lowered.rewrite_ir = None
    from parity.compile.tools import clear_jit_caches

    clear_jit_caches([bool_cumsum_kernel])
    bool_cumsum_kernel[(1,)](x, out, BLOCK=64)
    assert not torch.equal(out, torch.cumsum((x > 0).int(), 0).int())


def test_a_scalar_device_print_prints_and_computes(lowered, tmp_path, monkeypatch, capfd):
    import ctypes

    import torch

    from parity.backends.ascend import cpu_library
    from tests.lowered_controls import print_kernel

    x = torch.randn(192, generator=torch.Generator().manual_seed(0))
    out = torch.full_like(x, float("nan"))
    [module] = _modules_of(lowered, print_kernel, lambda: print_kernel[(3,)](x, out, BLOCK=64))
    assert torch.equal(out, x + 1)
    printed = capfd.readouterr().out
    assert all(f" i_p: {i}" in printed for i in range(3)), printed
    # the control: without the stand-in the module does not load (what the GDN port's solve_tril hit)
    monkeypatch.setattr(cpu_build, "c_stand_ins", lambda text: "")
    assert cpu_library.print_stand_ins(module)  # the real one defines it
    built = cpu_build.build(module, lowered.tools, root=tmp_path)
    with pytest.raises(OSError, match="undefined symbol: triton_print_0"):
        ctypes.CDLL(str(built.so_path))


def test_an_undefined_library_call_is_a_named_limit():
    ir = "func.func private @triton_sort_0(tensor<8xf32>, i32, i1) -> tensor<8xf32>\nfunc.func @k() {\n}\n"
    with pytest.raises(LoweringUnsupported, match="lowered-library-call: the module calls triton_sort_0"):
        cpu_build.prepare_module(ir)


def reverse_the_scan(ir_text: str) -> str:
    """The planted fault: tl.cumsum's call passes reverse=true, so the stand-in scans from the end."""
    planted, count = re.subn(r"(call @triton_cumsum_\d+\(%\w+, %\w+, )%\w+\)", r"\1%planted_rev)", ir_text)
    assert count, "no cumsum call in this module"
    return re.sub(r"(func\.func @[^\n]*\{\n)", r"\1    %planted_rev = arith.constant true\n", planted, count=1)


def test_a_cumsum_kernels_repro_builds_with_the_stand_in_and_exits_1(lowered, tmp_path):
    from parity.compile.tools import clear_jit_caches
    from parity.run.runner import run_case
    from parity.spec import Case, registry

    _, [spec] = registry.build(["cumsum"])
    case = Case({"M": 37, "N": 100, "dtype": "fp32"})
    cache = ReferenceCache(tmp_path, enabled=False)
    assert run_case(spec, case, lowered, seed=0, cache=cache)[0]["status"] == "passed"  # the unplanted module
    lowered.rewrite_ir = reverse_the_scan
    clear_jit_caches(spec.kernels)
    try:
        record, _ = run_case(spec, case, lowered, seed=0, cache=cache)
        assert record["status"] == "failed", record["reason"]
        pipeline.judge_and_repro(record, spec, case, lowered, seed=0, cache=cache, results_dir=tmp_path)
    finally:
        lowered.rewrite_ir = None
        clear_jit_caches(spec.kernels)
    folder = tmp_path / record["repro"] / "lowered"
    [module] = folder.glob("*.mlir")
    assert "func.func private @triton_cumsum_0(%x" in module.read_text(), "the stand-in's body is in the module"
    done = subprocess.run([sys.executable, "repro_lowered.py"], cwd=folder, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1 and "MISMATCH out" in done.stdout, done.stdout + done.stderr


def test_launches_see_the_npu_of_ascend_compile_over_the_memory_computed_here(lowered):
    """What libraries read (torch.npu, x.device, allocations on "npu") says NPU; the kernel runs on that memory."""
    import torch

    from parity.backends.ascend.arch import ASCEND_ARCHS
    from parity.backends.base import Backend
    from tests.lowered_controls import print_kernel

    npu = torch.npu  # type: ignore[attr-defined]
    assert npu.is_available() and npu.get_device_name(0) == ASCEND_ARCHS[lowered.arch].name
    npu.synchronize()
    npu.current_stream().synchronize()
    x = torch.randn(128, generator=torch.Generator().manual_seed(0))
    with lowered.presented() as present:
        moved = present({"x": x})["x"]
        out = torch.empty_like(moved)
        assert moved.device.type == "npu" and out.device.type == "npu" and torch.empty(4, device="npu").is_npu
        print_kernel[(2,)](moved, out, BLOCK=64)
    assert torch.equal(out.cpu(), x + 1)  # the tier computed on the memory behind the tensors that say npu
    # the control: a run tier that presents nothing leaves the inputs on the CPU (a library's CPU/CUDA path)
    with Backend.presented(lowered) as present:
        assert present({"x": x})["x"].device.type == "cpu"


def test_triton_ascends_libdevice_calls_run_on_their_stand_ins(lowered, tmp_path, monkeypatch):
    import torch

    from tests.lowered_controls import ascend_libdevice_kernel

    x = torch.randn(64, generator=torch.Generator().manual_seed(0))
    out = torch.full_like(x, float("nan"))
    [module] = _modules_of(lowered, ascend_libdevice_kernel, lambda: ascend_libdevice_kernel[(1,)](x, out, BLOCK=64))
    assert "func.func private @__hmf_log1pf(f32) -> f32" in module
    d = x.double()
    want = d.abs().log1p() + (d * 0.5).tan() + d.atan() + d.tanh() + 1 / (d + 10) + d.relu()
    assert (out.double() - want).abs().max() < 1e-5  # six fp32 results summed: a few fp32 ulps of |want| < 8
    # the control: without the stand-ins the module is the named limit (what it was before)
    monkeypatch.setattr(cpu_library, "libdevice_stand_ins", lambda text: ("", set()))
    with pytest.raises(LoweringUnsupported, match="lowered-library-call: the module calls __hmf_atanf"):
        cpu_build.prepare_module(module)


def test_sort_and_gather_run_on_their_stand_ins(lowered, monkeypatch):
    import torch

    from parity.backends.ascend import cpu_sort_gather
    from tests.lowered_controls import sort_gather_kernel

    gen = torch.Generator().manual_seed(0)
    x = torch.randn(8, 16, generator=gen)
    idx = torch.randint(0, 8, (8, 16), generator=gen, dtype=torch.int32)
    ranked, picked = torch.full_like(x, float("nan")), torch.full_like(x, float("nan"))
    [module] = _modules_of(lowered, sort_gather_kernel,
                           lambda: sort_gather_kernel[(1,)](x, idx, ranked, picked, R=8, C=16))
    assert "call @triton_sort" in module and "call @triton_gather" in module
    assert torch.equal(ranked, x.sort(dim=1, descending=True).values)
    assert torch.equal(picked, torch.gather(x, 0, idx.long()))
    # the control: without the stand-ins the module is the named limit (what it was before)
    monkeypatch.setattr(cpu_sort_gather, "define_sort_gather", lambda text: text)
    with pytest.raises(LoweringUnsupported, match="lowered-library-call: the module calls triton_gather, triton_sort"):
        cpu_build.prepare_module(module)


def test_a_repro_of_a_module_with_c_stand_ins_builds_them_and_exits_1(lowered, tmp_path):
    """repro_lowered.py carries the C stand-ins (a scalar print, triton-ascend's libdevice) beside the module."""
    import torch

    from parity import KernelSpec, Tolerance
    from parity.cases import product
    from parity.compile.tools import clear_jit_caches
    from parity.repro import lowered_repro
    from parity.spec import Case
    from tests.lowered_controls import print_kernel

    def launch(inputs, p):
        out = torch.full_like(inputs["x"], float("nan"))
        print_kernel[(2,)](inputs["x"], out, BLOCK=64)
        return {"out": out}

    spec = KernelSpec(name="lowered_print_control", family="controls", kernel=print_kernel, launch=launch,
                      reference=lambda inputs, p: {"out": inputs["x"] + 1.0},
                      cases=lambda level: product(dtype=["fp32"]),
                      make_inputs=lambda p, gen: {"x": torch.randn(128, generator=gen)},
                      tolerance={"fp32": Tolerance(rtol=0.0, atol=0.0, reason="x + 1 in fp32 is exact here")})
    # the planted fault: the kernel adds 2 instead of 1
    lowered.rewrite_ir = lambda text: text.replace("1.000000e+00 : f32", "2.000000e+00 : f32")
    clear_jit_caches([print_kernel])
    try:
        folder = lowered_repro.write(tmp_path, lowered, spec, Case({"dtype": "fp32"}), seed=0,
                                     cache=ReferenceCache(tmp_path, enabled=False))
    finally:
        lowered.rewrite_ir = None
        clear_jit_caches([print_kernel])
    assert list(folder.glob("kernel_*.c")), "the print's stand-in is written beside the module"
    done = subprocess.run([sys.executable, "repro_lowered.py"], cwd=folder, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 1 and "MISMATCH out" in done.stdout, done.stdout + done.stderr
    assert " i_p: 1" in done.stdout  # the stand-in printed from the rebuilt module


def test_a_case_that_raises_in_its_launcher_keeps_its_record_and_repro_py(lowered, tmp_path):
    """Issue 26's lost records: the lowered repro's relaunch meets the case's own error again."""
    import torch

    from parity import KernelSpec, Tolerance
    from parity.cases import product
    from parity.repro import lowered_repro
    from parity.run.runner import run_case
    from parity.spec import Case
    from tests.lowered_controls import print_kernel

    def before(inputs, p):  # what fla's NPU kernels raise on triton-ascend 3.2.0, before any launch
        raise KeyError("Keyword argument enable_ubuf_saving was specified but unrecognised")

    def after(inputs, p):  # one lowered launch, then a raise
        out = torch.full_like(inputs["x"], float("nan"))
        print_kernel[(2,)](inputs["x"], out, BLOCK=64)
        raise KeyError("a later kernel's option")

    def spec(launch):
        return KernelSpec(name="lowered_raise_control", family="controls", kernel=print_kernel, launch=launch,
                          reference=lambda inputs, p: {"out": inputs["x"] + 1.0},
                          cases=lambda level: product(dtype=["fp32"]),
                          make_inputs=lambda p, gen: {"x": torch.randn(128, generator=gen)},
                          tolerance={"fp32": Tolerance(rtol=0.0, atol=0.0, reason="x + 1 in fp32 is exact")})

    case, cache = Case({"dtype": "fp32"}), ReferenceCache(tmp_path, enabled=False)
    record, _ = run_case(spec(before), case, lowered, seed=0, cache=cache)
    assert record["status"] == "error" and "enable_ubuf_saving" in record["reason"]
    pipeline.judge_and_repro(record, spec(before), case, lowered, seed=0, cache=cache, results_dir=tmp_path)  # no raise
    assert lowered_repro.write(tmp_path / "b", lowered, spec(before), case, seed=0, cache=cache) is None
    assert not (tmp_path / "b" / lowered_repro.FOLDER).exists()
    with pytest.raises(lowered_repro.NoLoweredModule, match="after 1 lowered launch"):
        lowered_repro.write(tmp_path / "a", lowered, spec(after), case, seed=0, cache=cache)


def test_a_tensor_wrapper_is_passed_as_its_base_tensors_memref():
    """test_core's unsigned tensors reach ascend-lowered as triton.reinterpret's TensorWrapper, whose dtype is
    Triton's (no itemsize): every such launch raised AttributeError before; now the base tensor's bytes are passed."""
    import torch

    from parity.backends.ascend.cpu_abi import LoweringUnsupported, _tensor_words

    class TensorWrapper:  # as triton defines it: a base tensor and Triton's dtype
        def __init__(self, base: torch.Tensor, dtype: str) -> None:
            self.base, self.dtype, self.shape, self.device = base, dtype, base.shape, base.device

        def data_ptr(self) -> int:
            return self.base.data_ptr()

    base = torch.arange(8, dtype=torch.int32)
    words, kinds = _tensor_words(TensorWrapper(base, "uint32"), Arg("memref", "i32", 1), 0)
    assert words[0].value == base.data_ptr() and len(words) == len(kinds)
    # negative control: the base is still checked against the memref's element width
    with pytest.raises(LoweringUnsupported, match="memref"):
        _tensor_words(TensorWrapper(base, "uint32"), Arg("memref", "i16", 1), 0)


def test_a_zero_block_pointer_stride_fails_named_and_owned_not_a_sigfpe(lowered, tmp_path):
    """FlagGems' broadcast operands (stride 0) killed the worker with SIGFPE here: triton-adapter divides by the
    stride. Now the case fails naming the division, owned by triton-ascend's reported bug; the full operand passes."""
    import inspect

    import torch

    from parity import KernelSpec
    from parity.cases import product
    from parity.run.runner import run_case
    from parity.spec import Case
    from parity.triage import decide
    from tests.lowered_controls import block_ptr_add_kernel

    def launch(inputs, p):
        x, b = inputs["x"], inputs["b"]
        b = b.expand(*x.shape) if p["b"] == "row" else b
        y = torch.full_like(x, float("nan"))
        block_ptr_add_kernel[(2,)](x, b, y, 19, 7, x.stride(0), b.stride(0), BM=16, BN=8)
        return {"y": y}

    spec = KernelSpec(name="lowered_zero_stride_control", family="controls", kernel=block_ptr_add_kernel,
                      launch=launch, reference=lambda inputs, p: {"y": inputs["x"] + inputs["b"]},
                      cases=lambda level: product(b=["row", "full"]),
                      make_inputs=lambda p, gen: {"x": torch.randn(19, 7, generator=gen),
                                                  "b": torch.randn(1 if p["b"] == "row" else 19, 7, generator=gen)})
    cache = ReferenceCache(tmp_path, enabled=False)
    full, _ = run_case(spec, Case({"b": "full"}), lowered, seed=0, cache=cache)
    assert full["status"] == "passed", full["reason"]  # control: a nonzero stride runs and is right
    row, _ = run_case(spec, Case({"b": "row"}), lowered, seed=0, cache=cache)
    assert row["status"] == "error" and "divides by sbm" in row["reason"], row["reason"]
    owner = decide(row, {}, inspect.getsource(block_ptr_add_kernel.fn))
    assert (owner.who, owner.limit) == (OwnerKind.TRITON_ASCEND, "ascend-block-ptr-zero-stride"), owner
