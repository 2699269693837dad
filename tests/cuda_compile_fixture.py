"""The cuda-compile backend as a module-scoped fixture, for the control files that drive it by hand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from parity.backends.cuda.compile import CudaCompileBackend


@pytest.fixture(scope="module", name="backend")
def cuda_compile_backend() -> Iterator[CudaCompileBackend]:
    b = CudaCompileBackend()
    reason = b.unavailable()
    if reason:
        pytest.skip(reason)
    b.prepare()
    yield b
    b.restore()
