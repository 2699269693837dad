"""Cross-output data: stored without pickle, compared across backends, inputs proven identical."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from parity.report.divergence import cross_output_diff
from parity.results import outputs_store as store
from parity.spec import Case
from tests import planted_repro as planted
from tests.tier_python import tier_python

ROOT = Path(__file__).resolve().parents[1]
ASCEND_PYTHON = tier_python("ascend-compile")
DIGESTS = """
import json, sys
from parity.backends import get_backend
get_backend(sys.argv[1]).prepare()
from parity.spec.registry import build
from parity.run.runner import build_inputs
from parity.results.outputs_store import input_digest
_, specs = build([])
print(json.dumps({f"{s.name}[{c.id}]": input_digest(build_inputs(s, c, 0)) for s in specs for c in s.cases("quick")}))
"""


def _digests(python: str, backend: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "123"}
    env.pop("TRITON_INTERPRET", None)
    run = subprocess.run([python, "-c", DIGESTS, backend], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not ASCEND_PYTHON.exists(), reason="needs the ascend-compile venv: run `nox -s ascend-compile` "
                    "once, or set PARITY_ASCEND_COMPILE_PYTHON")
def test_inputs_are_bit_identical_across_backend_environments():
    """Every shared quick case: interpret under upstream triton, ascend-compile under triton-ascend."""
    upstream = _digests(sys.executable, "interpret")
    ascend = _digests(str(ASCEND_PYTHON), "ascend-compile")
    common = sorted(set(upstream) & set(ascend))
    assert len(common) >= 20
    assert [k for k in common if upstream[k] != ascend[k]] == []


def test_input_digest_sees_one_changed_bit():
    from parity.run.runner import build_inputs

    spec, case = planted.SPECS[0], next(iter(planted.SPECS[0].cases("quick")))
    a, b = build_inputs(spec, case, 0), build_inputs(spec, case, 0)
    assert store.input_digest(a) == store.input_digest(b)
    assert store.input_digest(a) != store.input_digest(build_inputs(spec, case, 1))
    b["x"].view(torch.int32).view(-1)[7] ^= 1
    assert store.input_digest(a) != store.input_digest(b)


def test_small_outputs_whole_large_ones_digest_and_samples(tmp_path):
    small = torch.randn(10, 3, dtype=torch.bfloat16)
    large = torch.randn(store.FULL_MAX_NUMEL + 5)
    path = store.save(tmp_path / "c.npz", store.payload({"s": small, "l": large}, "abc"))
    loaded = store.load(path)  # np.load(allow_pickle=False) inside: no pickle anywhere
    assert loaded.input_digest == "abc"
    assert np.array_equal(loaded.outputs["s"].full, small.float().numpy())
    big = loaded.outputs["l"]
    assert big.full is None and big.digest and big.sample.size == store.N_SAMPLES
    assert np.array_equal(big.sample, large.numpy()[big.index])
    assert np.array_equal(big.index, store.sample_indices(large.numel()))  # same positions on every backend


def test_invalid_region_is_blanked(tmp_path):
    out = torch.ones(4)
    arrays = store.payload({"o": out}, "d", {"o": torch.tensor([True, True, False, False])})
    assert np.isnan(arrays["full.o"][2:]).all() and (arrays["full.o"][:2] == 1).all()


def _stored(tmp_path: Path, name: str, value: torch.Tensor, digest: str = "same") -> store.StoredCase:
    return store.load(store.save(tmp_path / f"{name}.npz", store.payload({"o": value}, digest)))


@pytest.mark.parametrize("numel", [100, store.FULL_MAX_NUMEL * 2])
def test_cross_output_flags_only_real_differences(tmp_path, numel):
    tol = {"rtol": 1e-3, "atol": 1e-5, "max_err_ratio": None}
    base = torch.randn(numel, generator=torch.Generator().manual_seed(0))
    assert cross_output_diff(_stored(tmp_path, "a", base), _stored(tmp_path, "b", base.clone()), tol) is None
    close = base * (1 + 1e-5)
    assert cross_output_diff(_stored(tmp_path, "a", base), _stored(tmp_path, "c", close), tol) is None
    far = base.clone()
    far[store.sample_indices(numel)[3]] += 1.0
    why = cross_output_diff(_stored(tmp_path, "a", base), _stored(tmp_path, "d", far), tol)
    assert why is not None and "o: 1" in why


def test_cross_output_refuses_different_inputs(tmp_path):
    x = torch.ones(3)
    why = cross_output_diff(_stored(tmp_path, "a", x, "one"), _stored(tmp_path, "b", x, "two"), {"rtol": 0, "atol": 0})
    assert why is not None and "inputs differ" in why


def test_save_case_names_files_by_case(tmp_path):
    spec, case = planted.SPECS[0], Case({"B": 1, "T": 2, "H": 1, "K": 2, "dtype": "fp32"})
    path = store.save_case(tmp_path, spec, case, {"out": torch.zeros(1, 2, 1, 2)}, "d")
    assert path == store.path_for(tmp_path, spec.name, case.id) and path.exists()
    assert store.save_case(tmp_path, spec, case, None, "d") is None
