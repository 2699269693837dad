"""Gated DeltaNet chunk forward: one kernel per module, composed in chunk.py.

This package module holds the host-side helpers the kernels share: varlen chunk
indices, realistic inputs, the valid-region masks and the interpreter-only
autotune pruning. Layout is [B, T, H, ...]; varlen is B = 1 with int32
`cu_seqlens` of length N+1, and chunk indices are computed on the host.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from parity import (
    Case,
    PerfTarget,
    Tolerance,
    cu_seqlens,
    l2_normalized,
    logsigmoid_of_randn,
    randn,
    sigmoid_of_randn,
)
from parity.cases import product
from reference import gdn as ref

Params = Mapping[str, Any]

# each GDN kernel beside its fla-core counterpart (the full forward and kkt keep issue 19's tighter goals)
PEER_TARGET = PerfTarget(max_time_vs_peer=1.1, why="issue 30: every GDN kernel's varlen case <= 1.1x fla's time")

# fla's criterion (fla-core 0.6.0, fla/utils/testing.py assert_close): err_ratio below 0.005 for every
# per-kernel forward output
PER_KERNEL_RATIO = 0.005
RATIO_REASON = ("fla's own criterion for GDN forward kernels (fla-core 0.6.0, fla/utils/testing.py assert_close): "
                "err_ratio = rms(ref - out)/rms(ref) <= 0.005; outputs are rounded to the input dtype and "
                "dot products use bf16/fp16 (or tf32) operands, so elementwise bounds fail near zero")


def per_kernel_tolerance(dtypes: Sequence[str]) -> dict[str, Tolerance]:
    """fla's per-kernel err_ratio limit for every case dtype."""
    return {dt: Tolerance(rtol=0.0, atol=1e-6, max_err_ratio=PER_KERNEL_RATIO, reason=RATIO_REASON) for dt in dtypes}


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def autotune_configs(configs: list) -> list:
    """The autotune list, cut to its first config under the interpreter.

    The interpreter cannot time configs (the Autotuner asks for an active driver), and
    timing is meaningless there anyway. Compile tiers never interpret, so they see every config.
    """
    return configs[:1] if interpreting() else configs


# ---- varlen bookkeeping (host side) ----

_VARLEN_CACHE_SIZE = 16


def per_cu_seqlens(fn: Callable[[torch.Tensor, int], Any]) -> Callable[[torch.Tensor, int], Any]:
    """Memoise a varlen helper on the very `cu_seqlens` tensor it got (and its in-place version).

    Each helper is several small launches plus a device-to-host sync (repeat_interleave's output
    size), which cost a varlen launch more than the kernel itself on the H200 (cumsum: 0.42 ms
    against fla's 0.05). A model passes one cu_seqlens to every kernel of a layer, so fla caches
    these per tensor too (`tensor_cache` in fla/ops/utils/index.py). The entry holds the tensor,
    so its id cannot be reused while the entry lives.
    """
    entries: dict[tuple[int, int], tuple[torch.Tensor, int, Any]] = {}

    def cached(cu: torch.Tensor, chunk_size: int) -> Any:
        key = (id(cu), chunk_size)
        hit = entries.get(key)
        if hit is not None and hit[0] is cu and hit[1] == cu._version:
            return hit[2]
        value = fn(cu, chunk_size)
        if len(entries) >= _VARLEN_CACHE_SIZE:
            entries.pop(next(iter(entries)))
        entries[key] = (cu, cu._version, value)
        return value

    cached.__wrapped__ = fn  # type: ignore[attr-defined]
    cached.__doc__ = fn.__doc__
    return cached


@per_cu_seqlens
def prepare_chunk_indices(cu: torch.Tensor, chunk_size: int) -> torch.Tensor:
    """[NT, 2] int32 rows (sequence i_n, chunk i_t within it); empty sequences contribute none."""
    lens = (cu[1:] - cu[:-1]).to(torch.int64)
    per_seq = (lens + chunk_size - 1) // chunk_size
    seq_ids = torch.repeat_interleave(torch.arange(len(lens), device=cu.device), per_seq)
    starts = torch.cumsum(per_seq, 0) - per_seq
    chunk_ids = torch.arange(int(per_seq.sum()), device=cu.device) - torch.repeat_interleave(starts, per_seq)
    return torch.stack([seq_ids, chunk_ids], 1).to(torch.int32).contiguous()


@per_cu_seqlens
def prepare_chunk_offsets(cu: torch.Tensor, chunk_size: int) -> torch.Tensor:
    """[N+1] int32: index of each sequence's first chunk in the flat chunk list."""
    lens = (cu[1:] - cu[:-1]).to(torch.int64)
    per_seq = (lens + chunk_size - 1) // chunk_size
    return torch.cat([per_seq.new_zeros(1), torch.cumsum(per_seq, 0)]).to(torch.int32)


def num_chunks(B: int, T: int, chunk_size: int, cu: torch.Tensor | None) -> int:
    """Chunks of the whole batch: B·⌈T/BT⌉, or the sum over varlen sequences."""
    if cu is None:
        return B * math.ceil(T / chunk_size)
    return _varlen_chunks(cu, chunk_size)


@per_cu_seqlens
def _varlen_chunks(cu: torch.Tensor, chunk_size: int) -> int:
    return int(prepare_chunk_offsets(cu, chunk_size)[-1])


# ---- cases and inputs ----

def shape_of(p: Params) -> tuple[int, int, torch.Tensor | None]:
    """(B, T, cu_seqlens or None) of a case; varlen cases give `seqlens` and B = 1."""
    lens = p.get("seqlens")
    if lens:
        return 1, sum(lens), cu_seqlens(lens)
    return p["B"], p["T"], None


def raw_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """Realistic GDN inputs: L2-normalised q/k, sigmoid β, logsigmoid g, randn h0 (all from `gen`)."""
    B, T, cu = shape_of(p)
    H, K, V, dt = p["H"], p["K"], p["V"], p["dtype"]
    n_seq = B if cu is None else len(cu) - 1
    out: dict[str, Any] = {
        "q": l2_normalized((B, T, H, K), dt, gen),
        "k": l2_normalized((B, T, H, K), dt, gen),
        "v": randn((B, T, H, V), dt, gen),
        "beta": sigmoid_of_randn((B, T, H), dt, gen),
        "g": logsigmoid_of_randn((B, T, H), "fp32", gen),
        "h0": randn((n_seq, H, K, V), "fp32", gen),
    }
    if cu is not None:
        out["cu_seqlens"] = cu
    return out


def fp64_pipeline(raw: Mapping[str, Any], p: Params, until: str = "o") -> dict[str, torch.Tensor]:
    """The intermediates of the chunked forward in fp64, from the rounded raw inputs, up to the step `until`
    (reference.gdn.PIPELINE_STEPS): at the perf cases' T=65536 the steps after w and u took a second."""
    if raw["k"].is_meta:
        return pipeline_shapes(raw, p, until)
    d = {k: v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for k, v in raw.items()}
    g = d["g"] if p.get("use_g", True) else None
    h0 = d["h0"] if p.get("use_h0", True) else None
    return ref.chunk_gated_delta_rule(d["q"], d["k"], d["v"], g, d["beta"], p.get("scale", 1.0), h0, p["BT"],
                                      d.get("cu_seqlens"), until)


def pipeline_shapes(raw: Mapping[str, Any], p: Params, until: str = "o") -> dict[str, Any]:
    """fp64_pipeline's outputs as meta tensors of the same shapes, for inputs that have no values (`parity
    envelope` makes them on meta): the reference walks chunk by chunk in Python, which at 1M tokens took minutes
    per size to compute nothing."""
    B, T, H, K = raw["k"].shape
    V, BT, lens = raw["v"].shape[-1], p["BT"], p.get("seqlens")
    nt = sum(-(-n // BT) for n in lens) if lens else -(-T // BT)

    def empty(*shape: int) -> torch.Tensor:
        return torch.empty(shape, dtype=torch.float64, device="meta")

    stop = ref.PIPELINE_STEPS.index(until)
    out: dict[str, Any] = {"g_cumsum": empty(B, T, H) if p.get("use_g", True) else None, "A": empty(B, T, H, BT)}
    if stop >= 1:
        out["Ai"] = empty(B, T, H, BT)
    if stop >= 2:
        out["w"], out["u"] = empty(B, T, H, K), empty(B, T, H, V)
    if stop >= 3:
        n_seq = len(lens) if lens else B
        out["h"], out["v_new"], out["ht"] = empty(B, nt, H, K, V), empty(B, T, H, V), empty(n_seq, H, K, V)
    if stop >= 4:
        out["o"] = empty(B, T, H, V)
    return out


def fp64_cumsum(raw: Mapping[str, Any], p: Params) -> torch.Tensor:
    """The chunk-local cumsum of g in fp64 (a meta tensor of its shape for inputs without values)."""
    if raw["g"].is_meta:
        return torch.empty(raw["g"].shape, dtype=torch.float64, device="meta")
    return ref.chunk_local_cumsum(raw["g"].double(), p["BT"], cu_seqlens=raw.get("cu_seqlens"))


def chunked(x: torch.Tensor, BT: int) -> torch.Tensor:
    """[B, T, H, ...] as [B, NT, H, BT, ...] for the torch baselines, zero-padding a ragged tail.

    The baselines exist to be timed: they treat a varlen batch as one sequence and pad the
    tail, as a first torch port of these kernels would.
    """
    pad = -x.shape[1] % BT
    if pad:
        x = torch.cat([x, x.new_zeros((x.shape[0], pad, *x.shape[2:]))], dim=1)
    return x.unflatten(1, (-1, BT)).transpose(2, 3)


def cu_of(inputs: Mapping[str, Any]) -> torch.Tensor | None:
    return inputs.get("cu_seqlens")


def varlen_cases(base: Mapping[str, Any], seqlens: Sequence[Sequence[int]]) -> list[Case]:
    """Varlen cases: B = 1, T = total tokens, the sequence lengths kept in the id."""
    return [Case({"B": 1, "T": sum(lens), "seqlens": tuple(lens), **base}) for lens in seqlens]


def varlen_product(seqlens: Sequence[Sequence[int]], **axes: Sequence[Any]) -> list[Case]:
    """varlen_cases for every combination of the axes (in parity.cases.product order)."""
    return [c for combo in product(**axes) for c in varlen_cases(combo.params, seqlens)]


# ---- valid region ----

def real_columns(p: Params, shape: torch.Size) -> torch.Tensor:
    """For [B, T, H, BT] outputs: column j of row t names a real token (chunk start + j < sequence end).

    Columns past a ragged chunk's end are undefined by the kkt contract (fla zero-fills them
    on some backends only), so they are left out of the comparison.
    """
    B, T, _, BT = shape
    _, _, cu = shape_of(p)
    mask = torch.zeros(B, T, 1, BT, dtype=torch.bool)
    for b, bos, eos in ref.sequences(B, T, cu):
        for s, e in ref.chunks(bos, eos, BT):
            mask[b, s:e, 0, : e - s] = True
    return mask


def gbytes(*numels_and_sizes: tuple[float, int]) -> float:
    return float(sum(n * s for n, s in numels_and_sizes))


def itemsize(dtype: str) -> int:
    return 4 if dtype == "fp32" else 2


def compile_signature(base: Mapping[str, Any], flags: Mapping[str, Sequence[Any]],
                      dtypes: Sequence[str] = ("bf16", "fp16", "fp32")) -> Callable[[str], list[Case]]:
    """compile_signature(level): every combination of `flags` × {dense, varlen} in dtypes[0], plus one
    dense case per other dtype, so the compile tiers reach every heuristic variant with few compiles."""
    combos = [dict(zip(flags, values, strict=True)) for values in itertools.product(*flags.values())]

    def case(combo: Mapping[str, Any], dtype: str, varlen: bool) -> Case:
        shape = {"B": 1, "T": 100, "seqlens": (0, 64, 36)} if varlen else {"B": 2, "T": 100}
        return Case({**shape, **base, **combo, "dtype": dtype})

    cases = [case(c, dtypes[0], v) for c in combos for v in (False, True)]
    cases += [case(combos[-1], dt, False) for dt in dtypes[1:]]
    return lambda level: cases


# ---- perf cases: the shape fla's users run (issue 19), dense and as a varlen batch ----

PERF_SHAPE = {"H": 32, "K": 128, "V": 128, "BT": 64}
PERF_T = 65536
# one ragged batch of the same token count: short and long sequences, two tails that end mid-chunk
PERF_SEQLENS = (1000, 3096, 8192, 16384, 36864)


def perf_cases(without: Sequence[str] = (), dtype: str = "bf16", **flags: Any) -> list[Case]:
    """B=1, T=65536, H=32, K=V=128, BT=64, dense and varlen, with the kernel's own flags; `without`
    drops the dims a kernel does not have (e.g. ("K", "V") for the gate cumsum)."""
    base = {**{k: v for k, v in PERF_SHAPE.items() if k not in without}, **flags, "dtype": dtype}
    return [Case({"B": 1, "T": PERF_T, **base}), *varlen_cases(base, [PERF_SEQLENS])]
