"""Real-compile controls for the fork per case on cuda-compile (upstream triton, no GPU).

Not collected directly (no test_ prefix): tests/test_fork.py runs this file in a fresh process
with TRITON_INTERPRET=0, as tests/cuda_compile_controls.py is run.
"""

from __future__ import annotations

import pytest

from parity.compile.fork import ForkedCaseError
from parity.run.compile_judge import compile_records
from parity.run.runner import build_inputs
from tests import planted_libcache as planted
from tests.cuda_compile_fixture import cuda_compile_backend  # noqa: F401  (the `backend` fixture)


def _records(backend, spec) -> list[dict]:
    out = []
    for case in spec.cases("quick"):
        out += compile_records(backend.name, spec, case, backend.compile_case(spec, case, build_inputs(spec, case, 0)))
    return out


def test_without_a_fork_the_library_cache_hides_the_second_compile(backend):
    planted._COMPILED.clear()
    first, second = _records(backend, planted.LIBCACHE_UNFORKED)
    assert (first["compiles"], first["status"]) == (1, "passed"), first
    assert second["compiles"] == 0 and second["reason"] == "the launcher compiled no kernel for this case", second


def test_a_fork_per_case_gives_every_case_its_compile(backend):
    planted._COMPILED.clear()
    records = _records(backend, planted.LIBCACHE)
    assert [(r["compiles"], r["status"]) for r in records] == [(1, "passed"), (1, "passed")], records
    assert not planted._COMPILED, "the forked cases filled the parent's library cache"


def test_a_forked_case_that_crashes_is_an_error_naming_its_signal(backend):
    spec = planted.LIBCACHE_CRASH
    case = spec.cases("quick")[0]
    with pytest.raises(ForkedCaseError, match="SIGSEGV"):
        backend.compile_case(spec, case, build_inputs(spec, case, 0))
    # the worker survives: the next case still compiles
    planted._COMPILED.clear()
    assert [r["compiles"] for r in _records(backend, planted.LIBCACHE)] == [1, 1]
