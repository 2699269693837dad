"""A kernel reading a module global of jit helpers (FlagGems' `tle`) gets a standalone repro source.

Before the extractor rebuilt such a module as a types.ModuleType, the planted kernel was a SourceError
("uses global 'tle' (module)"); a kernel that hands the module itself around still is one.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest
import triton
import triton.language as tl

from parity.repro.source import SourceError, extract_kernel
from tests import planted_tle as tle

fast_max = tl.maximum  # a builtin under a global alias: an import line in the repro


@triton.jit
def scaled_copy_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tle.offsets(BLOCK)
    v = tl.load(x + o, mask=o < n, other=0.0)
    tl.store(out + o, v * tle.SCALE, mask=o < n)


@triton.jit
def clamp_kernel(x, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    # not run here: the interpreter patches builtins only where tl itself is read, as for the library's module
    tl.store(x + o, tle.maximum(tl.load(x + o), 0.0))


@triton.jit
def module_as_value_kernel(x, BLOCK: tl.constexpr):
    helpers = tle  # the module itself, not a member: nothing a repro can rebuild
    tl.store(x + helpers.offsets(BLOCK), 0.0)


@triton.jit
def softplus_nv(x):
    return tl.log(1.0 + tl.exp(x))


softplus = softplus_nv  # fla's way: one name in the kernel, a device's helper behind it


@triton.jit
def aliased_helper_kernel(x, out, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(out + o, softplus(tl.load(x + o)))


@tl.constexpr
def accumulator_type(dtype: tl.dtype) -> tl.dtype:  # FlagGems' cumsum's way (get_scan_accum_type)
    return tl.float32 if dtype.is_fp16() or dtype.is_bf16() else dtype


@triton.jit
def constexpr_function_kernel(x, out, BLOCK: tl.constexpr):
    acc: tl.constexpr = accumulator_type(x.type.element_ty)
    o = tl.arange(0, BLOCK)
    tl.store(out + o, tl.cumsum(tl.load(x + o).to(acc), 0))


OPAQUE = tl.constexpr(object())


@triton.jit
def opaque_constexpr_kernel(x, BLOCK: tl.constexpr):
    tl.static_assert(OPAQUE is not None)
    tl.store(x + tl.arange(0, BLOCK), 0.0)


@triton.jit
def aliased_builtin_kernel(x, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(x + o, fast_max(tl.load(x + o), 0.0))


@triton.jit
def scale_by_module(v):
    return v * tle.SCALE  # a member the kernel itself never reads


@triton.jit
def helper_reads_another_member_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tle.offsets(BLOCK)
    tl.store(out + o, scale_by_module(tl.load(x + o, mask=o < n, other=0.0)), mask=o < n)


def test_the_module_holds_every_member_the_kernel_and_its_helpers_read():
    """FlagGems' cummax reads tle.program_id, its helper tle.maximum_with_index_tie_break_right: the stand-in module
    kept only the last function's member, and every replay failed on the other."""
    text = extract_kernel(helper_reads_another_member_kernel).text()
    assert "tle.offsets = offsets" in text and "tle.SCALE = tl.constexpr(3)" in text


def test_a_module_of_jit_helpers_becomes_a_module_object_with_just_what_the_kernel_reads():
    text = extract_kernel(scaled_copy_kernel).text()
    assert "import types" in text and "tle = types.ModuleType('tle')" in text
    assert "tle.offsets = offsets" in text and "def wide_id(" in text  # the helper's own helper too
    assert "tle.SCALE = tl.constexpr(3)" in text and "tle.wide_id" not in text  # not read off the module
    assert "tle.maximum = triton.language" in extract_kernel(clamp_kernel).text()


def test_the_rebuilt_module_runs_standalone(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text(extract_kernel(scaled_copy_kernel).text() + "\n\nimport torch\n"
                      "x = torch.arange(-8, 8, dtype=torch.float32)\nout = torch.empty_like(x)\n"
                      "scaled_copy_kernel[(2,)](x, out, 16, BLOCK=8)\n"
                      "assert torch.equal(out, x * 3), out\nprint('ok')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([sys.executable, "-I", script.name], cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "TRITON_INTERPRET": "1"}, timeout=300, check=False)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stdout + proc.stderr


def test_a_helper_called_under_an_alias_is_embedded_and_bound_to_the_alias(tmp_path):
    """fla's fused_recurrent kernel calls `softplus`, bound to `softplus_nv` on NVIDIA: its recording kept no source
    ("under the alias"); now the helper is embedded under its own name and the alias bound to it, and it runs."""
    text = extract_kernel(aliased_helper_kernel).text()
    assert "def softplus_nv(" in text and "softplus = softplus_nv" in text
    assert text.index("softplus = softplus_nv") > text.index("def softplus_nv(")
    script = tmp_path / "repro.py"
    script.write_text(text + "\n\nimport torch\nx = torch.linspace(-3, 3, 16)\nout = torch.empty_like(x)\n"
                      "aliased_helper_kernel[(1,)](x, out, BLOCK=16)\n"
                      "assert torch.allclose(out, torch.nn.functional.softplus(x), atol=1e-6), out\nprint('ok')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([sys.executable, "-I", script.name], cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "TRITON_INTERPRET": "1"}, timeout=300, check=False)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stdout + proc.stderr
    script.write_text(script.read_text().replace("softplus = softplus_nv\n", ""))  # negative control: no binding
    proc = subprocess.run([sys.executable, "-I", script.name], cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "TRITON_INTERPRET": "1"}, timeout=300, check=False)
    assert proc.returncode != 0 and "softplus" in proc.stderr, proc.stdout + proc.stderr


def local_debug_kernel(debug: bool):
    """Upstream test_core's test_interleave: the jit decorator reads a local of the test function."""

    @triton.jit(debug=debug)
    def kernel(Z, N: tl.constexpr):
        tl.store(Z + tl.arange(0, N), tl.arange(0, N))

    return kernel


def test_a_jit_decorator_reading_a_local_is_written_with_the_jit_functions_own_value():
    text = extract_kernel(local_debug_kernel(True)).text()
    assert "@triton.jit(debug=True)" in text and "debug=debug" not in text
    assert "@triton.jit(debug=False)" in extract_kernel(local_debug_kernel(False)).text()
    # negative control: a plain function has no JITFunction to read the value from, so the local stays unresolved
    with pytest.raises(SourceError, match="debug"):
        extract_kernel(local_debug_kernel(True).fn)


def test_a_plain_function_wrapped_in_tl_constexpr_is_embedded_and_wrapped_again(tmp_path):
    """FlagGems' cumsum kernels call `get_scan_accum_type`, a `@tl.constexpr def`: their recording kept no source
    ("function value ... is not a plain literal"); now the function is embedded and wrapped again, and it runs."""
    text = extract_kernel(constexpr_function_kernel).text()
    assert "def accumulator_type(" in text and "accumulator_type = tl.constexpr(accumulator_type)" in text
    script = tmp_path / "repro.py"
    script.write_text(text + "\n\nimport torch\nx = torch.ones(16, dtype=torch.float16)\n"
                      "out = torch.empty(16, dtype=torch.float32)\nconstexpr_function_kernel[(1,)](x, out, BLOCK=16)\n"
                      "assert out.tolist() == [float(i + 1) for i in range(16)], out\nprint('ok')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    proc = subprocess.run([sys.executable, "-I", script.name], cwd=tmp_path, capture_output=True, text=True,
                          env={**env, "TRITON_INTERPRET": "1"}, timeout=300, check=False)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stdout + proc.stderr
    # the kernel sees a tl.constexpr, as it did on the device (the compiled path calls no plain Python function)
    scope: dict = {}
    exec(compile(text, "repro", "exec"), scope)
    assert type(scope["accumulator_type"]).__name__ == "constexpr"
    # negative control: a tl.constexpr holding some other object is still refused
    with pytest.raises(SourceError, match="not a plain literal"):
        extract_kernel(opaque_constexpr_kernel)


def test_a_module_handed_around_as_a_value_is_still_refused():
    with pytest.raises(SourceError, match="module 'tle' itself"):
        extract_kernel(module_as_value_kernel)


def test_a_builtin_the_interpreter_left_patched_is_still_imported_as_itself(monkeypatch):
    """Triton's interpreter swaps tl builtins for lambdas holding them as `member` and, from a helper call,
    does not swap them back; a module attribute that is such a lambda still stands for the builtin."""
    home = importlib.import_module(fast_max.__module__)
    monkeypatch.setattr(home, fast_max.__qualname__, lambda *a, member=fast_max, **k: member(*a, **k))
    text = extract_kernel(aliased_builtin_kernel).text()
    assert f"from {fast_max.__module__} import {fast_max.__qualname__} as fast_max" in text
    monkeypatch.setattr(home, fast_max.__qualname__, lambda *a, **k: None)  # negative control: another function
    with pytest.raises(SourceError, match="fast_max"):
        extract_kernel(aliased_builtin_kernel)
