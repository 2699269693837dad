"""Liger-Kernel (liger-kernel 0.8.5): RMSNorm, SwiGLU, cross entropy, fused linear cross entropy and RoPE,
forward, through its public autograd Functions, at the shapes of LLM training (hidden sizes, vocabularies,
Llama's heads). References are ours."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import torch

import parity
from libraries._load import Library, perf_fields
from parity import KernelSpec, Tolerance, known, randn
from parity.cases import by_level, product
from parity.spec import DTYPES

LIGER = Library.pinned("liger")
# Liger finds an NPU through transformers' is_torch_npu_available (transformers and torch_npu installed); on
# an NPU host without transformers it takes its GPU path (libdevice.rsqrt, a stub that returns None on
# triton-ascend 3.2). ascend-lowered presents an NPU without either package, so it answers that probe as an NPU
# host with transformers would, before Liger's ops import it (liger_kernel/utils.py:is_npu_available)
if parity.current_backend() == "ascend-lowered":
    with contextlib.suppress(ImportError):
        import liger_kernel.utils

        liger_kernel.utils.is_npu_available = lambda: True
Params = Mapping[str, Any]
EPS = 1e-6
ROW_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason="a row reduction over up to 4096 (RMSNorm) or "
                             "32000 (cross entropy) fp32 terms, in another order than the fp64 one")}

# bf16: logits are rounded to bf16 by the matmul before the kernel sees them (8 significant bits of O(1)
# values), so the mean loss carries that rounding; 4096-term fp32 dot products in another order for fp32
FLCE_TOL = {**ROW_TOL, "bf16": Tolerance(rtol=1.6e-2, atol=1e-2, reason="the logits are bf16 (the matmul's "
                                        "output dtype): 2^-8 relative on O(1) logits, averaged into the loss")}


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


def _flce_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    # W scaled by H^-1/2 so that logits are O(1), as after a trained model's final norm
    return {"x": randn((p["M"], p["H"]), p["dtype"], gen), "w": randn((p["V"], p["H"]), p["dtype"], gen,
                                                                       scale=p["H"] ** -0.5),
            "target": torch.randint(0, p["V"], (p["M"],), generator=gen)}


def _flce_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    fn = LIGER.op("liger_kernel.ops.fused_linear_cross_entropy:LigerFusedLinearCrossEntropyFunction")
    return {"loss": fn.apply(inputs["x"], inputs["w"], inputs["target"])[0].reshape(1)}


def _flce_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    logits = inputs["x"] @ inputs["w"].T
    return {"loss": torch.nn.functional.cross_entropy(logits, inputs["target"]).reshape(1)}


def _rope_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """q, k in the [B, T, heads, D] layout of a projection's output; cos, sin as Llama's rotary table."""
    b, t, d, dt = p["B"], p["T"], p["D"], p["dtype"]
    inv_freq = 10000.0 ** -(torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.arange(t, dtype=torch.float64)[:, None] * inv_freq  # [T, D/2]
    emb = torch.cat([angles, angles], -1)[None]  # [1, T, D]: the halves repeat, as Llama's table does
    return {"q": randn((b, t, p["HQ"], d), dt, gen), "k": randn((b, t, p["HKV"], d), dt, gen),
            "cos": emb.cos().to(DTYPES[dt]), "sin": emb.sin().to(DTYPES[dt])}


def _rope_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    fn = LIGER.op("liger_kernel.ops.rope:LigerRopeFunction")
    # [B, heads, T, D] views of [B, T, heads, D] storage, as attention layers pass them; rotated in place
    q, k = fn.apply(inputs["q"].clone().transpose(1, 2), inputs["k"].clone().transpose(1, 2), inputs["cos"],
                    inputs["sin"])
    return {"q": q.transpose(1, 2), "k": k.transpose(1, 2)}


def _rope_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    cos, sin = inputs["cos"][:, :, None], inputs["sin"][:, :, None]  # [1, T, 1, D]

    def rotate(x: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin

    return {"q": rotate(inputs["q"]), "k": rotate(inputs["k"])}


ROPE_TOL = {"bf16": Tolerance(rtol=0.0, atol=1e-6, max_err_ratio=0.008, reason=(
    "Liger's RoPE multiplies and adds in the input dtype: each bf16 product rounds by up to 2^-9 of |q|, and "
    "q·cos - q'·sin cancels, so an element's error is relative to |q|, not to the result (on the H200, 1.7% of "
    "elements broke rtol=0.016 at T=4096 with err_ratio 0.0020); judged on err_ratio, 0.008 = two bf16 roundings"))}


def _spec(name: str, kernel: str, **fields: Any) -> KernelSpec:
    return KernelSpec(name=name, family="liger", kernel=LIGER.kernels(kernel), unavailable=LIGER.unavailable,
                      **perf_fields(fields["cases"]), **fields)


# Liger does not mark seq_len do_not_specialize, so Triton's default integer specialization (== 1,
# divisible by 16, other) may give up to 3 variants over a length sweep: bounded, not a recompile per
# length. A fourth compile in one base would be one.
INT_SPECIALIZED = {b: 3 for b in ("cuda", "cuda-compile", "ascend", "ascend-compile", "ascend-lowered", "interpret")}

SPECS = [
    _spec("liger_rms_norm", "liger_kernel.ops.rms_norm:_rms_norm_forward_kernel", launch=_rms_launch,
          reference=_rms_ref, make_inputs=_rms_inputs, tolerance=ROW_TOL,
          cases=by_level(product(M=[64], N=[1024], dtype=["fp32", "bf16"]),
                         product(M=[2048], N=[4096], dtype=["bf16"])), dynamic_args=("M",)),
    _spec("liger_swiglu", "liger_kernel.ops.swiglu:_swiglu_forward_kernel", launch=_swiglu_launch,
          reference=_swiglu_ref, make_inputs=_swiglu_inputs,
          cases=by_level(product(M=[64], N=[1024], dtype=["fp32", "bf16"]),
                         product(M=[2048], N=[11008], dtype=["bf16"]))),
    _spec("liger_cross_entropy", "liger_kernel.ops.cross_entropy:liger_cross_entropy_kernel", launch=_ce_launch,
          reference=_ce_ref, make_inputs=_ce_inputs, tolerance=ROW_TOL,
          cases=by_level(product(M=[16], V=[32000], dtype=["fp32"]),
                         product(M=[1024], V=[32000], dtype=["fp32"]))),
    # logits chunks come from torch's matmul, the loss from liger_cross_entropy_kernel per chunk
    _spec("liger_fused_linear_cross_entropy", "liger_kernel.ops.cross_entropy:liger_cross_entropy_kernel",
          launch=_flce_launch, reference=_flce_ref, make_inputs=_flce_inputs, tolerance=FLCE_TOL,
          cases=by_level(product(M=[16], H=[128], V=[512], dtype=["fp32", "bf16"]),
                         product(M=[256], H=[4096], V=[32000], dtype=["bf16"]))),
    _spec("liger_rope", "liger_kernel.ops.rope:_triton_rope", launch=_rope_launch, reference=_rope_ref,
          make_inputs=_rope_inputs, tolerance=ROPE_TOL,
          known_divergences=(known.INTERPRETER_BF16,),  # rotate_half negates bf16
          cases=by_level(product(B=[1], T=[16], HQ=[4], HKV=[2], D=[64], dtype=["fp32", "bf16"]),
                         product(B=[1], T=[4096], HQ=[32], HKV=[8], D=[128], dtype=["bf16"])),
          out_dims={"q": ("b", "t", "h", "d"), "k": ("b", "t", "h", "d")}, dynamic_args=("T",),
          expected_compiles=INT_SPECIALIZED),
]
