"""fla (flash-linear-attention, fla-core 0.6.0): the Gated DeltaNet chunk forward, op by op and whole, and
the backward of the gated and the ungated (delta rule) chunk ops.

Public ops only, called as fla's users call them, in fla's `[B, T, H, K]` layout. The references are
ours, in fp64 (https://arxiv.org/abs/2412.06464, in chunk form). fla 0.6.0's kernels use exp2:
chunk_scaled_dot_kkt_fwd expects g in log2 units, and chunk_gated_delta_rule scales the natural-log
gate by 1/ln 2 itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from libraries import adapters, gdn_reference
from libraries._load import Library, perf_fields
from parity import (
    DeclinedEnvironment,
    KernelSpec,
    Tolerance,
    known,
    l2_normalized,
    logsigmoid_of_randn,
    randn,
    sigmoid_of_randn,
)
from parity.cases import by_level, product

FLA = Library.pinned("fla")
Params = Mapping[str, Any]

RATIO = 0.005
RATIO_REASON = ("fla's own criterion for its GDN forward (fla/utils/testing.py assert_close): err_ratio <= 0.005; "
                "dot products take bf16/fp16 (or tf32) operands, so elementwise bounds fail near zero")
RATIO_TOL = {d: Tolerance(rtol=0.0, atol=1e-6, max_err_ratio=RATIO, reason=RATIO_REASON)
             for d in ("fp16", "bf16", "fp32")}
# fla's own limits for GDN gradients: 0.008 for dq, dk, dv, dh0 and 0.02 for dg, dbeta; one limit holds
# for all outputs of a case here, so the looser
BWD_TOL = {d: Tolerance(rtol=0.0, atol=1e-6, max_err_ratio=0.02, reason="fla's criterion for GDN gradients: "
                        "err_ratio <= 0.02 for dg and dbeta (0.008 for dq, dk, dv, dh0; one limit per case here)")
           for d in ("fp16", "bf16", "fp32")}
CUMSUM_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason="an fp32 sum of up to 64 terms in a different "
                                "order than the fp64 one: rounding grows past torch's 1.3e-6 default")}
# fla 0.6.0 raises this itself for gated chunk_bwd_dqkwg on Hopper under Triton >= 3.4.0, < 3.7.1, where
# Triton miscompiles it: its refusal, not a Triton bug parity found
HOPPER_TRITON_640 = DeclinedEnvironment(
    library="fla", pattern=r"on Hopper GPUs produces incorrect results for gated chunk_bwd_dqkwg",
    reason="fla refuses its gated backward (chunk_bwd_dqkwg) on Hopper with Triton >= 3.4.0 and < 3.7.1, "
           "which miscompiles it; it asks for Triton >= 3.7.1 or tilelang",
    link="https://github.com/fla-org/flash-linear-attention/issues/640")
DTYPES = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def _chunks(x: torch.Tensor, bt: int) -> torch.Tensor:
    """[B, T, ...] -> [B, T/BT, BT, ...] (T is a multiple of BT in every case here)."""
    return x.reshape(x.shape[0], x.shape[1] // bt, bt, *x.shape[2:])


# --- chunk_local_cumsum: g_c = inclusive cumsum of g inside each chunk -------------------------------

def _cumsum_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op = FLA.op("fla.ops.utils.cumsum:chunk_local_cumsum")
    return {"g": op(inputs["g"], chunk_size=p["BT"])}


def _cumsum_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    g = inputs["g"]
    return {"g": _chunks(g, p["BT"]).cumsum(2).reshape(g.shape)}


# --- chunk_scaled_dot_kkt_fwd: A[i, j] = beta_i (k_i . k_j) 2^(g_i - g_j), i > j inside a chunk -------

def _kkt_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op = FLA.op("fla.ops.common.chunk_scaled_dot_kkt:chunk_scaled_dot_kkt_fwd")
    return {"A": op(inputs["k"], g=inputs["g"], beta=inputs["beta"], chunk_size=p["BT"])}


def _kkt_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    bt = p["BT"]
    k, g, beta = _chunks(inputs["k"], bt), _chunks(inputs["g"], bt), _chunks(inputs["beta"], bt)
    kk = torch.einsum("bnihk,bnjhk->bnihj", k, k)  # [B, N, BT, H, BT]
    decay = torch.exp2(g[:, :, :, :, None] - g.permute(0, 1, 3, 2)[:, :, None])
    lower = torch.ones(bt, bt, dtype=torch.bool, device=k.device).tril(-1)[None, None, :, None, :]
    a = torch.where(lower, kk * decay * beta[..., None], 0.0)
    return {"A": a.reshape(inputs["k"].shape[0], -1, *a.shape[3:])}


# --- solve_tril: (I + A)^-1 per chunk, A strictly lower ---------------------------------------------

def _tril_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    a = randn((p["B"], p["T"], p["H"], p["BT"]), "fp32", gen, scale=0.1)
    rows = torch.arange(p["T"]) % p["BT"]
    a = torch.where(rows[None, :, None, None] > torch.arange(p["BT"])[None, None, None, :], a, 0.0)
    return {"A": a}


def _tril_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"Ai": FLA.op("fla.ops.utils.solve_tril:solve_tril")(inputs["A"])}


def _tril_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    bt, a = p["BT"], inputs["A"]
    blocks = _chunks(a, bt).permute(0, 1, 3, 2, 4)  # [B, N, H, BT, BT]
    inv = torch.linalg.inv(torch.eye(bt, dtype=a.dtype, device=a.device) + blocks)
    return {"Ai": inv.permute(0, 1, 3, 2, 4).reshape(a.shape)}


# --- chunk_gated_delta_rule: the whole forward, against the recurrent fp64 oracle --------------------

def _gdn_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    b, t, h, k, v, dt = p["B"], p["T"], p["H"], p["K"], p["V"], p["dtype"]
    return {"q": l2_normalized((b, t, h, k), dt, gen), "k": l2_normalized((b, t, h, k), dt, gen),
            "v": randn((b, t, h, v), dt, gen), "g": logsigmoid_of_randn((b, t, h), "fp32", gen),
            "beta": sigmoid_of_randn((b, t, h), dt, gen), "h0": randn((b, h, k, v), "fp32", gen)}


def _gdn_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op = FLA.op("fla.ops.gated_delta_rule:chunk_gated_delta_rule")
    o, ht = op(inputs["q"], inputs["k"], inputs["v"], inputs["g"], inputs["beta"], scale=p["K"] ** -0.5,
               initial_state=inputs["h0"], output_final_state=True)
    return {"o": o, "ht": ht}


def _gdn_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    o, ht = gdn_reference.recurrent(*(inputs[n] for n in GDN_INPUTS), h0=inputs["h0"], scale=p["K"] ** -0.5)
    return {"o": o, "ht": ht}


# --- chunk_gated_delta_rule backward, through autograd: every input's gradient -----------------------

GDN_INPUTS = ("q", "k", "v", "g", "beta")
GRADS = (*GDN_INPUTS, "h0")


def _bwd_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    inputs = _gdn_inputs(p, gen)
    return {**inputs, "do": randn(inputs["v"].shape, p["dtype"], gen), "dht": randn(inputs["h0"].shape, "fp32", gen)}


def _grads(forward: Any, inputs: Params, p: Params, names: tuple[str, ...] = GRADS) -> dict[str, torch.Tensor]:
    """d(o . do + ht . dht) / d(each input), through autograd, of forward(*inputs named) -> (o, ht)."""
    leaves = [inputs[n].detach().clone().requires_grad_() for n in names]
    with torch.enable_grad():
        o, ht = forward(*leaves)
        grads = torch.autograd.grad((o, ht), leaves, (inputs["do"], inputs["dht"]))
    return {f"d{n}": d for n, d in zip(names, grads, strict=True)}


def _bwd_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op = FLA.op("fla.ops.gated_delta_rule:chunk_gated_delta_rule")
    return _grads(lambda q, k, v, g, beta, h0: op(q, k, v, g, beta, scale=p["K"] ** -0.5, initial_state=h0,
                                                  output_final_state=True), inputs, p)


def _bwd_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    # the chunk form: the recurrence would save a [B, H, K, V] state per token for autograd
    return _grads(lambda *x: gdn_reference.chunked(*x, scale=p["K"] ** -0.5), inputs, p)


# --- chunk_delta_rule (ungated) backward: the same pipeline with g = None -----------------------------
# fla's Hopper guard (HOPPER_TRITON_640) is for the gated chunk_bwd_dqkwg only, so this backward runs there

DELTA_GRADS = ("q", "k", "v", "beta", "h0")


def _delta_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {n: x for n, x in _bwd_inputs(p, gen).items() if n != "g"}


def _delta_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op = FLA.op("fla.ops.delta_rule:chunk_delta_rule")
    return _grads(lambda q, k, v, beta, h0: op(q, k, v, beta, scale=p["K"] ** -0.5, initial_state=h0,
                                               output_final_state=True), inputs, p, DELTA_GRADS)


def _delta_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    # the delta rule is Gated DeltaNet with no decay: log-decay g = 0
    def forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor,
                h0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return gdn_reference.chunked(q, k, v, torch.zeros_like(beta), beta, h0, scale=p["K"] ** -0.5)
    return _grads(forward, inputs, p, DELTA_GRADS)


def _small_inputs(p: Params, gen: torch.Generator) -> dict[str, torch.Tensor]:
    b, t, h, k, dt = p["B"], p["T"], p["H"], p.get("K", 0), p["dtype"]
    inputs = {"g": logsigmoid_of_randn((b, t, h), "fp32", gen)}
    if k:
        inputs.update(k=l2_normalized((b, t, h, k), dt, gen), beta=sigmoid_of_randn((b, t, h), dt, gen))
    return inputs


def _spec(name: str, kernels: tuple[str, ...], **fields: Any) -> KernelSpec:
    return KernelSpec(name=name, family="fla", kernel=FLA.kernels(*kernels), unavailable=FLA.unavailable,
                      **{**perf_fields(fields["cases"]), **fields})


LIBRARY = adapters.FLA  # identity, tracker and tier needs: libraries/adapters.py

SPECS = [
    _spec("fla_chunk_local_cumsum", ("fla.ops.utils.cumsum:chunk_local_cumsum_scalar_kernel",),
          launch=_cumsum_launch, reference=_cumsum_ref, make_inputs=_small_inputs, tolerance=CUMSUM_TOL,
          cases=by_level(product(B=[2], T=[128], H=[4], BT=[64], dtype=["fp32"]),
                         product(B=[1], T=[4096], H=[16], BT=[64], dtype=["fp32"])),
          out_dims={"g": ("b", "t", "h")}, dynamic_args=("T",)),
    _spec("fla_chunk_scaled_dot_kkt_fwd", ("fla.ops.common.chunk_scaled_dot_kkt:chunk_scaled_dot_kkt_fwd_kernel",),
          launch=_kkt_launch, reference=_kkt_ref, make_inputs=_small_inputs, tolerance=RATIO_TOL,
          cases=by_level(product(B=[1], T=[128], H=[2], K=[64], BT=[64], dtype=["fp32", "bf16"]),
                         product(B=[1], T=[2048], H=[8], K=[128], BT=[64], dtype=["bf16"])),
          known_divergences=(known.INTERPRETER_BF16,), out_dims={"A": ("b", "t", "h", "j")}),
    _spec("fla_solve_tril", ("fla.ops.utils.solve_tril:solve_tril_16x16_kernel",
                             "fla.ops.utils.solve_tril:merge_16x16_to_64x64_inverse_kernel"),
          launch=_tril_launch, reference=_tril_ref, make_inputs=_tril_inputs, tolerance=RATIO_TOL,
          cases=by_level(product(B=[1], T=[128], H=[2], BT=[16, 64], dtype=["fp32"]),
                         product(B=[1], T=[4096], H=[16], BT=[64], dtype=["fp32"])),
          out_dims={"Ai": ("b", "t", "h", "j")}),
    _spec("fla_chunk_gated_delta_rule_fwd", ("fla.ops.common.chunk_delta_h:"
                                             "chunk_gated_delta_rule_fwd_kernel_h_blockdim64",
                                             "fla.ops.common.chunk_o:chunk_fwd_kernel_o"),
          launch=_gdn_launch, reference=_gdn_ref, make_inputs=_gdn_inputs, tolerance=RATIO_TOL,
          cases=by_level(product(B=[1], T=[128], H=[2], K=[64], V=[64], dtype=["fp32", "bf16"]),
                         product(B=[2], T=[1024], H=[4], K=[128], V=[128], dtype=["bf16"])),
          known_divergences=(known.INTERPRETER_BF16,), out_dims={"o": ("b", "t", "h", "v")}),
    _spec("fla_chunk_gated_delta_rule_bwd", ("fla.ops.common.chunk_delta_h:"
                                             "chunk_gated_delta_rule_bwd_kernel_dhu_blockdim64",
                                             "fla.ops.common.chunk_o:chunk_bwd_kernel_dqkwg",
                                             "fla.ops.common.chunk_o:chunk_bwd_kernel_dv_local",
                                             "fla.ops.gated_delta_rule.wy_fast:prepare_wy_repr_bwd_kernel"),
          launch=_bwd_launch, reference=_bwd_ref, make_inputs=_bwd_inputs, tolerance=BWD_TOL,
          cases=by_level(product(B=[1], T=[128], H=[1], K=[64], V=[64], dtype=["fp32"]),
                         product(B=[2], T=[1024], H=[4], K=[128], V=[128], dtype=["bf16"])),
          known_divergences=(known.INTERPRETER_BF16,), declines=(HOPPER_TRITON_640,),
          out_dims={f"d{n}": ("b", "t", "h", "k") for n in ("q", "k")}),
    # fla's chunk_delta_rule asserts 16-bit inputs ("does not support float32"): fp16 where the gated bwd has fp32
    _spec("fla_chunk_delta_rule_bwd", ("fla.ops.common.chunk_delta_h:chunk_gated_delta_rule_bwd_kernel_dhu_blockdim64",
                                       "fla.ops.common.chunk_o:chunk_bwd_kernel_dqkwg",
                                       "fla.ops.common.chunk_o:chunk_bwd_kernel_dv_local",
                                       "fla.ops.delta_rule.wy_fast:prepare_wy_repr_bwd_kernel"),
          launch=_delta_launch, reference=_delta_ref, make_inputs=_delta_inputs, tolerance=BWD_TOL,
          cases=by_level(product(B=[1], T=[128], H=[1], K=[64], V=[64], dtype=["fp16"]),
                         product(B=[2], T=[1024], H=[4], K=[128], V=[128], dtype=["bf16"])),
          known_divergences=(known.INTERPRETER_BF16,),
          out_dims={f"d{n}": ("b", "t", "h", "k") for n in ("q", "k")},
          # a verdict for fla's backward kernels on Hopper, not a speed figure: its 102 autotune configs,
          # each timed by fla, took 20 s of the H200's perf pass even with their compiles warmed
          timed=False),
]
