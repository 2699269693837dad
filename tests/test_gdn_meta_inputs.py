"""kernels.gdn.pipeline_shapes: the envelope's meta inputs get the fp64 pipeline's exact shapes and dtypes without
running it. Compared with the real pipeline at a small size, dense and varlen, at every step."""

from __future__ import annotations

import pytest
import torch

import kernels.gdn as gdn
from reference.gdn import PIPELINE_STEPS

DENSE = {"B": 2, "T": 70, "H": 2, "K": 16, "V": 8, "BT": 16, "dtype": "fp32"}
VARLEN = {"B": 1, "T": 50, "seqlens": (17, 0, 33), "H": 2, "K": 16, "V": 8, "BT": 16, "dtype": "fp32"}


def layout(out: dict[str, object]) -> dict[str, object]:
    return {k: (tuple(v.shape), v.dtype) if isinstance(v, torch.Tensor) else v for k, v in out.items()}


@pytest.mark.parametrize("until", PIPELINE_STEPS)
@pytest.mark.parametrize("p", [DENSE, VARLEN, {**DENSE, "use_g": False}], ids=["dense", "varlen", "no_g"])
def test_meta_pipeline_has_the_real_pipelines_layout(p, until):
    real = gdn.fp64_pipeline(gdn.raw_inputs(p, torch.Generator().manual_seed(0)), p, until)
    with torch.device("meta"):
        raw = gdn.raw_inputs(p, torch.Generator())
    assert raw["k"].is_meta
    shaped = gdn.fp64_pipeline(raw, p, until)
    assert all(v.is_meta for v in shaped.values() if v is not None)
    assert layout(shaped) == layout(real)
