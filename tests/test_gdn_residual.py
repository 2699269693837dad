"""Negative controls for the solve_tril residual check: it passes the exact inverse, fails a perturbed one."""

from __future__ import annotations

import torch

from kernels.gdn import solve_tril as st
from parity.spec.inputs import as_fp64, generator
from reference import gdn as ref

PARAMS = {"B": 1, "T": 100, "H": 2, "K": 32, "BT": 64, "dtype": "fp32"}


def _exact():
    inputs = as_fp64(st._inputs(PARAMS, generator(0)))
    return inputs, {"Ai": ref.solve_tril(inputs["A"], PARAMS["BT"])}


def test_residual_accepts_the_exact_inverse():
    inputs, outputs = _exact()
    assert st.residual_check(inputs, outputs, PARAMS) is None


def test_residual_catches_one_wrong_entry():
    inputs, outputs = _exact()
    outputs["Ai"][0, 70, 1, 3] += 1e-3  # second chunk, strictly lower
    assert "exceeds its bound" in st.residual_check(inputs, outputs, PARAMS)


def test_residual_catches_a_nonzero_upper_triangle():
    inputs, outputs = _exact()
    outputs["Ai"][0, 5, 0, 40] = 1e-4  # above the diagonal, where the bound is 0
    assert "exceeds its bound" in st.residual_check(inputs, outputs, PARAMS)


def test_residual_catches_nan():
    inputs, outputs = _exact()
    outputs["Ai"][0, 99, 0, 0] = float("nan")
    assert "not finite" in st.residual_check(inputs, outputs, PARAMS)


def test_chunk_indices_skip_empty_sequences():
    from kernels.gdn import prepare_chunk_indices, prepare_chunk_offsets

    cu = torch.tensor([0, 0, 64, 100, 100, 101], dtype=torch.int32)
    assert prepare_chunk_indices(cu, 32).tolist() == [[1, 0], [1, 1], [2, 0], [2, 1], [4, 0]]
    assert prepare_chunk_offsets(cu, 32).tolist() == [0, 0, 2, 4, 4, 5]
