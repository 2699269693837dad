"""Liger-Kernel (liger-kernel 0.8.5): RMSNorm, SwiGLU and cross entropy, forward, through its public
autograd Functions, at the row widths of LLM training (hidden sizes, vocabularies). References are ours."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from libraries._load import Library
from parity import KernelSpec, Tolerance, randn
from parity.cases import by_level, product

LIGER = Library.pinned("liger")
Params = Mapping[str, Any]
EPS = 1e-6
ROW_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason="a row reduction over up to 4096 (RMSNorm) or "
                             "32000 (cross entropy) fp32 terms, in another order than the fp64 one")}


def _rms_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"x": randn((p["M"], p["N"]), p["dtype"], gen), "w": randn((p["N"],), p["dtype"], gen)}


def _rms_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    fn = LIGER.op("liger_kernel.ops.rms_norm:LigerRMSNormFunction")
    return {"y": fn.apply(inputs["x"], inputs["w"], EPS, 0.0, "llama", False)}


def _rms_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    return {"y": x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * inputs["w"]}


def _swiglu_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"a": randn((p["M"], p["N"]), p["dtype"], gen), "b": randn((p["M"], p["N"]), p["dtype"], gen)}


def _swiglu_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"c": LIGER.op("liger_kernel.ops.swiglu:LigerSiLUMulFunction").apply(inputs["a"], inputs["b"])}


def _swiglu_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    a = inputs["a"]
    return {"c": a * torch.sigmoid(a) * inputs["b"]}


def _ce_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    target = torch.randint(0, p["V"], (p["M"],), generator=gen)
    return {"logits": randn((p["M"], p["V"]), p["dtype"], gen, scale=2.0), "target": target}


def _ce_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    fn = LIGER.op("liger_kernel.ops.cross_entropy:LigerCrossEntropyFunction")
    # the forward writes the gradient into the logits (Liger's in-place trick): give it a copy
    loss = fn.apply(inputs["logits"].clone(), inputs["target"], None, -100, 0.0, 0.0, "mean")[0]
    return {"loss": loss.reshape(1)}


def _ce_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"loss": torch.nn.functional.cross_entropy(inputs["logits"], inputs["target"]).reshape(1)}


def _spec(name: str, kernel: str, **fields: Any) -> KernelSpec:
    return KernelSpec(name=name, family="liger", kernel=LIGER.kernels(kernel), unavailable=LIGER.unavailable,
                      **fields)


SPECS = [
    _spec("liger_rms_norm", "liger_kernel.ops.rms_norm:_rms_norm_forward_kernel", launch=_rms_launch,
          reference=_rms_ref, make_inputs=_rms_inputs, tolerance=ROW_TOL,
          cases=by_level(product(M=[64], N=[1024], dtype=["fp32", "bf16"]),
                         product(M=[2048], N=[4096], dtype=["bf16"]))),
    _spec("liger_swiglu", "liger_kernel.ops.swiglu:_swiglu_forward_kernel", launch=_swiglu_launch,
          reference=_swiglu_ref, make_inputs=_swiglu_inputs,
          cases=by_level(product(M=[64], N=[1024], dtype=["fp32", "bf16"]),
                         product(M=[2048], N=[11008], dtype=["bf16"]))),
    _spec("liger_cross_entropy", "liger_kernel.ops.cross_entropy:liger_cross_entropy_kernel", launch=_ce_launch,
          reference=_ce_ref, make_inputs=_ce_inputs, tolerance=ROW_TOL,
          cases=by_level(product(M=[16], V=[32000], dtype=["fp32"]),
                         product(M=[1024], V=[32000], dtype=["fp32"]))),
]
