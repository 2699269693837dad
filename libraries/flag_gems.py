"""FlagGems (flag-gems 5.0.2) through `flag_gems.ops`, whose functions take aten's signatures: softmax,
layer_norm, rms_norm, reductions (sum, max along a dim, cumsum), index ops (index_select, embedding),
matmuls (mm, bmm, addmm) and elementwise ops (add, mul, where, exp, gelu, silu). References are ours,
in fp64, at the shapes of LLM layers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from libraries._load import Library, perf_fields
from libraries.adapters import FLAG_GEMS
from parity import KernelSpec, Tolerance, randn
from parity.cases import by_level, product
from parity.spec.library import prepare

GEMS = Library.pinned("flag_gems")
LIBRARY = FLAG_GEMS
prepare(LIBRARY, once=False)  # vendor, cache dirs and import order before flag_gems imports (libraries/adapters.py)
Params = Mapping[str, Any]
EPS = 1e-5
ROW_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason="a row reduction over up to 4096 fp32 terms, in "
                             "another order than the fp64 one")}
# FlagGems' own anchor (flag_gems/testing/__init__.py assert_close): atol 1e-4 per reduced element for
# reductions such as mm's K
MM_TOL = {"fp32": Tolerance(rtol=1e-4, atol=1e-4 * 512 * 2**-10, reason="fp32 (tf32 on NVIDIA) products summed "
                            "over K=512: FlagGems' reduction anchor atol = 1e-4 x K, scaled by our inputs' 2^-10"),
          "fp16": Tolerance(rtol=1e-2, atol=1e-2, reason="fp16 output of a K=512 fp32 accumulation: one fp16 "
                            "ulp (2^-10 relative) plus the accumulation order")}
# sums along a dim: fp32 accumulation of up to 4096 O(1) terms (partial sums reach ~64, ulp 7.6e-6), then
# one rounding to the output dtype
SUM_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-4, reason="fp32 sums of up to 4096 O(1) terms in another "
                             "order than the fp64 one: partial sums reach ~64, whose ulp is 7.6e-6"),
           "fp16": Tolerance(rtol=1e-3, atol=1e-3, reason="an fp32 sum rounded once to fp16 (half an ulp is "
                             "4.9e-4 relative), plus the fp32 order error")}
# a scan keeps every partial sum as an output, so the order error shows at each position
SCAN_TOL = {"fp32": Tolerance(rtol=1e-5, atol=5e-4, reason="an fp32 scan over up to 4096 O(1) terms: each "
                              "output is a partial sum of up to ~64 in magnitude (ulp 7.6e-6), reached by "
                              "another association than the fp64 one (block sums, then a scan of them)")}
# transcendental elementwise ops in fp32: libdevice erf / tanh, and tl.exp (ex2.approx on NVIDIA, after a
# multiplication by log2 e that rounds): a few ulp, and cancellation near gelu's and silu's zeros
MATH_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-6, reason="fp32 exp/erf/tanh to a few ulp (tl.exp is "
                              "ex2.approx on NVIDIA), and cancellation where gelu and silu approach 0"),
            "fp16": Tolerance(rtol=2e-3, atol=1e-5, reason="computed in fp32, rounded once to fp16 (half an ulp "
                              "is 4.9e-4 relative), after fp16 factors such as gelu's 0.5*x"),
            "bf16": Tolerance(rtol=1.6e-2, atol=1e-5, reason="torch.testing's bf16 default")}
NORM_TOL = {**ROW_TOL, "fp16": Tolerance(rtol=2e-3, atol=1e-3, reason="an fp32 row norm rounded to fp16 "
                                         "(half an ulp is 4.9e-4 relative) after the weight product")}


def _two(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"a": randn((p["M"], p["N"]), p["dtype"], gen), "b": randn((p["M"], p["N"]), p["dtype"], gen)}


def _ln_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"x": randn((p["M"], p["N"]), p["dtype"], gen), "w": randn((p["N"],), p["dtype"], gen),
            "b": randn((p["N"],), p["dtype"], gen)}


def _mm_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"a": randn((p["M"], p["K"]), p["dtype"], gen, scale=2**-5),
            "b": randn((p["K"], p["N"]), p["dtype"], gen, scale=2**-5)}


def _one(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"a": randn((p["M"], p["N"]), p["dtype"], gen)}


def _where_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {**_two(p, gen), "cond": torch.rand((p["M"], p["N"]), generator=gen) < 0.5}


def _rms_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"x": randn((p["M"], p["N"]), p["dtype"], gen), "w": randn((p["N"],), p["dtype"], gen)}


def _bmm_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    b, m, k, n, dt = p["B"], p["M"], p["K"], p["N"], p["dtype"]
    return {"a": randn((b, m, k), dt, gen, scale=2**-5), "b": randn((b, k, n), dt, gen, scale=2**-5)}


def _addmm_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {**_mm_inputs(p, gen), "bias": randn((p["N"],), p["dtype"], gen, scale=2**-5)}


def _select_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """A table [V, D] and row indices [B, T] into it (index_select takes them flattened)."""
    return {"table": randn((p["V"], p["D"]), p["dtype"], gen),
            "idx": torch.randint(0, p["V"], (p["B"], p["T"]), generator=gen)}


def _rms_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    return {"y": x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * inputs["w"]}


def _max_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    values, indices = torch.max(inputs["a"], p["dim"])
    return {"values": values, "indices": indices}


def _max_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    values, indices = _ops().max_dim(inputs["a"], p["dim"])
    return {"values": values, "indices": indices}


def _ops() -> Any:
    return GEMS.module("flag_gems.ops")


def _ln_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    y = torch.nn.functional.layer_norm(x, (x.shape[-1],), inputs["w"], inputs["b"], EPS)
    return {"y": y}


def _spec(name: str, kernel: str | tuple[str, ...], **fields: Any) -> KernelSpec:
    paths = (kernel,) if isinstance(kernel, str) else kernel
    return KernelSpec(name=name, family="flag_gems", kernel=GEMS.kernels(*paths), unavailable=GEMS.unavailable,
                      **perf_fields(fields["cases"]), **fields)


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
    # reductions: along the row (inner) and across rows (non-inner), which take different kernels
    _spec("gems_sum_dim", "flag_gems.ops.sum:sum_dim_kernel_inner",
          launch=lambda i, p: {"s": _ops().sum_dim(i["a"], [p["dim"]])},
          reference=lambda i, p: {"s": i["a"].sum(p["dim"])}, make_inputs=_one, tolerance=SUM_TOL,
          cases=by_level(product(M=[16], N=[200], dim=[0, 1], dtype=["fp32"]),
                         product(M=[4096], N=[4096], dim=[0, 1], dtype=["fp16"]))),
    # fp32 only: fp16 rows of 4096 normals tie at their max often enough to make indices ambiguous
    _spec("gems_max_dim", "flag_gems.ops.max:max_kernel", launch=_max_launch, reference=_max_ref,
          make_inputs=_one, cases=by_level(product(M=[16], N=[200], dim=[1], dtype=["fp32"]),
                                           product(M=[4096], N=[4096], dim=[1], dtype=["fp32"]))),
    _spec("gems_cumsum", "flag_gems.ops.cumsum:reduce_then_scan_root_scan_kernel_row",
          launch=lambda i, p: {"c": _ops().cumsum(i["a"], 1)},
          reference=lambda i, p: {"c": i["a"].cumsum(1)}, make_inputs=_one, tolerance=SCAN_TOL,
          cases=by_level(product(M=[8], N=[200], dtype=["fp32"]),
                         product(M=[1024], N=[4096], dtype=["fp32"]))),
    _spec("gems_rms_norm", "flag_gems.ops.rms_norm:rms_norm_kernel",
          launch=lambda i, p: {"y": _ops().rms_norm(i["x"], (p["N"],), i["w"], EPS)},
          reference=_rms_ref, make_inputs=_rms_inputs, tolerance=NORM_TOL,
          cases=by_level(product(M=[16], N=[256], dtype=["fp32", "fp16"]),
                         product(M=[4096], N=[4096], dtype=["fp16"]))),
    # index ops: rows of a matrix, and of a vocabulary-sized table gathered by token ids
    _spec("gems_index_select", "flag_gems.ops.index_select:index_select_kernel",
          launch=lambda i, p: {"y": _ops().index_select(i["table"], 0, i["idx"].reshape(-1))},
          reference=lambda i, p: {"y": i["table"][i["idx"].reshape(-1)]}, make_inputs=_select_inputs,
          cases=by_level(product(V=[100], D=[64], B=[2], T=[16], dtype=["fp32"]),
                         product(V=[4096], D=[4096], B=[1], T=[2048], dtype=["fp16"]))),
    _spec("gems_embedding", "flag_gems.ops.embedding:embedding_kernel",
          launch=lambda i, p: {"y": _ops().embedding(i["table"], i["idx"])},
          reference=lambda i, p: {"y": i["table"][i["idx"]]}, make_inputs=_select_inputs,
          cases=by_level(product(V=[100], D=[64], B=[2], T=[16], dtype=["fp32"]),
                         product(V=[32000], D=[4096], B=[1], T=[2048], dtype=["fp16"]))),
    # matmuls at K=512 (MM_TOL's K): attention-like batches, and a Linear layer with its bias
    _spec("gems_bmm", "flag_gems.ops.bmm:bmm_kernel",
          launch=lambda i, p: {"c": _ops().bmm(i["a"], i["b"])},
          reference=lambda i, p: {"c": i["a"] @ i["b"]}, make_inputs=_bmm_inputs, tolerance=MM_TOL,
          cases=by_level(product(B=[2], M=[32], K=[512], N=[32], dtype=["fp32"]),
                         product(B=[32], M=[1024], K=[512], N=[1024], dtype=["fp16"]))),
    _spec("gems_addmm", "flag_gems.ops.addmm:addmm_kernel",
          launch=lambda i, p: {"c": _ops().addmm(i["bias"], i["a"], i["b"])},
          reference=lambda i, p: {"c": i["bias"] + i["a"] @ i["b"]}, make_inputs=_addmm_inputs,
          tolerance=MM_TOL, cases=by_level(product(M=[32], K=[512], N=[32], dtype=["fp32"]),
                                           product(M=[4096], K=[512], N=[4096], dtype=["fp16"]))),
    # elementwise, at an MLP activation's size; full cases in a dtype of the quick ones, so the perf pass
    # (one case per kernel and dtype) times no more cases than it must
    _spec("gems_mul", "flag_gems.ops.mul:mul_func",
          launch=lambda i, p: {"c": _ops().mul(i["a"], i["b"])},
          reference=lambda i, p: {"c": i["a"] * i["b"]}, make_inputs=_two,
          cases=by_level(product(M=[16], N=[200], dtype=["fp32", "fp16"]),
                         product(M=[4096], N=[11008], dtype=["fp16"]))),
    _spec("gems_where", "flag_gems.ops.where:where_inner",
          launch=lambda i, p: {"c": _ops().where_self(i["cond"], i["a"], i["b"])},
          reference=lambda i, p: {"c": torch.where(i["cond"], i["a"], i["b"])}, make_inputs=_where_inputs,
          cases=by_level(product(M=[16], N=[200], dtype=["fp32"]),
                         product(M=[4096], N=[11008], dtype=["fp32"]))),
    _spec("gems_exp", "flag_gems.ops.exp:exp_func",
          launch=lambda i, p: {"y": _ops().exp(i["a"])},
          reference=lambda i, p: {"y": i["a"].exp()}, make_inputs=_one, tolerance=MATH_TOL,
          cases=by_level(product(M=[16], N=[200], dtype=["fp32"]),
                         product(M=[4096], N=[11008], dtype=["fp32"]))),
    _spec("gems_gelu", ("flag_gems.ops.gelu:gelu_none", "flag_gems.ops.gelu:gelu_tanh"),
          launch=lambda i, p: {"y": _ops().gelu(i["a"], approximate=p["approximate"])},
          reference=lambda i, p: {"y": torch.nn.functional.gelu(i["a"], approximate=p["approximate"])},
          make_inputs=_one, tolerance=MATH_TOL,
          cases=by_level(product(M=[16], N=[200], approximate=["none", "tanh"], dtype=["fp32", "fp16"]),
                         product(M=[4096], N=[11008], approximate=["none", "tanh"], dtype=["fp16"]))),
    _spec("gems_silu", "flag_gems.ops.silu:silu_forward",
          launch=lambda i, p: {"y": _ops().silu(i["a"])},
          reference=lambda i, p: {"y": torch.nn.functional.silu(i["a"])}, make_inputs=_one, tolerance=MATH_TOL,
          cases=by_level(product(M=[16], N=[200], dtype=["fp32", "fp16"]),
                         product(M=[4096], N=[11008], dtype=["fp16"]))),
]
