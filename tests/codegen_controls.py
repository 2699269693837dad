"""A kernel the library generates during the launch is counted, by name and file (run on cuda-compile).

Not collected directly: tests/test_codegen_count.py runs this file in a fresh process with
TRITON_INTERPRET=0, since the compile hooks exist only for real compiles. The case runs through
parity.run.runner.run_case, the accuracy path a GPU tier takes, on the compile-only driver (nothing
executes, so only the record's compile fields are looked at).
"""

from __future__ import annotations

import pytest

from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from tests import planted_codegen as planted
from tests.cuda_compile_fixture import cuda_compile_backend  # noqa: F401  (the `backend` fixture)

pytest.importorskip("triton")
SPECS = {s.name: s for s in planted.SPECS}


def _record(backend, name: str, tmp_path) -> dict:
    spec = SPECS[name]
    for op in (planted.SCALE, planted.SHIFT):  # each test generates its kernels afresh
        op.generated = None
    record, _ = run_case(spec, spec.cases("quick")[0], backend, seed=0, cache=ReferenceCache(tmp_path))
    return record


def test_a_generated_kernel_counts_in_the_case_record(backend, tmp_path):
    record = _record(backend, "codegen_scale", tmp_path)
    assert record["compiles"] >= 1, f"the generated kernel's compile was not counted: {record['compiles']}"
    [compiled] = record["compiled_kernels"]
    assert compiled["kernel"] == "pointwise_kernel" and compiled["file"] == "<parity-codegen-scale>", compiled
    assert compiled["compiles"] == record["compiles"]


def test_generated_kernels_sharing_name_and_module_stay_apart_by_file(backend, tmp_path):
    record = _record(backend, "codegen_twins", tmp_path)
    by_file = {c["file"]: c for c in record["compiled_kernels"]}
    assert set(by_file) == {"<parity-codegen-scale>", "<parity-codegen-shift>"}, record["compiled_kernels"]
    assert record["compiles"] == 2 and all(c["compiles"] == 1 for c in by_file.values())
    # the same name and module: a table tells them apart by the file
    assert {c["kernel"] for c in by_file.values()} == {"codegen.generated.pointwise_kernel (<parity-codegen-scale>)",
                                                       "codegen.generated.pointwise_kernel (<parity-codegen-shift>)"}
