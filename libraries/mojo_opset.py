"""mojo_opset (github.com/XPU-Forces/mojo_opset): its Atlas A2 (910B) Triton kernels, op by op.

The ops are called through their `*_impl` entry functions in `mojo_opset/backends/ttx/kernels/npu/a2`,
as mojo's ttx backend calls them (loading: libraries/_mojo.py). References are ours, in fp64; each op's
own torch golden (the "torch" backend every mojo core op registers) is a second reference, checked against
ours on the same inputs whatever the kernel does, with an independent fp64 evaluation (torch.nn.functional,
complex rotation) naming the side that is off (parity.run.second_reference). The attention ops are in
libraries/mojo_opset_attn.py; their specs are listed here too, so `--kernels libraries.mojo_opset` runs all.

At the snapshot used (libraries/pins.SNAPSHOTS) mojo ships no GDN chunk kernels on its main line: its
linear-attention chunk ops (chunk_o, chunk_delta_h, kkt, wy_fast, solve_tril) lived under
`kernels/ascend/linear_attn` on side branches (e.g. `wens/gdn_infer`) and were never merged, so there is
nothing of mojo's to run against libraries/_gdn_ref.py; libraries/gdn_npu.py covers the GDN NPU port.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from libraries import mojo_opset_attn
from libraries._mojo import golden, op, spec
from libraries.adapters import MOJO_OPSET
from parity import Tolerance, randn
from parity.cases import by_level, product
from parity.run.second_reference import SecondReference

Params = Mapping[str, Any]
EPS = 1e-6
ROW_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason="a row reduction over up to 8192 fp32 terms in "
                             "another order than the fp64 one"),
           "bf16": Tolerance(rtol=1.6e-2, atol=1e-2, reason="bf16 output rounding (eps 7.8e-3) of values up to "
                             "a few units after normalisation")}
CE_TOL = {"fp32": Tolerance(rtol=1e-4, atol=1e-4, reason="a log-sum-exp over V=4096..32000 fp32 logits from an "
                            "fp32 matmul (tf32/hf32 where the backend chooses it)")}


# --- inputs, launches, references -------------------------------------------------------------------

def _rows(p: Params, gen: torch.Generator) -> dict[str, Any]:
    m, n, dt = p["M"], p["N"], p["dtype"]
    return {"x": randn((m, n), dt, gen), "y": randn((m, n), dt, gen), "w": randn((n,), dt, gen),
            "b": randn((n,), dt, gen, scale=0.1)}


def _rms_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": op("rmsnorm", "rmsnorm_infer_impl")(inputs["x"], inputs["w"], EPS)}


def _rms_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    return {"y": x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * inputs["w"]}


def _ln_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": op("layernorm", "layernorm_infer_impl")(inputs["x"], inputs["w"], inputs["b"], EPS)}


def _ln_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
    return {"y": (x - mean) * torch.rsqrt(var + EPS) * inputs["w"] + inputs["b"]}


def _swiglu_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": op("swiglu", "swiglu_fwd_impl")(inputs["x"], inputs["y"])}


def _swiglu_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": inputs["x"] * torch.sigmoid(inputs["x"]) * inputs["y"]}


def _silu_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": op("silu", "silu_fwd_impl")(inputs["x"])}


def _silu_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": inputs["x"] * torch.sigmoid(inputs["x"])}


def _gelu_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": op("gelu", "gelu_fwd_impl")(inputs["x"])}


def _gelu_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """GELU as mojo's golden defines it (torch's default: the exact, erf form)."""
    x = inputs["x"]
    return {"y": 0.5 * x * (1.0 + torch.erf(x / 2.0 ** 0.5))}


def _rope_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    b, n, s, d, dt = p["B"], p["N"], p["S"], p["D"], p["dtype"]
    inv = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    angles = torch.outer(torch.arange(s, dtype=torch.float64), inv)
    emb = torch.cat([angles, angles], -1)
    return {"q": randn((b, n, s, d), dt, gen), "k": randn((b, n, s, d), dt, gen),
            "cos": emb.cos().to(torch.float32), "sin": emb.sin().to(torch.float32)}


def _rope_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    q, k = op("rope", "rope_fwd_impl")(inputs["q"], inputs["k"], inputs["cos"], inputs["sin"], head_first=True)
    return {"q": q, "k": k}


def _rope_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    cos, sin = inputs["cos"][None, None], inputs["sin"][None, None]

    def rotate(x: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin
    return {"q": rotate(inputs["q"]), "k": rotate(inputs["k"])}


def _ce_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["BT"], p["H"]), p["dtype"], gen), "w": randn((p["V"], p["H"]), p["dtype"], gen, scale=0.05),
            "target": torch.randint(0, p["V"], (p["BT"],), generator=gen)}


def _ce_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    out = op("fused_linear_cross_entropy", "fused_linear_cross_entropy_fwd_impl")(
        inputs["x"], inputs["w"], inputs["target"], reduction="mean")
    return {"loss": out[0].reshape(1)}


def _ce_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    logits = inputs["x"] @ inputs["w"].T
    return {"loss": torch.nn.functional.cross_entropy(logits, inputs["target"]).reshape(1)}


# --- mojo's torch golden, the second reference -------------------------------------------------------

def _golden_rms(i: Params, p: Params) -> dict[str, torch.Tensor]:
    g = golden("normalization:MojoRMSNorm", norm_size=p["N"], eps=EPS, dtype=torch.float64)
    g.weight = torch.nn.Parameter(i["w"])
    return {"y": g(i["x"])}


def _golden_ln(i: Params, p: Params) -> dict[str, torch.Tensor]:
    g = golden("normalization:MojoLayerNorm", norm_size=p["N"], eps=EPS, dtype=torch.float64)
    g.weight, g.bias = torch.nn.Parameter(i["w"]), torch.nn.Parameter(i["b"])
    return {"y": g(i["x"])}


def _golden_rope(i: Params, p: Params) -> dict[str, torch.Tensor]:
    q, k = golden("position_embedding:MojoApplyRoPE")(i["q"], i["k"], i["cos"], i["sin"], head_first=True)
    return {"q": q, "k": k}


def _rotate_complex(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE as a complex product: (x1 + i x2)(cos + i sin), halves split as rotate-half pairs them."""
    half = x.shape[-1] // 2
    z = torch.complex(x[..., :half], x[..., half:]) * torch.complex(cos[..., :half], sin[..., :half])
    return torch.cat([z.real, z.imag], -1)


def _arbiter_rope(i: Params, p: Params) -> dict[str, torch.Tensor]:
    cos, sin = i["cos"].double()[None, None], i["sin"].double()[None, None]
    return {"q": _rotate_complex(i["q"], cos, sin), "k": _rotate_complex(i["k"], cos, sin)}


F = torch.nn.functional
SECOND = {
    "rmsnorm": SecondReference(_rms_ref, _golden_rms, "mojo's torch golden (MojoRMSNorm)",
                               lambda i, p: {"y": F.rms_norm(i["x"], (p["N"],), i["w"], EPS)},
                               "torch.nn.functional.rms_norm in fp64"),
    "layernorm": SecondReference(_ln_ref, _golden_ln, "mojo's torch golden (MojoLayerNorm)",
                                 lambda i, p: {"y": F.layer_norm(i["x"], (p["N"],), i["w"], i["b"], EPS)},
                                 "torch.nn.functional.layer_norm in fp64"),
    "swiglu": SecondReference(_swiglu_ref, lambda i, p: {"y": golden("activation:MojoSwiGLU")(i["x"], i["y"])},
                              "mojo's torch golden (MojoSwiGLU)", lambda i, p: {"y": F.silu(i["x"]) * i["y"]},
                              "torch.nn.functional.silu(x) * y in fp64"),
    "silu": SecondReference(_silu_ref, lambda i, p: {"y": golden("activation:MojoSilu")(i["x"])},
                            "mojo's torch golden (MojoSilu)", lambda i, p: {"y": F.silu(i["x"])},
                            "torch.nn.functional.silu in fp64"),
    "gelu": SecondReference(_gelu_ref, lambda i, p: {"y": golden("activation:MojoGelu")(i["x"])},
                            "mojo's torch golden (MojoGelu)", lambda i, p: {"y": F.gelu(i["x"], approximate="none")},
                            "torch.nn.functional.gelu (exact, erf) in fp64"),
    "rope": SecondReference(_rope_ref, _golden_rope, "mojo's torch golden (MojoApplyRoPE)", _arbiter_rope,
                            "a complex-number rotation in fp64"),
}


def _rows_cases(full_n: list[int]) -> Any:
    return by_level(product(M=[16], N=[1024, 4096], dtype=["fp32"]), product(M=[4096], N=full_n, dtype=["bf16"]))


LIBRARY = MOJO_OPSET  # identity, tracker and tier needs: libraries/adapters.py

SPECS = [
    spec("rmsnorm_infer", "rmsnorm", ("_rmsnorm_infer_small_cols_kernel", "_rmsnorm_infer_kernel"), SECOND["rmsnorm"],
         launch=_rms_launch, make_inputs=_rows, tolerance=ROW_TOL, cases=_rows_cases([4096, 8192])),
    spec("layernorm_infer", "layernorm", ("_layernorm_fwd_kernel", "_layernorm_fwd_single_pass_kernel"),
         SECOND["layernorm"], launch=_ln_launch, make_inputs=_rows, tolerance=ROW_TOL, cases=_rows_cases([4096, 8192])),
    spec("swiglu_fwd", "swiglu", ("_swiglu_fwd_kernel",), SECOND["swiglu"], launch=_swiglu_launch, make_inputs=_rows,
         cases=_rows_cases([11008])),
    spec("silu_fwd", "silu", ("_silu_fwd_kernel", "_silu_fwd_nomask_kernel", "_silu_fwd_nomask_single_kernel"),
         SECOND["silu"], launch=_silu_launch, make_inputs=_rows, cases=_rows_cases([11008])),
    spec("gelu_fwd", "gelu", ("_gelu_fwd_kernel", "_gelu_fwd_nomask_kernel", "_gelu_fwd_nomask_single_kernel"),
         SECOND["gelu"], launch=_gelu_launch, make_inputs=_rows, cases=_rows_cases([11008])),
    spec("rope_fwd", "rope", ("_rope_inplace_kernel",), SECOND["rope"], launch=_rope_launch, make_inputs=_rope_inputs,
         cases=by_level(product(B=[1], N=[8], S=[128], D=[128], dtype=["fp32"]),
                        product(B=[1], N=[32], S=[4096], D=[128], dtype=["bf16"]))),
    spec("fused_linear_cross_entropy_fwd", "fused_linear_cross_entropy", ("_cross_entropy_kernel",),
         launch=_ce_launch, reference=_ce_ref, make_inputs=_ce_inputs, tolerance=CE_TOL,
         cases=by_level(product(BT=[64], H=[256], V=[4096], dtype=["fp32"]),
                        product(BT=[4096], H=[4096], V=[32000], dtype=["fp32"]))),
    *mojo_opset_attn.SPECS,
]
