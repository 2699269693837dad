"""LightLLM (github.com/ModelTC/lightllm), an LLM serving engine: its Triton kernels at their serving launch patterns.

Loaded from a checkout named by PARITY_LIGHTLLM (a directory holding `lightllm/`), never copied. Its
package `__init__`s import the whole engine (models, servers, quantization back ends), so the parent
packages are registered bare, as the engine's own kernel modules import each other, and only kernel
modules that need nothing beyond torch and triton are imported. The launch patterns are the engine's:

- decode attention over a paged KV cache: a request-to-token index table (`Req_to_tokens`) maps each
  request's positions to cache slots; QK^T into an fp32 logits buffer, then softmax and P.V (two kernels);
- rotary embedding written in place through strided views (q and k are head slices of one fused qkv buffer);
- a KV-cache scatter (`destindex_copy_kv`): the output is an existing cache, written at indexed rows;
- the MoE router's fused softmax + top-k (`softmax_topk`): two outputs, one of them int32 expert ids;
- RMSNorm and SiLU-and-mul (the latter into a strided column slice of a wider buffer).

Fused MoE, LoRA and the Mamba ops of this commit import the engine's logging, configs and vLLM ops, so they
are not loaded here. References are ours, in fp64.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from libraries._load import Library, bare_module
from libraries.adapters import LIGHTLLM
from libraries.pins import SNAPSHOTS, snapshot_version
from parity import KernelSpec, Tolerance, nan_empty, randn
from parity.cases import by_level, product
from parity.spec import DTYPES

REPO = "https://github.com/ModelTC/lightllm"
COMMIT = SNAPSHOTS["lightllm"]
ENV = "PARITY_LIGHTLLM"
INSTALL = (f"git clone {REPO} <dir> && git -C <dir> checkout {COMMIT[:8]}; then {ENV}=<dir> (the directory "
           "holding lightllm/)")
# parents whose __init__ imports the engine: registered as bare packages
BARE = ("lightllm", "lightllm.models", "lightllm.models.llama", "lightllm.models.llama.triton_kernel",
        "lightllm.common", "lightllm.common.basemodel", "lightllm.common.basemodel.triton_kernel",
        "lightllm.common.fused_moe")
LLAMA = "lightllm.models.llama.triton_kernel"
LIB = Library("lightllm", INSTALL)
Params = Mapping[str, Any]


def checkout() -> Path | None:
    root = os.environ.get(ENV)
    return Path(root) if root and (Path(root) / "lightllm").is_dir() else None


def unavailable() -> str | None:
    if checkout() is None:
        where = f" ({ENV}={os.environ[ENV]} holds no lightllm/)" if os.environ.get(ENV) else ""
        return f"LightLLM's checkout is not set{where}; {INSTALL}"
    _bare_packages()
    return None


def _bare_packages() -> None:
    """Register LightLLM's parent packages without running their __init__ (see the module doc)."""
    root = checkout()
    if root is None or BARE[-1] in sys.modules:
        return
    for name in BARE:
        bare_module(name, root.joinpath(*name.split(".")))
    # a checkout may be copied without .git: name the commit the specs were checked against
    sys.modules["lightllm"].__version__ = snapshot_version("lightllm")  # type: ignore[attr-defined]


def kernels(*paths: str) -> Any:
    if unavailable():
        return f"lightllm:{'+'.join(p.split(':')[1] for p in paths)}"
    return LIB.kernels(*paths)


def op(path: str) -> Any:
    _bare_packages()
    return LIB.op(path)


# --- decode attention over a paged KV cache ---------------------------------------------------------------

def _decode_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """Two requests of lengths L and L-13 whose tokens sit at scattered cache slots; batch row 0 serves
    request 1 and row 1 request 0, so the kernels must go through both index tables."""
    lens = [p["L"], p["L"] - 13]
    slots = 2 * sum(lens)
    perm = torch.randperm(slots, generator=gen)
    table = torch.zeros((2, p["L"]), dtype=torch.int32)
    table[1, :lens[0]] = perm[:lens[0]].to(torch.int32)
    table[0, :lens[1]] = perm[lens[0]:sum(lens)].to(torch.int32)
    return {"q": randn((2, p["Hq"], p["D"]), p["dtype"], gen), "k": randn((slots, p["Hkv"], p["D"]), p["dtype"], gen),
            "v": randn((slots, p["Hkv"], p["D"]), p["dtype"], gen), "req_to_tokens": table,
            "b_req_idx": torch.tensor([1, 0], dtype=torch.int32), "b_start_loc": torch.tensor([0, lens[0]],
                                                                                               dtype=torch.int32),
            "b_seq_len": torch.tensor(lens, dtype=torch.int32)}


def _decode_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    tables = (inputs["req_to_tokens"], inputs["b_req_idx"], inputs["b_start_loc"], inputs["b_seq_len"])
    total = 2 * p["L"] - 13  # the two lengths of _decode_inputs, from the params: `parity envelope` launches on meta
    logits = nan_empty((p["Hq"], total), torch.float32, q.device)
    op(f"{LLAMA}.token_attention_nopad_att1:token_att_fwd")(q, k, logits, *tables, p["L"])
    o = nan_empty(q.shape, q.dtype, q.device)
    op(f"{LLAMA}.token_attention_softmax_and_reducev:token_softmax_reducev_fwd")(logits, v, o, *tables)
    return {"o": o}


def _decode_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    q, group = inputs["q"], p["Hq"] // p["Hkv"]
    o = torch.empty_like(q)
    for b in range(q.shape[0]):
        req, n = int(inputs["b_req_idx"][b]), int(inputs["b_seq_len"][b])
        slots = inputs["req_to_tokens"][req, :n].long()
        k = inputs["k"][slots].repeat_interleave(group, dim=1)  # [n, Hq, D]
        v = inputs["v"][slots].repeat_interleave(group, dim=1)
        scores = torch.einsum("hd,nhd->hn", q[b], k) / p["D"] ** 0.5
        o[b] = torch.einsum("hn,nhd->hd", scores.softmax(-1), v)
    return {"o": o}


# --- rotary embedding, in place through head slices of one qkv buffer -----------------------------------

def _rope_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    angle = torch.rand((p["T"], p["D"] // 2), generator=gen) * 6.3
    return {"qkv": randn((p["T"], p["Hq"] + 2 * p["Hk"], p["D"]), p["dtype"], gen),
            "cos": angle.cos().to(DTYPES[p["dtype"]]), "sin": angle.sin().to(DTYPES[p["dtype"]])}


def _rope_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    qkv = inputs["qkv"].clone()  # the engine rotates its fused projection's output in place
    q, k = qkv[:, :p["Hq"]], qkv[:, p["Hq"]:p["Hq"] + p["Hk"]]  # strided views, as LightLLM passes them
    op(f"{LLAMA}.rotary_emb:rotary_emb_fwd")(q, k, inputs["cos"], inputs["sin"])
    return {"q": q, "k": k}


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    x0, x1 = x[..., :half], x[..., half:]
    cos, sin = cos[:, None, :], sin[:, None, :]
    return torch.cat([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1)


def _rope_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    qkv, cos, sin = inputs["qkv"], inputs["cos"], inputs["sin"]
    return {"q": _rotate(qkv[:, :p["Hq"]], cos, sin), "k": _rotate(qkv[:, p["Hq"]:p["Hq"] + p["Hk"]], cos, sin)}


# --- KV-cache scatter ------------------------------------------------------------------------------------

def _copy_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    slots = 3 * p["T"]
    return {"k": randn((p["T"], p["H"], p["D"]), p["dtype"], gen), "cache": randn((slots, p["H"], p["D"]),
                                                                                    p["dtype"], gen),
            "dest": torch.randperm(slots, generator=gen)[:p["T"]]}


def _copy_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    cache = inputs["cache"].clone()  # the engine's KV cache: rows outside `dest` must stay as they were
    op("lightllm.common.basemodel.triton_kernel.destindex_copy_kv:destindex_copy_kv")(inputs["k"], inputs["dest"],
                                                                                       cache)
    return {"cache": cache}


def _copy_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    cache = inputs["cache"].clone()
    cache[inputs["dest"]] = inputs["k"]
    return {"cache": cache}


# --- the MoE router: softmax and top-k --------------------------------------------------------------------

def _topk_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    return {"gating": randn((p["T"], p["E"]), p["dtype"], gen, scale=2.0)}


def _topk_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    weights, ids = op("lightllm.common.fused_moe.softmax_topk:softmax_topk")(inputs["gating"], p["K"],
                                                                             bool(p["renorm"]))
    return {"weights": weights, "ids": ids}


def _topk_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    weights, ids = inputs["gating"].softmax(-1).topk(p["K"], dim=-1)
    if p["renorm"]:
        weights = weights / weights.sum(-1, keepdim=True)
    return {"weights": weights, "ids": ids.to(torch.float64)}


# --- RMSNorm, SiLU-and-mul -------------------------------------------------------------------------------

EPS = 1e-6


def _rms_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["M"], p["N"]), p["dtype"], gen), "w": randn((p["N"],), p["dtype"], gen)}


def _rms_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": op(f"{LLAMA}.rmsnorm:rmsnorm_forward")(inputs["x"], inputs["w"], EPS)}


def _rms_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    return {"y": x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * inputs["w"]}


def _silu_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["M"], 2 * p["N"]), p["dtype"], gen)}


def _silu_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    wide = nan_empty((p["M"], p["N"] + 64), x.dtype, x.device)
    out = wide[:, :p["N"]]  # a column slice: row stride N + 64
    op(f"{LLAMA}.silu_and_mul:silu_and_mul_fwd")(x, out)
    return {"y": out}


def _silu_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    gate, up = inputs["x"][:, :p["N"]], inputs["x"][:, p["N"]:]
    return {"y": torch.nn.functional.silu(gate) * up}


# --- specs -----------------------------------------------------------------------------------------------

ROW_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason="a row reduction (RMSNorm's mean square, attention's "
                             "softmax and P.V) in another order than the fp64 one")}
# fp16/bf16 attention: the logits are fp32 but P.V accumulates products of rounded inputs; judged on err_ratio
ATTN_TOL = {**ROW_TOL, "fp16": Tolerance(rtol=0.0, atol=1e-6, max_err_ratio=0.005, reason="P.V over rounded "
                                         "fp16 values: elementwise bounds fail where o crosses zero; fla's 0.005 "
                                         "budget for one fused forward")}
# exp of rounded logits, normalised: a few ulps of fp32 on weights up to 1
TOPK_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-6, reason="exp and a 60-term sum in fp32"),
            "fp16": Tolerance(rtol=1e-5, atol=1e-6, reason="the kernel upcasts the fp16 logits to fp32 first")}

# the kernel computes q0*cos - q1*sin in the input dtype: each product is rounded before the subtraction, so the
# error is a fraction of an ulp of the terms (|q| < 4 here: 2^-9 in fp16, 2^-6 in bf16), not of the result
ROPE_TOL = {"fp16": Tolerance(rtol=1e-3, atol=4e-3, reason="products rounded to fp16 before the subtraction: "
                              "up to 1.5 ulp of terms below 4"),
            "bf16": Tolerance(rtol=1.6e-2, atol=3e-2, reason="products rounded to bf16 before the subtraction: "
                              "up to 1.5 ulp of terms below 4")}


def _spec(name: str, kernel: Any, **fields: Any) -> KernelSpec:
    return KernelSpec(name=f"lightllm_{name}", family="lightllm", kernel=kernel, unavailable=unavailable, **fields)


LIBRARY = LIGHTLLM  # identity, tracker and tier needs: libraries/adapters.py

SPECS = [
    _spec("decode_attention", kernels(f"{LLAMA}.token_attention_nopad_att1:_fwd_kernel_token_att1",
                                      f"{LLAMA}.token_attention_softmax_and_reducev:_fwd_kernel"),
          launch=_decode_launch, reference=_decode_ref, make_inputs=_decode_inputs, tolerance=ATTN_TOL,
          cases=by_level(product(L=[45], Hq=[4], Hkv=[2], D=[64], dtype=["fp16", "fp32"]),
                         product(L=[45, 300], Hq=[8, 32], Hkv=[8], D=[64, 128], dtype=["fp16", "fp32"])),
          doc="paged decode attention: Req_to_tokens index table, QK^T then softmax.V, GQA"),
    _spec("rotary_emb", kernels(f"{LLAMA}.rotary_emb:_rotary_kernel"), launch=_rope_launch, reference=_rope_ref,
          make_inputs=_rope_inputs, tolerance=ROPE_TOL,
          cases=by_level(product(T=[37], Hq=[4], Hk=[2], D=[64], dtype=["fp16", "fp32"]),
                         product(T=[37, 1000], Hq=[32], Hk=[8], D=[128], dtype=["fp16", "bf16", "fp32"])),
          doc="RoPE in place through head slices (strided views) of one fused qkv buffer"),
    _spec("destindex_copy_kv", kernels("lightllm.common.basemodel.triton_kernel.destindex_copy_kv:"
                                       "_fwd_kernel_destindex_copy_kv"),
          launch=_copy_launch, reference=_copy_ref, make_inputs=_copy_inputs,
          cases=by_level(product(T=[19], H=[3], D=[64], dtype=["fp16"]),
                         product(T=[19, 512], H=[3, 8], D=[128], dtype=["fp16", "bf16"])),
          doc="KV-cache scatter: rows of an existing cache written at indexed slots"),
    _spec("softmax_topk", kernels("lightllm.common.fused_moe.softmax_topk:softmax_topk_kernel"),
          launch=_topk_launch, reference=_topk_ref, make_inputs=_topk_inputs, tolerance=TOPK_TOL,
          cases=by_level(product(T=[33], E=[60], K=[2], renorm=[0, 1], dtype=["fp32"]),
                         product(T=[33, 1024], E=[8, 60, 128], K=[2, 8], renorm=[0, 1], dtype=["fp32", "fp16"])),
          doc="the MoE router: fused softmax and top-k, fp32 weights and int32 expert ids"),
    _spec("rmsnorm", kernels(f"{LLAMA}.rmsnorm:_rms_norm_fwd_fused"), launch=_rms_launch, reference=_rms_ref,
          make_inputs=_rms_inputs, tolerance=ROW_TOL,
          cases=by_level(product(M=[7], N=[1000], dtype=["fp16", "fp32"]),
                         product(M=[7, 4096], N=[1000, 4096], dtype=["fp16", "bf16", "fp32"]))),
    _spec("silu_and_mul", kernels(f"{LLAMA}.silu_and_mul:_silu_and_mul_kernel"), launch=_silu_launch,
          reference=_silu_ref, make_inputs=_silu_inputs,
          cases=by_level(product(M=[37], N=[200], dtype=["fp16", "fp32"]),
                         product(M=[37, 4096], N=[200, 11008], dtype=["fp16", "bf16", "fp32"])),
          doc="SiLU(gate) * up into a column slice of a wider buffer (a strided output view)"),
]
