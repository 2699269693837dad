"""chunk_local_cumsum: the inclusive cumsum of the gates g [B, T, H] inside each chunk.

One program per (chunk, batch · head block); a [BT, BH] tile covers several heads so
that loads are contiguous along H. An optional scale (newer fla passes 1/ln 2 to use
exp2 later) multiplies the result. Output is fp32 whatever the input dtype.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from kernels import gdn
from kernels.gdn import fla_peer
from kernels.gdn.common import chunk_bounds
from parity import KernelSpec, Tolerance, nan_empty
from parity.cases import by_level, product
from parity.spec import DTYPES
from reference import gdn as ref


@triton.heuristics({
    "HAS_SCALE": lambda args: args["scale"] is not None,
    "IS_VARLEN": lambda args: args["cu_seqlens"] is not None,
})
@triton.jit(do_not_specialize=["T"])
def chunk_local_cumsum_kernel(g, o, scale, cu_seqlens, chunk_indices, T, H: tl.constexpr, BT: tl.constexpr,
                              BH: tl.constexpr, HAS_SCALE: tl.constexpr, IS_VARLEN: tl.constexpr):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    NH = tl.cdiv(H, BH)
    i_b, i_hb = i_bh // NH, i_bh % NH
    i_t, bos, T = chunk_bounds(i_b, i_t, T, cu_seqlens, chunk_indices, IS_VARLEN)
    p_g = tl.make_block_ptr(g + bos * H, (T, H), (H, 1), (i_t * BT, i_hb * BH), (BT, BH), (1, 0))
    p_o = tl.make_block_ptr(o + bos * H, (T, H), (H, 1), (i_t * BT, i_hb * BH), (BT, BH), (1, 0))
    # upcast before the scan: bf16 sums would lose the small gates
    b_g = tl.load(p_g, boundary_check=(0, 1)).to(tl.float32)  # [BT, BH]
    b_o = tl.cumsum(b_g, axis=0)
    if HAS_SCALE:
        b_o = b_o * scale
    tl.store(p_o, b_o.to(p_o.dtype.element_ty), boundary_check=(0, 1))


def chunk_local_cumsum(g: torch.Tensor, chunk_size: int, scale: float | None = None,
                       cu_seqlens: torch.Tensor | None = None,
                       chunk_indices: torch.Tensor | None = None) -> torch.Tensor:
    """Chunk-local inclusive cumsum of g [B, T, H]; returns fp32 [B, T, H]."""
    B, T, H = g.shape
    if cu_seqlens is not None and chunk_indices is None:
        chunk_indices = gdn.prepare_chunk_indices(cu_seqlens, chunk_size)
    NT = triton.cdiv(T, chunk_size) if cu_seqlens is None else len(chunk_indices)
    BH = min(triton.next_power_of_2(H), 64)
    o = nan_empty((B, T, H), torch.float32, g.device)
    grid = (NT, B * triton.cdiv(H, BH))
    chunk_local_cumsum_kernel[grid](g=g, o=o, scale=scale, cu_seqlens=cu_seqlens, chunk_indices=chunk_indices,
                                    T=T, H=H, BT=chunk_size, BH=BH)
    return o


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    B, T, cu = gdn.shape_of(p)
    # gates arrive in the model dtype; logsigmoid of randn is what GDN layers feed in
    out: dict[str, Any] = {"g": torch.nn.functional.logsigmoid(torch.randn(B, T, p["H"], generator=gen))
                           .to(DTYPES[p["dtype"]])}
    if cu is not None:
        out["cu_seqlens"] = cu
    return out


def _scale(p: Mapping[str, Any]) -> float | None:
    return 1.0 / 0.6931471805599453 if p["scale"] else None  # 1/ln 2, as newer fla passes


def _launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"g_cumsum": chunk_local_cumsum(inputs["g"], p["BT"], _scale(p), gdn.cu_of(inputs))}


def _reference(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"g_cumsum": ref.chunk_local_cumsum(inputs["g"], p["BT"], _scale(p), gdn.cu_of(inputs))}


CASE_DTYPES = ["bf16", "fp16", "fp32"]
_QUICK = (product(B=[2], T=[100], H=[3], BT=[16, 64], scale=[False, True], dtype=["fp32"])
          + product(B=[1], T=[50], H=[3], BT=[32], scale=[False], dtype=["bf16", "fp16"])
          + gdn.varlen_cases({"H": 3, "BT": 16, "scale": True, "dtype": "fp32"}, [(0, 64, 36)]))
_FULL = (product(B=[2], T=[1, 63, 300, 1000], H=[1, 70], BT=[16, 32, 64], scale=[False, True],
                 dtype=CASE_DTYPES)
         + gdn.varlen_product([(0, 64, 36), (37, 0, 100, 27, 0), (1,)], H=[4], BT=[16, 32, 64],
                              scale=[False, True], dtype=CASE_DTYPES))

SPECS = [
    KernelSpec(
        name="gdn_chunk_local_cumsum",
        family="gdn",
        kernel=chunk_local_cumsum_kernel,
        launch=_launch,
        reference=_reference,
        cases=by_level(_QUICK, _FULL),
        make_inputs=_inputs,
        tolerance_key=lambda p: "fp32-out",
        tolerance={"fp32-out": Tolerance(rtol=1e-5, atol=1e-5, reason=(
            "the output is fp32 for every input dtype; a 64-term fp32 scan of gates near -0.7 rounds "
            "to about 64·2^-24·|sum| (~4e-6 relative), above torch's fp32 rtol of 1.3e-6"))},
        compile_signature=gdn.compile_signature({"H": 3, "BT": 64}, {"scale": (False, True)}),
        dynamic_args=("T",),
        variants={"HAS_SCALE": (False, True), "IS_VARLEN": (False, True)},
        bytes=lambda p: gdn.shape_of(p)[0] * gdn.shape_of(p)[1] * p["H"] * (gdn.itemsize(p["dtype"]) + 4),
        out_dims={"g_cumsum": ("b", "t", "head")},
        # the gate arrives in fp32 in GDN layers (fla keeps g in fp32)
        perf_cases=gdn.perf_cases(without=("K", "V"), dtype="fp32", scale=True),
        peer=fla_peer.CUMSUM,
        perf_target=gdn.PEER_TARGET,
        baseline=lambda inputs, p: inputs["g"].float().unflatten(1, (-1, p["BT"])).cumsum(2)
        if p.get("seqlens") is None and p["T"] % p["BT"] == 0 else inputs["g"].float().cumsum(1),
    ),
]
