"""The interpreter tier runs GPU libraries unchanged: torch.cuda names a device, and an interpreted kernel
is a JITFunction whose run() returns a launch handle (what FlagGems' LibEntry relies on).

Each check runs in a fresh process: TRITON_INTERPRET is read when kernels are decorated."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# a LibEntry-like wrapper, written for this test: walk .fn to the JITFunction, read its params, keep what
# run() returns and launch it with handle[grid](*args) on the next call
SCRIPT = """
import sys, torch, triton, triton.language as tl
if {install}:
    from parity.backends.interpret import InterpretBackend
    InterpretBackend().prepare()

@triton.jit
def double(x, y, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + o, 2 * tl.load(x + o, mask=o < n), mask=o < n)

class Entry:
    def __init__(self, fn):
        self.fn, inner = fn, fn
        while not isinstance(inner, triton.runtime.JITFunction):
            inner = inner.fn
        self.names = [p.name for p in inner.params]
        self.kernel = None
    def __call__(self, grid, *args):
        if self.kernel is None:
            self.kernel = self.fn.run(*args, grid=grid, warmup=False)
        else:
            self.kernel[grid](*args)

entry = Entry(double)
for n in (100, 37):
    x = torch.arange(n, dtype=torch.float32); y = torch.full_like(x, float('nan'))
    entry((triton.cdiv(n, 64),), x, y, n, 64)
    assert torch.equal(y, 2 * x), (n, y)
assert entry.names == ["x", "y", "n", "BLOCK"]
print("torch.cuda:", torch.cuda.is_available() and torch.cuda.get_device_name(0))
print("ok")
"""


def _run(tmp: Path, install: bool, script: str = SCRIPT) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("triton")
    path = tmp / f"script_{install}.py"  # @triton.jit reads its source from a file
    path.write_text(script.format(install=install))
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT), "PARITY_CACHE_DIR": str(tmp)}
    return subprocess.run([sys.executable, str(path)], cwd=tmp, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def test_a_libentry_like_wrapper_runs_under_the_interpreter_tier(tmp_path):
    control = _run(tmp_path, install=False)  # plain interpreter: the walk reaches the Python function
    assert control.returncode != 0 and "has no attribute 'fn'" in control.stderr, control.stderr[-2000:]
    proc = _run(tmp_path, install=True)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]
    assert "torch.cuda: NVIDIA A100" in proc.stdout  # the device a GPU library's import asks for


LOOKALIKE = """
import torch, triton, triton.language as tl
from parity.backends.interpret import InterpretBackend
InterpretBackend().prepare()

class Pointer:  # a library's tensor stand-in with data_ptr() and dtype only
    def __init__(self, t): self.t, self.dtype = t, t.dtype
    def data_ptr(self): return self.t.data_ptr()

class Strided(Pointer):  # ... and with the shape and strides of the memory it points at
    def __init__(self, t): super().__init__(t); self.shape, self.device = tuple(t.shape), t.device
    def stride(self): return self.t.stride()

@triton.jit
def double(x, y):
    o = tl.arange(0, 16)
    tl.store(y + o, 2 * tl.load(x + o))

x, y = torch.arange(16.0), torch.zeros(16)
double[(1,)](Strided(x), Strided(y))  # both read and written through the view of their memory
assert torch.equal(y, 2 * x), y
try:
    double[(1,)](Pointer(x), y)
except TypeError as exc:
    print("refused:", exc)
print({install})
"""


def test_a_tensor_lookalike_runs_through_a_view_of_its_memory_or_is_named(tmp_path):
    proc = _run(tmp_path, install=True, script=LOOKALIKE)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "argument 'x' is a __main__.Pointer" in proc.stdout and "TRITON_INTERPRET=1" in proc.stdout


HELPER = "import triton\n\n\n@triton.jit\ndef twice(x):\n    return x + x\n"  # its module never imports tl
CALLS_HELPER = """
import torch, triton, triton.language as tl
if {install}:
    from parity.backends.interpret import InterpretBackend
    InterpretBackend().prepare()
from helper import twice

@triton.jit
def apply(x, y):
    o = tl.arange(0, 8)
    tl.store(y + o, twice(tl.load(x + o)))

x, y = torch.arange(8.0), torch.zeros(8)
apply[(1,)](x, y)
assert torch.equal(y, 2 * x), y
print("ok")
"""


def test_a_device_function_whose_module_lacks_triton_language_runs(tmp_path):
    (tmp_path / "helper.py").write_text(HELPER)
    control = _run(tmp_path, install=False, script=CALLS_HELPER)  # the interpreter's own assertion
    assert control.returncode != 0 and "triton.language must be visible" in control.stderr, control.stderr[-2000:]
    proc = _run(tmp_path, install=True, script=CALLS_HELPER)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]


FLAG_GEMS = """
import torch
from parity.backends.interpret import InterpretBackend
InterpretBackend().prepare()
import flag_gems.ops as ops
x = torch.randn(8, 100)
for _ in range(2):  # the second call launches from LibEntry's own cache
    assert torch.allclose(ops.softmax(x, -1, False), torch.softmax(x, -1), atol=1e-6)
    assert torch.equal(ops.add(x, x), x + x)  # a generated pointwise kernel, StridedBuffer arguments
print({install})
"""


# Found when CI first had flag-gems (2026-12-01), not yet triaged: under upstream Triton 3.8's interpreter FlagGems
# 5.0.2's generated pointwise stores read `<block pointer>.type.element_ty`, which the interpreter's aggregate type
# lacks, and a second softmax launch from LibEntry's cache misses its heuristics' TILE_N/ONE_TILE_PER_CTA. Strict:
# this fails the suite the day both run again.
@pytest.mark.xfail(strict=True, reason="FlagGems 5.0.2 under Triton 3.8's interpreter: block-pointer element_ty, "
                                       "LibEntry's cached launch without its heuristics' arguments (untriaged)")
def test_flag_gems_imports_and_runs_under_the_interpreter_tier(tmp_path):
    if importlib.util.find_spec("flag_gems") is None:
        pytest.skip("flag_gems is not installed here: `pip install flag-gems==5.0.2 pyyaml sqlalchemy`")
    env_cache = tmp_path / "gems"
    proc = _run(tmp_path, install=True, script=FLAG_GEMS.replace("import torch\n", "import os, torch\n"
                f"os.environ['FLAGGEMS_CACHE_DIR'] = {str(env_cache)!r}\n", 1))
    assert proc.returncode == 0 and "True" in proc.stdout, proc.stderr[-3000:]
