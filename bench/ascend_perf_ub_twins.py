"""Clean twins for UB use's calibration findings (docs/ascend-perf-2026-12-03.md): a `--kernels` module.

`twin_vector_add`: the shared vector_add with the change the advice named (BLOCK 4096, not 1024), at the
calibration's size. It must get no "larger tiles fit" (nor any other note).

    PARITY_CACHE_DIR=$(mktemp -d) python -m pytest suites/test_compile.py --backend ascend-compile \\
      --ascend-arch Ascend910B3 --kernels bench/ascend_perf_ub_twins.py -n 0 -k "twin_ and test_compile["
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import torch

from kernels.basics import vector_add as va
from parity.cases import by_level
from parity.spec import Case


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": va.vector_add(inputs["x"], inputs["y"], block=4096)}


SPECS = [dataclasses.replace(va.SPECS[0], name="twin_vector_add", launch=_launch,
                             cases=by_level([Case({"N": 1 << 20, "dtype": "fp32"})],
                                            [Case({"N": 1 << 20, "dtype": "fp32"})]))]
