"""mojo_opset's Atlas A2 attention kernels: paged decode, paged prefill (flash attention), sdpa, sliding window.

Each op is called through its `*_impl` entry function as mojo's ttx operator calls it (TTXPagedDecodeGQA,
TTXPagedPrefillGQA, TTXSdpa, TTXSWA in `backends/ttx/operators/attention.py`), with the operator's default
arguments: no auxiliary mask, `softmax_scale`/`scale` None, grouped heads as AABB (query head h reads KV
head h // (Hq / Hkv)). References are ours, in fp64, from one masked-softmax function; each op's torch
golden (MojoPagedDecodeGQA, MojoPagedPrefillGQA, MojoSdpa, MojoSWA) is the second reference, and
torch.nn.functional.scaled_dot_product_attention with an explicit boolean mask, in fp64, the arbiter.

The sliding window follows mojo's definition (its golden's `_generate_window_mask`): query at absolute
position i sees key j when j <= i and (i - j <= local_window_size or j < global_window_size); the docstrings
only say "window length", so a window of W admits W + 1 keys, the query's own included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from libraries._mojo import golden, op, spec
from libraries.adapters import MOJO_OPSET
from parity import Tolerance, randn
from parity.cases import by_level, product
from parity.run.second_reference import SecondReference

Params = Mapping[str, Any]
F = torch.nn.functional
ATTN_TOL = {"fp32": Tolerance(rtol=2e-3, atol=2e-3, reason="fp32 q·k and p·v through tl.dot, which takes tf32 "
                              "(10-bit mantissa) on NVIDIA and hf32 on Ascend unless the kernel asks for ieee"),
            "bf16": Tolerance(rtol=1.6e-2, atol=1e-2, reason="bf16 inputs, probabilities and output")}
ARBITER = "torch.nn.functional.scaled_dot_product_attention with an explicit mask, in fp64"


# --- the math: one masked softmax for every op -------------------------------------------------------------

def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, visible: torch.Tensor, scale: float) -> torch.Tensor:
    """q [Hq, Tq, D], k/v [Hkv, Tk, D], visible [Tq, Tk] -> [Hq, Tq, D]; head h reads KV head h // (Hq/Hkv).

    One KV head's query group at a time: the scores of all heads at T=4096 would take GBs in fp64."""
    group = q.shape[0] // k.shape[0]
    out = torch.empty_like(q)
    for h in range(k.shape[0]):
        rows = slice(h * group, (h + 1) * group)
        scores = torch.einsum("gqd,kd->gqk", q[rows], k[h]) * scale
        out[rows] = torch.einsum("gqk,kd->gqd", scores.masked_fill(~visible, float("-inf")).softmax(-1), v[h])
    return out


def _sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, visible: torch.Tensor, scale: float) -> torch.Tensor:
    """The arbiter's form of `_attend`: torch's own SDPA, one KV head (and its query group) at a time."""
    group = q.shape[0] // k.shape[0]
    return torch.cat([F.scaled_dot_product_attention(q[h * group:(h + 1) * group], k[h:h + 1], v[h:h + 1],
                                                     attn_mask=visible, scale=scale)
                      for h in range(k.shape[0])])


def _window(q_len: int, kv_len: int, p: Params) -> torch.Tensor:
    """[q_len, kv_len]: causal (the queries are the last q_len of kv_len tokens), then mojo's window."""
    i = torch.arange(kv_len - q_len, kv_len)[:, None]
    j = torch.arange(kv_len)[None, :]
    seen = j <= i
    local, sink = p.get("local"), p.get("sink")
    if local is None and sink is None:
        return seen
    near = (i - j <= local) if local is not None else torch.zeros_like(seen)
    return seen & (near | ((j < sink) if sink is not None else torch.zeros_like(seen)))


# --- paged KV caches (decode and prefill) -------------------------------------------------------------------

def _paged(kv_lens: list[int], p: Params, gen: torch.Generator) -> dict[str, Any]:
    """Blocks [N, Hkv, page, D] handed out in a shuffled order, two spare blocks nobody owns."""
    page, hkv, d, dt = p["page"], p["Hkv"], p["D"], p["dtype"]
    per_seq = [-(-n // page) for n in kv_lens]
    n_blocks = sum(per_seq) + 2
    order = torch.randperm(n_blocks, generator=gen)
    tables = torch.zeros(len(kv_lens), max(per_seq), dtype=torch.int32)
    used = 0
    for i, count in enumerate(per_seq):
        tables[i, :count] = order[used:used + count].to(torch.int32)
        used += count
    return {"k_cache": randn((n_blocks, hkv, page, d), dt, gen), "v_cache": randn((n_blocks, hkv, page, d), dt, gen),
            "block_tables": tables}


def _gather(inputs: Params, p: Params, seq: int, kv_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sequence `seq`'s first kv_len keys and values out of the paged cache, [Hkv, kv_len, D] each."""
    blocks = inputs["block_tables"][seq, : -(-kv_len // p["page"])].long()

    def flat(cache: torch.Tensor) -> torch.Tensor:
        return cache[blocks].permute(1, 0, 2, 3).reshape(p["Hkv"], -1, p["D"])[:, :kv_len]
    return flat(inputs["k_cache"]), flat(inputs["v_cache"])


def _decode_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    lens = list(p["lens"])
    return {"q": randn((len(lens), p["Hq"], p["D"]), p["dtype"], gen), **_paged(lens, p, gen),
            "seqlens": torch.tensor(lens, dtype=torch.int32)}


def _decode_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    fn = op("flash_attention", "paged_attention_decode_impl")
    return {"o": fn(inputs["q"], inputs["k_cache"], inputs["v_cache"], inputs["seqlens"], inputs["block_tables"],
                    False)}


def _decode_with(attend: Any) -> Any:
    def reference(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
        out = torch.zeros_like(inputs["q"])
        for i, n in enumerate(int(x) for x in inputs["seqlens"]):
            k, v = _gather(inputs, p, i, n)
            out[i] = attend(inputs["q"][i][:, None], k, v, torch.ones(1, n, dtype=torch.bool), p["D"] ** -0.5)[:, 0]
        return {"o": out}
    return reference


def _prefill_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """Queries [sum q, Hq, D] of sequences that each continue `prefix` cached tokens."""
    qlens, prefix = list(p["qlens"]), list(p["prefix"])
    kv = [q + c for q, c in zip(qlens, prefix, strict=True)]
    offsets = torch.tensor([0, *qlens], dtype=torch.int32).cumsum(0).to(torch.int32)
    return {"q": randn((sum(qlens), p["Hq"], p["D"]), p["dtype"], gen), **_paged(kv, p, gen), "cu_q_lens": offsets,
            "seqlens_kv": torch.tensor(kv, dtype=torch.int32)}


def _prefill_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    fn = op("flash_attention", "paged_attention_prefill_impl")
    return {"o": fn(inputs["q"], inputs["k_cache"], inputs["v_cache"], inputs["cu_q_lens"], inputs["seqlens_kv"],
                    inputs["block_tables"], False)}


def _prefill_with(attend: Any) -> Any:
    def reference(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
        out = torch.zeros_like(inputs["q"])
        cu = [int(x) for x in inputs["cu_q_lens"]]
        for i, kv_len in enumerate(int(x) for x in inputs["seqlens_kv"]):
            k, v = _gather(inputs, p, i, kv_len)
            q = inputs["q"][cu[i]:cu[i + 1]].transpose(0, 1)
            out[cu[i]:cu[i + 1]] = attend(q, k, v, _window(q.shape[1], kv_len, {}), p["D"] ** -0.5).transpose(0, 1)
        return {"o": out}
    return reference


def _golden_prefill(i: Params, p: Params) -> dict[str, torch.Tensor]:
    cu_kv = torch.cat([torch.zeros(1, dtype=torch.int32), i["seqlens_kv"].cumsum(0).to(torch.int32)])
    g = golden("attention:MojoPagedPrefillGQA", is_causal=True, gqa_layout="AABB")
    return {"o": g(i["q"], i["k_cache"], i["v_cache"], i["cu_q_lens"], i["block_tables"], cu_total_seq_lens=cu_kv)}


# --- sdpa: dense [B, H, S, D], a boolean mask or none -------------------------------------------------------

def _sdpa_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    b, s, d, dt = p["B"], p["S"], p["D"], p["dtype"]
    mask = torch.ones(s, s, dtype=torch.bool).tril() if p["mask"] == "causal" else None
    return {"q": randn((b, p["Hq"], s, d), dt, gen), "k": randn((b, p["Hkv"], s, d), dt, gen),
            "v": randn((b, p["Hkv"], s, d), dt, gen), **({"mask": mask} if mask is not None else {})}


def _scale(p: Params) -> float | None:
    """The caller's scale: None as MojoSdpa's default passes it, or 1/sqrt(D) spelled out."""
    return None if p["scale"] == "default" else p["D"] ** -0.5


def _sdpa_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    fn = op("sdpa", "sdpa_infer_impl")
    return {"o": fn(inputs["q"], inputs["k"], inputs["v"], mask=inputs.get("mask"), scale=_scale(p),
                    enable_gqa=p["Hq"] != p["Hkv"])}


def _sdpa_with(attend: Any) -> Any:
    """SDPA's contract (torch's, and MojoSdpa's docstring): scale None means 1/sqrt(D); mask True attends."""
    def reference(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
        mask = inputs.get("mask")
        visible = mask if mask is not None else torch.ones(p["S"], p["S"], dtype=torch.bool)
        return {"o": torch.stack([attend(inputs["q"][b], inputs["k"][b], inputs["v"][b], visible, p["D"] ** -0.5)
                                  for b in range(p["B"])])}
    return reference


def _golden_sdpa(i: Params, p: Params) -> dict[str, torch.Tensor]:
    g = golden("attention:MojoSdpa", scale=_scale(p), enable_gqa=p["Hq"] != p["Hkv"])
    return {"o": g(i["q"], i["k"], i["v"], attn_mask=i.get("mask"))}


# --- sliding-window attention: varlen [T, H, D], queries the last q of each sequence's kv tokens -------------

def _swa_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    qlens, kv = list(p["qlens"]), [q + c for q, c in zip(p["qlens"], p["prefix"], strict=True)]
    cu_q = torch.tensor([0, *qlens]).cumsum(0).to(torch.int32)
    cu_kv = torch.tensor([0, *kv]).cumsum(0).to(torch.int32)
    hkv, d, dt = p["Hkv"], p["D"], p["dtype"]
    return {"q": randn((sum(qlens), p["Hq"], d), dt, gen), "k": randn((sum(kv), hkv, d), dt, gen),
            "v": randn((sum(kv), hkv, d), dt, gen), "cu_q_lens": cu_q, "cu_total_seq_lens": cu_kv}


def _swa_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    fn = op("swa", "swa_infer_impl")
    return {"o": fn(inputs["q"], inputs["k"], inputs["v"], inputs["cu_q_lens"], inputs["cu_total_seq_lens"], True,
                    p["local"], p["sink"], None, False)}


def _swa_with(attend: Any) -> Any:
    def reference(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
        out = torch.zeros_like(inputs["q"])
        cq, ck = [int(x) for x in inputs["cu_q_lens"]], [int(x) for x in inputs["cu_total_seq_lens"]]
        for i in range(len(cq) - 1):
            q = inputs["q"][cq[i]:cq[i + 1]].transpose(0, 1)
            k, v = (inputs[n][ck[i]:ck[i + 1]].transpose(0, 1) for n in ("k", "v"))
            visible = _window(q.shape[1], k.shape[1], p)
            out[cq[i]:cq[i + 1]] = attend(q, k, v, visible, p["D"] ** -0.5).transpose(0, 1)
        return {"o": out}
    return reference


def _golden_swa(i: Params, p: Params) -> dict[str, torch.Tensor]:
    g = golden("attention:MojoSWA", is_causal=True, gqa_layout="AABB", global_window_size=p["sink"],
               local_window_size=p["local"])
    return {"o": g(i["q"], i["k"], i["v"], i["cu_q_lens"], i["cu_total_seq_lens"])}


# --- the kernels themselves, launched as their entry functions launch them ----------------------------------
# The entry functions stop before any launch off an NPU (a mask made on device "npu", torch.npu, the
# device's core count), so these two specs launch the Triton kernel with the entry function's arguments
# and three changes that only touch the host side: the auxiliary mask is built on the inputs' device, the
# program count is fixed, and the triton-ascend-only launch options (enable_ubuf_saving,
# set_workspace_multibuffer, limit_auto_multi_buffer_only_for_local_buffer) are left out.
CUBE_CORES = 20  # get_num_cores("cube") on an Ascend910B3; both kernels loop over their tasks, any count works
SWA_MASK = 256  # swa.py's AUX_MASK_SIZE


def _swa_aux_mask(device: torch.device) -> torch.Tensor:
    """swa.py's auxiliary mask as its kernel documents it: [[empty, triu, full, tril, empty],
    [full, empty, empty, full, empty]] in blocks of SWA_MASK x SWA_MASK, bool."""
    full = torch.ones(SWA_MASK, SWA_MASK, dtype=torch.bool, device=device)
    empty = torch.zeros_like(full)
    return torch.cat([torch.cat([empty, full.triu(), full, full.tril(), empty], 1),
                      torch.cat([full, empty, empty, full, empty], 1)], 0)


def _swa_kernel_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    o, mask = torch.zeros_like(q), _swa_aux_mask(q.device)
    block = 64 if q.dtype == torch.float32 else 128  # swa_infer_impl's choice
    op("swa", "_sdpa_infer_kernel")[(CUBE_CORES,)](
        o, q, k, v, len(inputs["cu_q_lens"]) - 1, inputs["cu_q_lens"], inputs["cu_total_seq_lens"], p["D"] ** -0.5,
        *o.stride(), *q.stride(), *k.stride(), *v.stride(), mask, SWA_MASK, *mask.stride(), True, p["sink"],
        p["local"], p["Hq"], p["Hkv"], False, p["D"], block, block, p["D"])
    return {"o": o}


def _prefill_kernel_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    q, kc, vc = inputs["q"], inputs["k_cache"], inputs["v_cache"]
    o = torch.empty_like(q)
    aux = torch.ones(1024, 3 * 1024, dtype=torch.bool, device=q.device).tril(1024)  # the entry's default mask
    tables = inputs["block_tables"].to(torch.int32)
    op("flash_attention", "paged_prefill_kernel")[(CUBE_CORES,)](
        q, kc, vc, o, aux, len(inputs["cu_q_lens"]) - 1, inputs["cu_q_lens"], inputs["seqlens_kv"], tables,
        *q.stride(), *kc.stride(), *vc.stride(), *o.stride(), *tables.stride(), *aux.stride(), p["D"] ** -0.5,
        aux.shape[0], p["page"], p["Hq"], p["Hkv"], False, p["D"], BLOCK_SIZE_M=128,
        BLOCK_SIZE_N=min(128, 1 << (p["page"] - 1).bit_length()), BLOCK_SIZE_D=p["D"])
    return {"o": o}


def _second(ours: Any, arbiter: Any, gold: Any, name: str) -> SecondReference:
    return SecondReference(ours, gold, f"mojo's torch golden ({name})", arbiter, ARBITER)


SECOND = {
    "decode": _second(_decode_with(_attend), _decode_with(_sdpa), lambda i, p: {"o": golden(
        "attention:MojoPagedDecodeGQA", gqa_layout="AABB")(i["q"], i["k_cache"], i["v_cache"], i["seqlens"],
                                                           i["block_tables"])}, "MojoPagedDecodeGQA"),
    "prefill": _second(_prefill_with(_attend), _prefill_with(_sdpa), _golden_prefill, "MojoPagedPrefillGQA"),
    "sdpa": _second(_sdpa_with(_attend), _sdpa_with(_sdpa), _golden_sdpa, "MojoSdpa"),
    "swa": _second(_swa_with(_attend), _swa_with(_sdpa), _golden_swa, "MojoSWA"),
}
GQA = {"Hq": [8], "Hkv": [2], "D": [128]}
GQA_FULL = {"Hq": [32], "Hkv": [8], "D": [128]}
PREFILL_CASES = by_level(product(qlens=[(128,), (300,)], prefix=[(0,)], page=[128], dtype=["fp32"], **GQA)
                         + product(qlens=[(200, 64)], prefix=[(256, 0)], page=[128], dtype=["fp32"], **GQA),
                         product(qlens=[(4096,)], prefix=[(0,)], page=[128], dtype=["bf16"], **GQA_FULL)
                         + product(qlens=[(1000, 3000, 17)], prefix=[(4096, 0, 2000)], page=[128], dtype=["bf16"],
                                   **GQA_FULL))
SWA_CASES = by_level(product(qlens=[(384,)], prefix=[(0,)], local=[128], sink=[None], dtype=["fp32"], **GQA)
                     + product(qlens=[(100, 200)], prefix=[(200, 0)], local=[64], sink=[16], dtype=["fp32"], **GQA),
                     product(qlens=[(4096,)], prefix=[(0,)], local=[1024], sink=[None, 128], dtype=["bf16"],
                             **GQA_FULL))

LIBRARY = MOJO_OPSET  # identity, tracker and tier needs: libraries/adapters.py

SPECS = [
    spec("paged_attention_decode", "flash_attention", ("paged_decode_kernel",), SECOND["decode"],
         launch=_decode_launch, make_inputs=_decode_inputs,
         tolerance={"fp32": Tolerance(rtol=1e-4, atol=1e-5, reason="softmax over up to 4096 keys from fp32 dots "
                                      "(tf32/hf32 where the backend picks it)"), "bf16": ATTN_TOL["bf16"]},
         cases=by_level(product(lens=[(100, 300)], page=[128], dtype=["fp32"], **GQA),
                        product(lens=[(1, 37, 512, 1000, 2048, 4095, 4096, 3000)], page=[128], dtype=["bf16"],
                                **GQA_FULL))),
    spec("paged_attention_prefill", "flash_attention", ("paged_prefill_kernel",), SECOND["prefill"],
         launch=_prefill_launch, make_inputs=_prefill_inputs, tolerance=ATTN_TOL, cases=PREFILL_CASES),
    spec("paged_prefill_kernel", "flash_attention", ("paged_prefill_kernel",), SECOND["prefill"],
         launch=_prefill_kernel_launch, make_inputs=_prefill_inputs, tolerance=ATTN_TOL, cases=PREFILL_CASES,
         doc="paged_prefill_kernel launched as paged_attention_prefill_impl launches it, host side made portable"),
    spec("sdpa_infer", "sdpa", ("_sdpa_infer_kernel",), SECOND["sdpa"], launch=_sdpa_launch,
         make_inputs=_sdpa_inputs, tolerance=ATTN_TOL,
         cases=by_level(product(B=[1], S=[256], mask=["causal", "none"], scale=["default"], dtype=["fp32"], **GQA)
                        + product(B=[1], S=[384], mask=["causal"], scale=["explicit"], dtype=["fp32"], **GQA),
                        product(B=[1], S=[4096], mask=["causal"], scale=["default", "explicit"], dtype=["bf16"],
                                **GQA_FULL))),
    spec("swa_infer", "swa", ("_sdpa_infer_kernel",), SECOND["swa"], launch=_swa_launch, make_inputs=_swa_inputs,
         tolerance=ATTN_TOL, cases=SWA_CASES),
    spec("swa_infer_kernel", "swa", ("_sdpa_infer_kernel",), SECOND["swa"], launch=_swa_kernel_launch,
         make_inputs=_swa_inputs, tolerance=ATTN_TOL, cases=SWA_CASES,
         doc="swa's _sdpa_infer_kernel launched as swa_infer_impl launches it, host side made portable"),
]
