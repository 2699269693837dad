"""Real-compile controls for the fit advisor on cuda-compile (upstream triton, no GPU).

Not collected directly: tests/test_fit.py runs this file in a fresh process with TRITON_INTERPRET=0,
as tests/test_cuda_compile.py runs its controls.
"""

from __future__ import annotations

import pytest

from parity.spec import Case

pytest.importorskip("triton.backends.nvidia.compiler")


@pytest.fixture(scope="module", name="backend")
def sm86_backend(tmp_path_factory):
    import os

    from parity.backends.cuda.compile import CudaCompileBackend

    os.environ["PARITY_CACHE_DIR"] = str(tmp_path_factory.mktemp("parity-cache"))  # a cold fit cache
    b = CudaCompileBackend()
    if b.unavailable():
        pytest.skip(b.unavailable())
    b.arch = 86
    b.prepare()
    yield b
    b.restore()


def test_the_planted_kernels_only_fitting_tile_is_found_and_each_fit_compiled(backend):
    from tests.planted_fit import PLANTED_FIT

    case = Case({"BM": 256, "K": 1024})
    inputs = PLANTED_FIT.make_inputs(case.params, None)
    compiles = backend.compile_case(PLANTED_FIT, case, inputs)
    failing = [c for c in compiles if c["error_kind"] == "out_of_resources"]
    assert failing and failing[0]["shared_bytes"] == 196608
    fit = failing[0]["fit"]
    assert fit["arch"] == "sm_86" and fit["unit"] == "bytes" and fit["search_s"] < 120
    # at the launch's four stages the one tile that fits is BM=128, BK=128 (fewer stages are shown as such)
    same_stages = [f["config"] for f in fit["fitting"] if "num_stages" not in f["config"]]
    assert same_stages == [{"BK": 128, "BM": 128}], fit
    assert {"BK": 128, "BM": 256, "num_stages": 3} not in [f["config"] for f in fit["fitting"]]  # 131,072 B
    # every claim carries the shared memory its own compile reported
    assert all(f["used"] and f["used"] <= f["of"] == 101376 for f in fit["fitting"])
    assert fit["cap"] == "BM <= 128 (it passed 256)"  # no autotune list: the launcher must cap BM


def test_no_fit_turns_the_search_off(backend, monkeypatch):
    from tests.planted_fit import PLANTED_FIT

    monkeypatch.setenv("PARITY_NO_FIT", "1")
    case = Case({"BM": 256, "K": 1024})
    compiles = backend.compile_case(PLANTED_FIT, case, PLANTED_FIT.make_inputs(case.params, None))
    assert all("fit" not in c for c in compiles)
