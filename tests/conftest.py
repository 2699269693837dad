"""Engine self-tests run kernels on the CPU only, through Triton's interpreter, and keep Triton's files in
parity's own cache: `nox -s tests` never writes the user's ~/.triton (children inherit the variables)."""

import os
from collections.abc import Iterator
from typing import Any

import pytest

from parity.paths import triton_cache_dir
from parity.seams.env import point_triton_at

# must precede the first @triton.jit decoration, i.e. any import of kernels/ or tests/planted
os.environ.setdefault("TRITON_INTERPRET", "1")
point_triton_at(triton_cache_dir("self-tests"))


@pytest.fixture(scope="module")
def ascend_lowered() -> Iterator[Any]:
    """The ascend-lowered tier, prepared, for tests that run kernels on it; a skip with the reason where it cannot."""
    from parity.backends.ascend.lowered import AscendLoweredBackend  # only where a test asks for the tier

    backend = AscendLoweredBackend()
    reason = backend._missing()
    if reason:
        pytest.skip(f"needs triton-ascend and LLVM/MLIR 19 (nox -s ascend-lowered): {reason}")
    saved = os.environ.pop("TRITON_INTERPRET", None)  # turned on above for the engine tests; these need the real JIT
    try:
        backend.prepare()
        yield backend
    finally:
        if saved is not None:
            os.environ["TRITON_INTERPRET"] = saved
