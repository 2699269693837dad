"""FlagGems (flag-gems 5.0.2): softmax, layer_norm, add and mm through `flag_gems.ops`, whose functions
take aten's signatures. References are ours, in fp64."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch

import parity
from libraries._load import Library
from parity import KernelSpec, Tolerance, randn
from parity.cases import by_level, product

GEMS = Library.pinned("flag_gems")
# FlagGems finds its vendor from torch.<flag> attributes, else from `nvidia-smi`-like probes, and gives up
# with "No device were detected" on a machine without one; GEMS_VENDOR names it, as a user of the
# cuda-compile tier would (ascend-compile's torch.npu already answers "ascend")
if parity.current_target() == "cuda":
    os.environ.setdefault("GEMS_VENDOR", "nvidia")
Params = Mapping[str, Any]
EPS = 1e-5
ROW_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason="a row reduction over up to 4096 fp32 terms, in "
                             "another order than the fp64 one")}
# FlagGems' own anchor (FACTS.md): atol 1e-4 per reduced element for reductions such as mm's K
MM_TOL = {"fp32": Tolerance(rtol=1e-4, atol=1e-4 * 512 * 2**-10, reason="fp32 (tf32 on NVIDIA) products summed "
                            "over K=512: FlagGems' reduction anchor atol = 1e-4 x K, scaled by our inputs' 2^-10"),
          "fp16": Tolerance(rtol=1e-2, atol=1e-2, reason="fp16 output of a K=512 fp32 accumulation: one fp16 "
                            "ulp (2^-10 relative) plus the accumulation order")}


def _two(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"a": randn((p["M"], p["N"]), p["dtype"], gen), "b": randn((p["M"], p["N"]), p["dtype"], gen)}


def _ln_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"x": randn((p["M"], p["N"]), p["dtype"], gen), "w": randn((p["N"],), p["dtype"], gen),
            "b": randn((p["N"],), p["dtype"], gen)}


def _mm_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"a": randn((p["M"], p["K"]), p["dtype"], gen, scale=2**-5),
            "b": randn((p["K"], p["N"]), p["dtype"], gen, scale=2**-5)}


def _ops() -> Any:
    return GEMS.module("flag_gems.ops")


def _ln_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), inputs["w"], inputs["b"], EPS)
    return {"y": y}


def _spec(name: str, kernel: str, **fields: Any) -> KernelSpec:
    return KernelSpec(name=name, family="flag_gems", kernel=GEMS.kernels(kernel), unavailable=GEMS.unavailable,
                      **fields)


SPECS = [
    _spec("gems_softmax", "flag_gems.ops.softmax:softmax_kernel_inner",
          launch=lambda i, p: {"y": _ops().softmax(i["a"], -1, False)},
          reference=lambda i, p: {"y": torch.softmax(i["a"], -1)}, make_inputs=_two, tolerance=ROW_TOL,
          cases=by_level(product(M=[64], N=[1000], dtype=["fp32", "fp16"]),
                         product(M=[4096], N=[4096], dtype=["fp16"]))),
    _spec("gems_layer_norm", "flag_gems.ops.layernorm:layer_norm_persistent_kernel",
          launch=lambda i, p: {"y": _ops().layer_norm(i["x"], (p["N"],), i["w"], i["b"], EPS)[0]},
          reference=_ln_ref, make_inputs=_ln_inputs, tolerance=ROW_TOL,
          cases=by_level(product(M=[64], N=[1024], dtype=["fp32", "fp16"]),
                         product(M=[4096], N=[4096], dtype=["fp16"]))),
    _spec("gems_add", "flag_gems.ops.add:add_func",
          launch=lambda i, p: {"c": _ops().add(i["a"], i["b"])},
          reference=lambda i, p: {"c": i["a"] + i["b"]}, make_inputs=_two,
          cases=by_level(product(M=[64], N=[1000], dtype=["fp32", "fp16"]),
                         product(M=[4096], N=[4096], dtype=["fp16"]))),
    _spec("gems_mm", "flag_gems.ops.mm:mm_kernel_general",
          launch=lambda i, p: {"c": _ops().mm(i["a"], i["b"])},
          reference=lambda i, p: {"c": i["a"] @ i["b"]}, make_inputs=_mm_inputs, tolerance=MM_TOL,
          cases=by_level(product(M=[128], K=[512], N=[128], dtype=["fp32", "fp16"]),
                         product(M=[2048], K=[512], N=[2048], dtype=["fp16"]))),
]
