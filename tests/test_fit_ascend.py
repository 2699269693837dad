"""The fit advisor on ascend-compile, on real compiles: triton-ascend's own gather test kernel.

Its 128-row case (src [128, 64] fp32, indices [128, 128]) overflows the UB and has no tile constexpr
(its block sizes are its problem sizes), so no config of it fits: the advisor must say so and name the
row block that does fit, proven by a compile, with the UB figure bishengir's plan gives. Needs the
Ascend toolchain and a triton-ascend checkout (PARITY_TRITON_ASCEND_SRC or PARITY_TRITON_ASCEND_GIT).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest

from parity.spec import Case


@pytest.fixture(scope="module", name="backend")
def ascend_backend(tmp_path_factory) -> Iterator[object]:
    import sys

    from parity.backends.ascend.compile import AscendCompileBackend

    lowered = sys.modules.get("parity.backends.ascend.lowered")
    if lowered is not None and lowered.cpu_path_installed():
        pytest.skip("this process already runs ascend-lowered's CPU path (one tier per process): run "
                    "tests/test_fit_ascend.py in a pytest process of its own")
    backend = AscendCompileBackend()
    reason = backend._missing()
    if reason:
        pytest.skip(f"needs the Ascend toolchain: {reason}")
    # tests/conftest.py turns on the interpreter for the engine tests; these need the real JIT, also while
    # the spec module builds its kernel
    saved = {k: os.environ.pop(k, None) for k in ("TRITON_INTERPRET", "PARITY_CACHE_DIR", "PARITY_NO_FIT")}
    os.environ["PARITY_CACHE_DIR"] = str(tmp_path_factory.mktemp("parity-cache"))  # a cold fit cache
    try:
        backend.prepare()
        from libraries import triton_ascend_ut

        if triton_ascend_ut.unavailable():
            pytest.skip(triton_ascend_ut.unavailable())
        yield backend
    finally:
        for key, value in saved.items():
            os.environ.pop(key, None)
            if value is not None:
                os.environ[key] = value


def _gather(backend, src, idx):
    from libraries.triton_ascend_ut import SPECS

    [spec] = SPECS
    case = Case({"src": src, "idx": idx, "axis": 1, "dtype": "fp32"})
    return backend.compile_case(spec, case, spec.make_inputs(case.params, __import__("torch").Generator()))


def test_the_gather_test_overflows_and_only_a_row_block_fits(backend):
    [c] = _gather(backend, (128, 64), (128, 128))
    assert (c["ok"], c["error_kind"], c["ub_bits"]) == (False, "ub_overflow", 2_359_296), c["message"]
    fit = c["fit"]
    assert fit["fitting"] == [] and fit["smallest_need"] == 2_359_296  # no config of the same problem fits
    assert fit["cap"].startswith("tile the rows: the launcher must pass a row block and a grid over it")
    # the largest row block that fits, with the UB its compile planned (half the 128-row need)
    assert "idx_dim0=64, out_dim0=64, src_dim0=64 fits, 1,179,648 of 1,572,864 bits" in fit["cap"], fit
    # bishengir's UB plan agrees with its overflow message wherever both exist
    from parity.fit.cache import fit_cache_dir

    probes = [json.loads(p.read_text()) for p in fit_cache_dir().glob("*.json")]
    failed = [p for p in probes if p["ok"] is False]
    assert failed and all(p["planned"] == p["used"] for p in failed), probes


def test_a_small_gather_fits_and_gets_no_fit(backend):
    [c] = _gather(backend, (4, 64), (4, 32))
    assert c["ok"] and "fit" not in c
