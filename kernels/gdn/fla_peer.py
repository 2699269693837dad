"""fla's implementation of each GDN op, as the perf pass's peer: the library these kernels come from.

Each `prepare` maps the spec's device inputs onto fla's public call (fla-core 0.6.0, `[B, T, H, K]`)
and returns the thunk to time; conversions happen before, outside the timed region. fla's kkt
takes its gate in log2 units, which changes the values but not the work, so the timing compares.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from libraries._load import Library
from parity import Peer
from parity.spec import DTYPES

FLA = Library("fla", "fla-core==0.6.0 einops")
Params = Mapping[str, Any]
Thunk = Callable[[], Any]


def _cu(inputs: Params) -> torch.Tensor | None:
    cu = inputs.get("cu_seqlens")
    return cu.long() if cu is not None else None  # fla types cu_seqlens as a LongTensor


def _cumsum(inputs: Params, p: Params) -> Thunk:
    op, cu = FLA.op("fla.ops.utils.cumsum:chunk_local_cumsum"), _cu(inputs)
    scale = 1.0 / 0.6931471805599453 if p.get("scale") else None
    return lambda: op(inputs["g"], chunk_size=p["BT"], scale=scale, cu_seqlens=cu)


def _kkt(inputs: Params, p: Params) -> Thunk:
    op, cu = FLA.op("fla.ops.common.chunk_scaled_dot_kkt:chunk_scaled_dot_kkt_fwd"), _cu(inputs)
    return lambda: op(inputs["k"], g=inputs.get("g_cumsum"), beta=inputs["beta"], cu_seqlens=cu, chunk_size=p["BT"])


def _solve_tril(inputs: Params, p: Params) -> Thunk:
    op, cu = FLA.op("fla.ops.utils.solve_tril:solve_tril"), _cu(inputs)
    return lambda: op(inputs["A"], cu_seqlens=cu, output_dtype=DTYPES[p["dtype"]])


def _kkt_solve(inputs: Params, p: Params) -> Thunk:
    """fla's fused kkt + solve_tril kernel, launched as its op launches it at BT = 64 (fla-core 0.6.0,
    fla/ops/gated_delta_rule/chunk_fwd.py: chunk_gated_delta_rule_fwd_intra, step 1); fla has no public
    op for this step alone, and its A buffer is allocated outside the timed region here."""
    kernel = FLA.op("fla.ops.gated_delta_rule.chunk_fwd:chunk_gated_delta_rule_fwd_kkt_solve_kernel")
    cu, k, BT = _cu(inputs), inputs["k"], p["BT"]
    B, T, H, K = k.shape
    chunk_indices = FLA.op("fla.ops.utils.index:prepare_chunk_indices")(cu, BT) if cu is not None else None
    NT = -(-T // BT) if cu is None else len(chunk_indices)
    A = torch.zeros(B, T, H, BT, device=k.device, dtype=k.dtype)
    return lambda: kernel[(NT, B * H)](k=k, g=inputs.get("g_cumsum"), beta=inputs["beta"], A=A, cu_seqlens=cu,
                                       chunk_indices=chunk_indices, T=T, H=H, HV=H, K=K, BT=BT, BC=16)


def _wy(inputs: Params, p: Params) -> Thunk:
    op, cu = FLA.op("fla.ops.gated_delta_rule.wy_fast:recompute_w_u_fwd"), _cu(inputs)
    return lambda: op(inputs["k"], inputs["v"], inputs["beta"], inputs["Ai"], g=inputs.get("g_cumsum"), cu_seqlens=cu)


def _chunk_h(inputs: Params, p: Params) -> Thunk:
    op, cu = FLA.op("fla.ops.common.chunk_delta_h:chunk_gated_delta_rule_fwd_h"), _cu(inputs)
    return lambda: op(inputs["k"], inputs["w"], inputs["u"], g=inputs.get("g_cumsum"), initial_state=inputs.get("h0"),
                      output_final_state=bool(p.get("final_state")), chunk_size=p["BT"], cu_seqlens=cu)


def _chunk_o(inputs: Params, p: Params) -> Thunk:
    op, cu = FLA.op("fla.ops.common.chunk_o:chunk_fwd_o"), _cu(inputs)
    return lambda: op(inputs["q"], inputs["k"], inputs["v_new"], inputs["h"], g=inputs.get("g_cumsum"),
                      scale=p["K"] ** -0.5, cu_seqlens=cu, chunk_size=p["BT"])


def _chunk(inputs: Params, p: Params) -> Thunk:
    op, cu = FLA.op("fla.ops.gated_delta_rule.chunk:chunk_gated_delta_rule_fwd"), _cu(inputs)
    return lambda: op(inputs["q"], inputs["k"], inputs["v"], inputs.get("g"), inputs["beta"], p["K"] ** -0.5,
                      inputs.get("h0"), True, cu_seqlens=cu, chunk_size=p["BT"])


def _preload() -> None:
    FLA.op("fla.ops.gated_delta_rule.chunk:chunk_gated_delta_rule_fwd")  # imports the ops every peer here uses


def peer(prepare: Callable[[Params, Params], Thunk]) -> Peer:
    return Peer(library="fla", prepare=prepare, unavailable=FLA.unavailable, preload=_preload)


CUMSUM, KKT, KKT_SOLVE, SOLVE_TRIL, WY, CHUNK_H, CHUNK_O, CHUNK = (
    peer(f) for f in (_cumsum, _kkt, _kkt_solve, _solve_tril, _wy, _chunk_h, _chunk_o, _chunk))
