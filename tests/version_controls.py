"""The engine's triton-version shims on real compiles: counter, autotune pinning, compile-only driver.

Not collected directly (no test_ prefix): tests/test_counter_versions.py runs this file in a fresh
process with TRITON_INTERPRET=0 (the self-tests turn the interpreter on, and the interpreter has no
compile hooks). Every matrix session runs it first against the triton it installed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import torch

from parity.backends.cuda.compile import CudaCompileBackend
from parity.compile.counter import CompileCounter
from parity.compile.tools import clear_jit_caches
from parity.run.autotune_pin import pinned
from parity.seams.versions import hook_style

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

assert os.environ.get("TRITON_INTERPRET", "0") == "0", "run through tests/test_counter_versions.py"
# before any decoration: triton 3.2's Autotuner asks the active driver for its benchmarker at once
BACKEND = CudaCompileBackend()
BACKEND.prepare()

# FACTS: on sm_90 compile-only, n over these values compiles 3 times specialized (n == 1, n % 16 == 0,
# neither) and once with do_not_specialize
SWEEP = (1, 1000, 1024, 1025, 2048, 4099)
CONFIGS = [triton.Config({"BLOCK": 32}, num_warps=1), triton.Config({"BLOCK": 64}, num_warps=2),
           triton.Config({"BLOCK": 128}, num_warps=4)]


@triton.jit
def specialized_copy(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


@triton.jit(do_not_specialize=["n"])
def unspecialized_copy(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


@triton.autotune(configs=CONFIGS, key=["n"])
@triton.jit(do_not_specialize=["n"])
def tuned_copy(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


@pytest.fixture(scope="module")
def backend() -> Iterator[CudaCompileBackend]:
    if BACKEND.unavailable():
        pytest.skip(BACKEND.unavailable())
    yield BACKEND
    BACKEND.restore()


def _sweep(kernel) -> int:
    clear_jit_caches([kernel])
    with CompileCounter() as counter:
        for n in SWEEP:
            x = torch.zeros(n)
            kernel[(triton.cdiv(n, 128),)](x, torch.empty_like(x), n, BLOCK=128)
    clear_jit_caches([kernel])
    return counter.count([kernel])


def test_hook_style_matches_the_version():
    major_minor = tuple(int(p) for p in triton.__version__.split(".")[:2])
    assert hook_style() == ("knobs" if major_minor >= (3, 4) else "class"), triton.__version__


def test_the_specialized_twin_compiles_three_times_and_the_unspecialized_once(backend):
    assert (_sweep(specialized_copy), _sweep(unspecialized_copy)) == (3, 1), triton.__version__


def test_the_compile_only_driver_records_a_cubin_with_its_resources(backend):
    backend.log.begin([], set())
    _sweep(specialized_copy)
    assert len(backend.log.compiles) == 3
    for compile_ in backend.log.compiles:
        assert compile_["ok"] and compile_["stage_reached"] == "cubin", compile_
        assert compile_["n_regs"] and compile_["shared_bytes"] is not None, compile_
        assert compile_["grid"], compile_  # the launcher stand-in saw the launch


def test_pinning_compiles_one_config_and_unpinned_autotuning_compiles_all(backend):
    def run() -> int:
        clear_jit_caches([tuned_copy])
        with CompileCounter() as counter:
            x = torch.zeros(1000)
            tuned_copy[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, torch.empty_like(x), 1000)
        return counter.count([tuned_copy])

    with pinned([tuned_copy], "n=1000") as picks:
        assert run() == 1 and list(picks) == ["tuned_copy"]
    assert run() == len(CONFIGS)
