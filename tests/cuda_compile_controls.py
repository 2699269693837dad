"""Real-compile controls for cuda-compile (upstream triton, its bundled ptxas, no GPU).

Not collected directly (the name has no test_ prefix): tests/test_cuda_compile.py runs this
file in a fresh process with TRITON_INTERPRET=0, because the engine self-tests turn the
interpreter on, and triton.language's own @jit helpers are then interpreted for the
whole process.
"""

from __future__ import annotations

import os
import time

import pytest
import torch

from parity.backends.cuda.compile import CompileFailed
from parity.compile.tools import declared_variants, reached_variants
from parity.driver import pipeline
from parity.run.compile_judge import judge
from parity.spec import Case, KernelSpec
from tests.cuda_compile_fixture import cuda_compile_backend  # noqa: F401  (the `backend` fixture)

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

# the frontend rejects indexing a tensor by a tensor; a 256x256 tile needs more shared memory
# or registers than an SM has: the same kernels the compile-repro controls fail with
from tests.compile_repro_controls import big_tile_kernel as wide_acc_kernel  # noqa: E402
from tests.compile_repro_controls import index_by_tensor_kernel as tensor_index_kernel  # noqa: E402


@triton.jit
def copy_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=1), triton.Config({"BLOCK": 64}, num_warps=2),
                          triton.Config({"BLOCK": 128}, num_warps=4)], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def tuned_copy_kernel(x, out, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        tl.store(out + o, tl.load(x + o))
    else:
        tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


def _tuned_launch(inputs, p):
    out = torch.empty_like(inputs["x"])
    tuned_copy_kernel[lambda meta: (triton.cdiv(p["n"], meta["BLOCK"]),)](inputs["x"], out, p["n"])
    return {"out": out}


def _spec(name, kernel, launch, cases, variants=None, errors=()):
    return KernelSpec(name=name, family="controls", kernel=kernel, launch=launch,
                      reference=lambda inputs, p: {}, cases=lambda level: cases,
                      make_inputs=lambda p, gen: {"x": torch.zeros(p["n"])}, variants=variants or {},
                      expected_compile_errors=errors, compile_only=True)


TUNED = _spec("ctl_tuned", tuned_copy_kernel, _tuned_launch, [Case({"n": 256})], {"EVEN": (False, True)})


def _compile(backend, kernel, grid, *args, **kwargs) -> dict:
    backend.log.begin([], set())
    try:
        kernel[grid](*args, **kwargs)
    except Exception:
        assert backend.log.any_failed(), "the launch raised, but no compile or launch failure was recorded"
    return backend.log.compiles[-1]


# --- real compiles (upstream triton, no GPU) ------------------------------------------------

def test_a_clean_kernel_reaches_cubin_with_resources(backend):
    x = torch.zeros(100)
    c = _compile(backend, copy_kernel, (2,), x, x, 100, BLOCK=64)
    assert c["ok"] and c["stage_reached"] == "cubin" and c["n_regs"] > 0 and c["grid"] == [2, 1, 1]


def test_a_frontend_error_is_unsupported_with_no_stage(backend):
    x = torch.zeros(16)
    c = _compile(backend, tensor_index_kernel, (1,), x, x, BLOCK=16)
    assert not c["ok"] and c["error_kind"] == "unsupported" and c["stage_reached"] is None
    assert "forget to add @triton.jit" in c["message"]


@triton.jit
def odd_shape_kernel(out, BLOCK: tl.constexpr):
    acc = tl.zeros((38, BLOCK), dtype=tl.float32)  # not a power of 2: the reason sits in a chained cause
    tl.store(out + tl.arange(0, BLOCK), tl.sum(acc, 0))


def test_a_frontend_error_keeps_its_cause_not_only_the_caret(backend):
    c = _compile(backend, odd_shape_kernel, (1,), torch.zeros(16), BLOCK=16)
    assert not c["ok"] and c["error_kind"] == "unsupported"
    assert "Shape element 0 must be a power of 2" in c["message"], c["message"]


def test_a_ptxas_failure_records_the_stage_before_it(backend):
    x = torch.zeros(100)
    c = _compile(backend, copy_kernel, (2,), x, x, 100, BLOCK=32, ptx_options="--no-such-ptxas-flag")
    assert not c["ok"] and c["error_kind"] == "mlir_error" and c["stage_reached"] == "ptx"
    assert "ptxas" in c["message"]


def test_shared_memory_over_the_sm_limit_is_out_of_resources(backend):
    a, c = torch.zeros(256 * 1024, dtype=torch.float16), torch.zeros(256 * 256)
    rec = _compile(backend, wide_acc_kernel, (1,), a, c, 1024, B=256, BK=128, num_stages=4, num_warps=8)
    assert not rec["ok"] and rec["error_kind"] == "out_of_resources"
    assert rec["shared_bytes"] > 232448 and "232448" in rec["message"]


def test_a_register_heavy_config_shows_its_spills(backend):
    # a 256x256 fp32 accumulator over 128 threads needs 512 registers each; the cap is 255
    a, c = torch.zeros(256 * 64, dtype=torch.float16), torch.zeros(256 * 256)
    rec = _compile(backend, wide_acc_kernel, (1,), a, c, 64, B=256, BK=32, num_stages=1, num_warps=4)
    assert rec["ok"] and rec["n_regs"] == 255 and rec["n_spills"] > 0


def test_a_grid_over_cuda_limits_is_a_launch_finding(backend):
    x = torch.zeros(64)
    rec = _compile(backend, copy_kernel, (1, 70000), x, x, 64, BLOCK=64)
    assert rec["ok"] and "y=70000 > 65535" in rec["launch_error"]
    assert judge(rec, None)[0] == "failed"


def test_every_autotune_config_is_warmed_up_with_its_heuristic_variant(backend):
    compiles = backend.compile_case(TUNED, Case({"n": 256}), {"x": torch.zeros(256)})
    assert [c["config"] for c in compiles] == [{"BLOCK": 32, "num_warps": 1, "num_stages": 3},
                                               {"BLOCK": 64, "num_warps": 2, "num_stages": 3},
                                               {"BLOCK": 128, "num_warps": 4, "num_stages": 3}]
    assert all(c["variant"] == {"EVEN": True} and c["ok"] for c in compiles)
    again = backend.compile_case(TUNED, Case({"n": 256}), {"x": torch.zeros(256)})
    assert len(again) == 3, "each case must compile what it needs, whatever ran before it"


def test_a_declared_variant_no_case_reaches_is_reported(backend):
    reached = reached_variants(TUNED, [Case({"n": 256})], lambda case: {"x": torch.zeros(case.params["n"])},
                               backend.launch_device_type)
    assert declared_variants(TUNED) - reached == {(("EVEN", False),)}
    both = reached_variants(TUNED, [Case({"n": 256}), Case({"n": 100})],
                            lambda case: {"x": torch.zeros(case.params["n"])}, backend.launch_device_type)
    assert declared_variants(TUNED) == both


def test_an_aborting_compiler_is_a_crash_and_the_tier_goes_on(backend):
    def aborting(src, target=None, options=None, _env_vars=None):
        os.write(2, b"LLVM ERROR: planted abort\n")
        os.abort()

    rec = _wrapped_failure(backend, aborting)
    assert rec["error_kind"] == "crash" and "SIGABRT" in rec["message"] and "planted abort" in rec["message"]


def test_a_hanging_compiler_is_a_timeout(backend):
    def hanging(src, target=None, options=None, _env_vars=None):
        time.sleep(60)

    saved, backend.timeout_s = backend.timeout_s, 1.0
    try:
        t0 = time.monotonic()
        rec = _wrapped_failure(backend, hanging)
    finally:
        backend.timeout_s = saved
    assert rec["error_kind"] == "timeout" and time.monotonic() - t0 < 30


def _wrapped_failure(backend, original) -> dict:
    from triton.compiler import ASTSource

    src = ASTSource(copy_kernel, {"x": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {(3,): 64})
    backend.log.begin([], set())
    with pytest.raises(CompileFailed):
        backend._compile_layer()(original, src, target=backend.driver.target, options={})
    rec = backend.log.compiles[-1]
    assert not rec["ok"] and rec["seconds"] is not None
    return rec


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"], warmup=5, rep=5)
@triton.jit
def bench_tuned_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


def _bench_tuned_launch(inputs, p):
    out = torch.empty_like(inputs["x"])
    bench_tuned_kernel[lambda meta: (triton.cdiv(p["n"], meta["BLOCK"]),)](inputs["x"], out, p["n"])
    return {"out": out}


def test_an_autotuner_with_warmup_and_rep_compiles_every_config(backend):
    # warmup=/rep= make the Autotuner call triton.testing.do_bench, which needs a device interface
    spec = _spec("ctl_bench_tuned", bench_tuned_kernel, _bench_tuned_launch, [Case({"n": 256})])
    compiles = backend.compile_case(spec, Case({"n": 256}), {"x": torch.zeros(256)})
    assert [c["config"].get("BLOCK") for c in compiles] == [32, 64] and all(c["ok"] for c in compiles)


# --- a launcher of several kernels; a launch option upstream rejects ----------------------------------

def _two_kernel_launch(inputs, p):
    out = torch.zeros(16)
    odd_shape_kernel[(1,)](out, BLOCK=16)  # fails in the frontend
    copy_kernel[(1,)](inputs["x"], out, 16, BLOCK=16)  # the launcher's next kernel
    return {"out": out}


def _ascend_option_launch(inputs, p):
    out = torch.zeros(p["n"])
    copy_kernel[(1,)](inputs["x"], out, p["n"], BLOCK=64, multibuffer=True)  # a triton-ascend launch option
    return {"out": out}


def test_kernels_after_a_failing_one_are_still_compiled_and_recorded(backend):
    spec = _spec("ctl_two", (odd_shape_kernel, copy_kernel), _two_kernel_launch, [Case({"n": 16})])
    compiles = backend.compile_case(spec, Case({"n": 16}), {"x": torch.zeros(16)})
    assert [(c["kernel"], c["ok"]) for c in compiles] == [("odd_shape_kernel", False), ("copy_kernel", True)]


def test_a_launch_option_upstream_rejects_is_a_launch_finding_with_a_repro(backend, tmp_path):
    from parity.run.compile_judge import compile_records

    spec, case = _spec("ctl_option", copy_kernel, _ascend_option_launch, [Case({"n": 64})]), Case({"n": 64})
    inputs = {"x": torch.zeros(64)}
    compiles = backend.compile_case(spec, case, inputs)
    assert [c["error_kind"] for c in compiles] == ["launch_option", None]  # then the kernel without it compiles
    records = compile_records("cuda-compile", spec, case, compiles)
    assert records[0]["status"] == "failed" and "triton-ascend launch option" in records[0]["reason"]
    assert records[0]["case"] != records[1]["case"] and records[1]["status"] == "passed"
    pipeline.judge_and_repro_compiles(records, spec, case, backend, inputs, tmp_path)
    assert records[0].get("repro"), records[0].get("repro_error")
    script = tmp_path / records[0]["repro"] / "repro.py"
    assert (script.parent / "AUTHOR.md").is_file()
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    proc = __import__("subprocess").run([__import__("sys").executable, str(script)], capture_output=True, text=True,
                                        env=env, timeout=300, check=False)
    assert proc.returncode == 1 and "multibuffer" in proc.stdout, proc.stdout + proc.stderr
