"""A small serving loop over LightLLM's Triton kernels (ModelTC/lightllm at fc72ffab), launched the way its engine
launches them: requests of different lengths in one batch, a paged KV cache addressed through a request-to-token
table, a fused qkv projection rotated in place through head slices, the KV of each new token scattered into the
cache, decode attention in two kernels, RMSNorm, SiLU-and-mul and the MoE router's softmax-top-k. Local harness
for a recording (parity issue 41); the kernels are LightLLM's, this loop is not LightLLM code."""
import os
import sys

import torch
from lightllm.common.basemodel.triton_kernel.destindex_copy_kv import destindex_copy_kv
from lightllm.common.fused_moe.softmax_topk import softmax_topk
from lightllm.models.llama.triton_kernel.rmsnorm import rmsnorm_forward
from lightllm.models.llama.triton_kernel.rotary_emb import rotary_emb_fwd
from lightllm.models.llama.triton_kernel.silu_and_mul import silu_and_mul_fwd
from lightllm.models.llama.triton_kernel.token_attention_nopad_att1 import token_att_fwd
from lightllm.models.llama.triton_kernel.token_attention_softmax_and_reducev import token_softmax_reducev_fwd

DEV = os.environ.get("LL_DEVICE", "cuda")
STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 6
HQ, HKV, D, HIDDEN, FFN, EXPERTS, TOPK = 8, 2, 64, 512, 1024, 16, 2
SLOTS, MAX_LEN = 1024, 512
dtype = torch.float16
g = torch.Generator(device="cpu").manual_seed(0)


def rand(*shape: int, scale: float = 1.0) -> torch.Tensor:
    return (torch.randn(*shape, generator=g) * scale).to(dtype).to(DEV)


w_qkv, w_o = rand(HIDDEN, (HQ + 2 * HKV) * D, scale=0.05), rand(HQ * D, HIDDEN, scale=0.05)
w_up, w_down, w_gate = rand(HIDDEN, 2 * FFN, scale=0.05), rand(FFN, HIDDEN, scale=0.05), rand(HIDDEN, EXPERTS)
norm_w = rand(HIDDEN, scale=0.1) + 1
k_cache = torch.zeros((SLOTS, HKV, D), dtype=dtype, device=DEV)
v_cache = torch.zeros((SLOTS, HKV, D), dtype=dtype, device=DEV)
req_to_tokens = torch.zeros((8, MAX_LEN), dtype=torch.int32, device=DEV)
free = torch.randperm(SLOTS, generator=g).to(torch.int32)
lens = [37, 5, 120]  # three live requests (rows 4, 1, 6 of the table) with their prompts already cached
reqs = torch.tensor([4, 1, 6], dtype=torch.int32, device=DEV)
used = 0
for r, n in zip(reqs.tolist(), lens, strict=True):
    req_to_tokens[r, :n] = free[used:used + n].to(DEV)
    k_cache[free[used:used + n].long()] = rand(n, HKV, D)
    v_cache[free[used:used + n].long()] = rand(n, HKV, D)
    used += n
x = rand(len(lens), HIDDEN)
for _ in range(STEPS):
    B = len(lens)
    h = rmsnorm_forward(x, norm_w, 1e-6)
    qkv = h @ w_qkv
    qkv = qkv.view(B, HQ + 2 * HKV, D)
    pos = torch.tensor(lens, device=DEV)
    freqs = pos[:, None].float() / (10000 ** (torch.arange(0, D, 2, device=DEV).float() / D))
    cos, sin = freqs.cos().to(dtype), freqs.sin().to(dtype)
    q, k, v = qkv[:, :HQ], qkv[:, HQ:HQ + HKV], qkv[:, HQ + HKV:]
    rotary_emb_fwd(q, k, cos, sin)  # in place, through strided head slices of the fused qkv
    dest = free[used:used + B].to(DEV)
    used += B
    for i, r in enumerate(reqs.tolist()):
        req_to_tokens[r, lens[i]] = dest[i]
        lens[i] += 1
    destindex_copy_kv(k, dest, k_cache)
    destindex_copy_kv(v.contiguous(), dest, v_cache)
    b_seq_len = torch.tensor(lens, dtype=torch.int32, device=DEV)
    b_start_loc = torch.cumsum(b_seq_len, 0, dtype=torch.int32) - b_seq_len
    att = torch.full((HQ, int(b_seq_len.sum())), float("nan"), dtype=torch.float32, device=DEV)
    token_att_fwd(q.contiguous(), k_cache, att, req_to_tokens, reqs, b_start_loc, b_seq_len, max(lens))
    o = torch.full((B, HQ, D), float("nan"), dtype=dtype, device=DEV)
    token_softmax_reducev_fwd(att, v_cache, o, req_to_tokens, reqs, b_start_loc, b_seq_len)
    x = x + o.view(B, HQ * D) @ w_o
    h = rmsnorm_forward(x, norm_w, 1e-6)
    weights, ids = softmax_topk((h @ w_gate).float(), TOPK, renorm=True)
    up = h @ w_up
    act = torch.full((B, FFN + 64), float("nan"), dtype=dtype, device=DEV)[:, :FFN]  # a strided column slice
    silu_and_mul_fwd(up, act)
    x = x + (act @ w_down) * weights.sum(-1, keepdim=True).to(dtype)
if DEV == "cuda":
    torch.cuda.synchronize()
print("decode steps", STEPS, "lens", lens, "finite", bool(torch.isfinite(x).all()))
