"""Kernels are identified by module + qualname: two kernels that share a __name__ (fla's generic and
Ascend kkt kernels) must not merge in the compile counter or the specialization table."""

from __future__ import annotations

from types import SimpleNamespace

import triton

from parity.compile.counter import CompileCounter, kernel_id, kernel_labels


def _kernel_in(module: str) -> object:
    def twin_kernel(x):
        pass

    twin_kernel.__module__ = module
    twin_kernel.__qualname__ = "twin_kernel"
    return triton.jit(twin_kernel)


GENERIC, ASCEND = _kernel_in("lib.ops.generic"), _kernel_in("lib.ops.ascend")


def _hook_info(kernel: object) -> SimpleNamespace:
    """What the compile hook passes: 3.4+ gives the qualname, 3.2 the __name__; both give the JITFunction."""
    fn = kernel.fn
    return SimpleNamespace(name=fn.__qualname__, module=fn.__module__, jit_function=SimpleNamespace(fn=fn))


def test_twins_are_counted_and_labelled_apart():
    assert kernel_id(GENERIC) == "lib.ops.generic.twin_kernel" != kernel_id(ASCEND)
    counter = CompileCounter()
    for kernel in (GENERIC, GENERIC, ASCEND):
        counter._before(lambda **kw: None, fn=_hook_info(kernel), compile={})
    assert counter.count([GENERIC]) == 2 and counter.count([ASCEND]) == 1  # by __name__ alone: 3 and 3
    assert counter.per_kernel() == {"lib.ops.generic.twin_kernel": 2, "lib.ops.ascend.twin_kernel": 1}
    assert sorted(kernel_labels([GENERIC, ASCEND]).values()) == ["lib.ops.ascend.twin_kernel",
                                                                 "lib.ops.generic.twin_kernel"]


def test_a_unique_name_keeps_its_short_label():
    assert list(kernel_labels([GENERIC]).values()) == ["twin_kernel"]
