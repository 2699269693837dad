"""libraries/vllm_ascend.py: its kernels load from the checkout PARITY_VLLM_ASCEND names, or skip saying how."""

from __future__ import annotations

import os
import sys

import pytest

from libraries import vllm_ascend


def test_without_a_checkout_every_spec_skips_with_the_clone_command(monkeypatch, tmp_path):
    monkeypatch.delenv(vllm_ascend.ENV, raising=False)
    reason = vllm_ascend.unavailable()
    assert reason is not None and vllm_ascend.ENV in reason and vllm_ascend.COMMIT[:10] in reason
    monkeypatch.setenv(vllm_ascend.ENV, str(tmp_path))  # set, but no vllm_ascend/ there: the reason says where
    assert str(tmp_path) in vllm_ascend.unavailable()
    from libraries import vllm_ascend_rope, vllm_ascend_sample

    specs = vllm_ascend.SPECS + vllm_ascend_sample.SPECS + vllm_ascend_rope.SPECS
    assert all(spec.unavailable is vllm_ascend.unavailable for spec in specs)


def test_cases_a_test_lists_as_tuples_are_one_case_each():
    cases = vllm_ascend._rows(("B", "V"), ((1, 2), (3, 4)), dtype="fp32")
    assert [c.id for c in cases] == ["B=1,V=2,dtype=fp32", "B=3,V=4,dtype=fp32"]
    full = [c.id for c in next(s for s in vllm_ascend.SPECS if s.name.endswith("muls_add")).cases("full")]
    assert len(full) == len(set(full)) == 3  # the quick case is not counted twice


@pytest.mark.skipif(not os.environ.get(vllm_ascend.ENV), reason=f"set {vllm_ascend.ENV} to a vllm-ascend checkout "
                    f"at {vllm_ascend.COMMIT[:10]} to load its kernels")
def test_a_checkout_loads_the_kernel_modules_without_vllm_or_torch_npu():
    assert vllm_ascend.unavailable() is None
    vllm_ascend.op(f"{vllm_ascend.SAMPLE}.logprob:compute_token_logprobs")
    # the bare parent kept vllm_ascend/__init__.py (which registers the platform plugin) from running
    assert not hasattr(sys.modules["vllm_ascend"], "register")
    assert sys.modules["vllm_ascend"].__version__ == f"snapshot {vllm_ascend.COMMIT}"
    assert sys.modules["vllm_ascend.ops.triton.triton_utils"].get_vectorcore_num() == vllm_ascend.VECTOR_CORES


def test_one_module_failing_to_import_leaves_the_library_s_other_modules_importable(tmp_path, monkeypatch):
    # vllm-ascend's slice ops exist on triton-ascend only: its swiglustep module fails to import on upstream Triton,
    # and that failure must not be reported as min_p's or any other module's
    from libraries._load import Library, LibraryImportError

    pkg = tmp_path / "lib_with_one_bad_module"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "bad.py").write_text("from math import no_such_name\n")
    (pkg / "good.py").write_text("def op():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    lib = Library("lib_with_one_bad_module", "pip install nothing")
    with pytest.raises(LibraryImportError, match=r"importing lib_with_one_bad_module\.bad raised ImportError"):
        lib.op("lib_with_one_bad_module.bad:op")
    assert lib.op("lib_with_one_bad_module.good:op")() == 1
    with pytest.raises(LibraryImportError, match="bad raised"):  # remembered, and still its own
        lib.module("lib_with_one_bad_module.bad")
    assert lib.unavailable() is None
