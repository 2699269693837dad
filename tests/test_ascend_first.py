"""Ascend-first kernels on upstream tiers: rejected launch options and Ascend-only language are named
findings, and leftover debugging in a kernel is reported. Each check with a control that must not fire."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from libraries._debug_lint import LeftoverDebug, debug_calls, leftover_debug, source_check_launch
from parity.backends import get_backend
from parity.compile.ascend_only import language_finding, launch_finding
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from parity.spec import Case, KernelSpec

REJECTED = KeyError("Keyword argument multibuffer was specified but unrecognised")


def test_a_rejected_launch_option_is_named_and_others_are_not():
    assert "triton-ascend launch option" in launch_finding(REJECTED)
    assert "not a launch option of this Triton backend" in launch_finding(
        KeyError("Keyword argument no_such_flag was specified but unrecognised"))
    assert launch_finding(KeyError("x")) is None  # control: an unrelated KeyError stays as it is


def test_ascend_only_language_is_named_and_a_plain_typo_is_not():
    missing = "AttributeError(\"module 'triton.language' has no attribute 'insert_slice'\")"
    assert "tl.insert_slice, a triton-ascend language extension" in language_finding(missing)
    assert "extra.cann" in language_finding("No module named 'triton.language.extra.cann'")
    assert language_finding("module 'triton.language' has no attribute 'arangee'") is None  # control
    cut = "CompilationError: at 28:27: … rgument 'propagate_nan'\")"  # a long message with its middle cut out
    assert "propagate_nan= to a tl reduction" in language_finding(cut)
    nested = "InterpreterError('TypeError(\"max() got an unexpected keyword argument \\\\\\'propagate_nan\\\\\\'\")')"
    assert "propagate_nan= to a tl reduction" in language_finding(nested)  # the interpreter's escaped quotes
    assert language_finding("max() got an unexpected keyword argument 'axes'") is None  # control: a plain typo


def _raising_launch(inputs, p):
    raise REJECTED


def test_a_launch_error_on_a_run_tier_is_classified_not_generic(tmp_path):
    spec = KernelSpec(name="ctl_rejected", family="controls", kernel=object(), launch=_raising_launch,
                      reference=lambda i, p: {"out": i["x"]}, cases=lambda level: [Case({"n": 4})],
                      make_inputs=lambda p, g: {"x": torch.zeros(p["n"])})
    record, _ = run_case(spec, Case({"n": 4}), get_backend("interpret"), seed=0, cache=ReferenceCache(enabled=False))
    assert record["status"] == "error" and record["error_kind"] == "launch_option"
    assert "triton-ascend launch option" in record["reason"]


@triton.jit
def printing_kernel(x, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.device_print("o:", o)
    tl.store(x + o, tl.load(x + o) + 1)


@triton.jit
def quiet_kernel(x, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x + o, tl.load(x + o) + 1)


def test_leftover_device_print_is_found_with_its_line_and_a_clean_kernel_passes():
    calls = debug_calls(printing_kernel)
    assert len(calls) == 1 and calls[0].startswith("device_print (test_ascend_first.py:")
    assert debug_calls(quiet_kernel) == []  # control
    assert "printing_kernel: device_print" in leftover_debug([quiet_kernel, printing_kernel])
    assert leftover_debug([quiet_kernel]) is None


def test_the_source_check_launch_raises_only_on_leftover_debugging():
    inputs = {"x": torch.zeros(1)}
    assert float(source_check_launch(lambda: [quiet_kernel])(inputs, {})["debug_calls"][0]) == 0.0
    try:
        source_check_launch(lambda: [printing_kernel])(inputs, {})
    except LeftoverDebug as exc:
        assert "device_print" in str(exc)
    else:
        raise AssertionError("a kernel with tl.device_print passed the source check")


def test_every_mojo_op_with_a_golden_pairs_it_with_an_arbiter_and_a_planted_one_is_named():
    from dataclasses import replace

    from libraries import mojo_opset
    from parity.run.second_reference import SecondReference

    paired = {s.name for s in mojo_opset.SPECS if isinstance(s.reference, SecondReference)}
    assert {s.name for s in mojo_opset.SPECS} - paired == {"mojo_fused_linear_cross_entropy_fwd"}  # no golden op
    assert all(s.reference.arbiter is not None for s in mojo_opset.SPECS if s.name in paired)
    silu = mojo_opset.SECOND["silu"]
    inputs = {"x": torch.randn(16, 64, dtype=torch.float64)}
    ours = silu(inputs, {})
    right, _ = replace(silu, golden=lambda i, p: {"y": torch.nn.functional.silu(i["x"])}).cross_check(inputs, {}, ours)
    assert right["agrees"]  # control
    off, _ = replace(silu, golden=lambda i, p: {"y": i["x"] * torch.sigmoid(1.01 * i["x"])}).cross_check(
        inputs, {}, ours)
    assert off["wrong"] == "golden" and "MojoSilu" in off["message"]


def test_an_ascend_only_construct_on_upstream_gets_an_author_note_not_a_vendor_issue():
    from parity.repro.author import author_reason

    shape = {"status": "failed", "reason": "unsupported ...: ValueError: Shape element 0 must be a power of 2"}
    assert "only triton-ascend accepts" in author_reason(shape, "cuda-compile")
    assert author_reason(shape, "ascend-compile") is None  # on Ascend the same text would be the vendor's
    unbound = {"status": "failed", "reason": "unsupported ...: NameError('i_t is not defined')"}
    assert "never assigned" in author_reason(unbound, "ascend-compile")
    plain = {"status": "failed", "reason": "mlir_error after ttgir: PassManager::run failed"}
    assert author_reason(plain, "cuda-compile") is None  # control: a compiler failure keeps its vendor draft
