"""In-kernel helpers shared by the GDN chunk kernels."""

import triton
import triton.language as tl


@triton.jit
def chunk_bounds(i_b, i_t, T, cu_seqlens, chunk_indices, IS_VARLEN: tl.constexpr):
    """(chunk index within its sequence, first token of the sequence, sequence length).

    Varlen launches enumerate chunks across sequences: chunk_indices maps the flat index
    to (sequence, chunk), so empty sequences contribute no program at all.
    """
    if IS_VARLEN:
        i_n, i_t = tl.load(chunk_indices + i_t * 2).to(tl.int32), tl.load(chunk_indices + i_t * 2 + 1).to(tl.int32)
        bos, eos = tl.load(cu_seqlens + i_n).to(tl.int32), tl.load(cu_seqlens + i_n + 1).to(tl.int32)
        T = eos - bos
    else:
        bos = i_b * T
    return i_t, bos, T
