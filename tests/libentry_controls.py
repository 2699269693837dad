"""A library's own kernel cache must not hide compiles from parity's counter (run on cuda-compile).

Not collected directly: tests/test_libentry_count.py runs this file in a fresh process with
TRITON_INTERPRET=0, since the compile hooks exist only for real compiles.

The library layers below are written for this control after the shape FlagGems' LibEntry has: a
wrapper that keeps the kernels it compiled in its own `kernel_cache` (one dict per device) and skips
triton on a hit, above a tuner that carries a `cache_key` of its own.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from parity.compile.counter import CompileCounter, base_jit_function, kernel_id
from parity.compile.tools import clear_jit_caches, jit_functions
from parity.spec.library import LibraryAdapter, register
from tests.cuda_compile_fixture import cuda_compile_backend  # noqa: F401  (the `backend` fixture)

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")

# the planted library's adapter names its cache, as libraries/adapters.py does FlagGems'
register(LibraryAdapter("planted lib", "planted-lib", "https://example.org/planted", ("tests",), ("planted",),
                        kernel_cache_attrs=("kernel_cache",)))


@triton.jit
def lib_copy_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


@triton.jit
def plain_copy_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o, mask=o < n), mask=o < n)


class KeyedTuner:
    """A tuner layer that names itself by a cache_key, as a library's Autotuner subclass may."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    @property
    def cache_key(self) -> str:
        return f"tuner-{self.fn.cache_key}"

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn.run(*args, **kwargs)


class OwnCacheEntry:
    """A launch layer with its own kernel cache: a hit reuses the kernel and never reaches triton."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.kernel_cache: tuple[dict[Any, Any], ...] = ({},)

    def run(self, *args: Any, grid: Any, **kwargs: Any) -> None:
        key = tuple((a.dtype, a.data_ptr() % 16 == 0) if hasattr(a, "data_ptr") else a for a in args)
        key += tuple(sorted(kwargs.items()))
        cache = self.kernel_cache[0]
        if key not in cache:
            cache[key] = self.fn.run(*args, grid=grid, warmup=False, **kwargs)


ENTRY = OwnCacheEntry(KeyedTuner(lib_copy_kernel))


def _counts(kernel: Any, launch: Any) -> list[int]:
    """Compiles seen in each of two cases that launch the same specialization, caches cleared between."""
    x, y = torch.ones(64), torch.empty(64)
    counts = []
    for _ in range(2):
        clear_jit_caches([kernel])
        with CompileCounter() as counter:
            launch(x, y)
        counts.append(counter.count([kernel]))
    return counts


def test_the_chain_reaches_the_jit_function_through_library_layers(backend):
    assert base_jit_function(ENTRY) is lib_copy_kernel and jit_functions([ENTRY]) == [lib_copy_kernel]
    assert kernel_id(ENTRY).endswith("libentry_controls.lib_copy_kernel")


def test_a_plain_kernel_recompiles_after_the_clear(backend):  # the expectation the library must meet
    assert _counts(plain_copy_kernel, lambda x, y: plain_copy_kernel[(2,)](x, y, 64, BLOCK=32)) == [1, 1]


def test_a_library_kernel_cache_does_not_hide_the_second_compile(backend):
    counts = _counts(ENTRY, lambda x, y: ENTRY.run(x, y, 64, grid=(2,), BLOCK=32))
    assert counts == [1, 1], f"compiles per case {counts}: the library's own cache served the second case"
