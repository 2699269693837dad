"""Expected-error probes: classic Triton mistakes that must fail to compile, per backend.

Each probe is a compile-only spec: the compile tiers build it and record the compiler's
actual message, so the report shows where backends reject differently and how helpful
each message is. The run and interpret tiers take no cases from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.spec import Case, ExpectedCompileError

BLOCK = 16


@triton.jit
def index_local_tensor_kernel(x, idx, out, B: tl.constexpr):
    o = tl.arange(0, B)
    b_x = tl.load(x + o)  # [B]
    b_i = tl.load(idx + o)  # [B]
    tl.store(out + o, b_x[b_i])  # a tensor-valued subscript: Triton has no gather by []


@triton.jit
def slice_local_tensor_kernel(x, out, B: tl.constexpr):
    o = tl.arange(0, B)
    b_acc = tl.load(x + o[:, None] * B + o[None, :])  # [B, B]
    b_top = b_acc[0:B // 2, :]  # slicing a register tile: only None and : are allowed
    tl.store(out + tl.arange(0, B // 2)[:, None] * B + o[None, :], b_top)


@triton.jit
def block_ptr_non_pow2_kernel(x, out, M, N, B: tl.constexpr):
    # block_shape (12, B): 12 is not a power of 2
    p_x = tl.make_block_ptr(x, (M, N), (N, 1), (0, 0), (12, B), (1, 0))
    p_o = tl.make_block_ptr(out, (M, N), (N, 1), (0, 0), (12, B), (1, 0))
    tl.store(p_o, tl.load(p_x, boundary_check=(0, 1)), boundary_check=(0, 1))


@triton.jit
def arange_runtime_bound_kernel(x, out, n):
    o = tl.arange(0, n)  # n is a runtime int, tl.arange needs constexpr bounds
    tl.store(out + o, tl.load(x + o))


@triton.jit
def extract_slice_kernel(x, out, B: tl.constexpr):
    o = tl.arange(0, B)
    b_x = tl.load(x + o[:, None] * B + o[None, :])  # [B, B]
    b_top = tl.extract_slice(b_x, (0, 0), (B // 2, B), (1, 1))  # triton-ascend's extension
    tl.store(out + tl.arange(0, B // 2)[:, None] * B + o[None, :], b_top)


def _square(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((BLOCK, BLOCK), "fp32", gen)}


def _vector_and_index(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((BLOCK,), "fp32", gen),
            "idx": torch.randperm(BLOCK, generator=gen).to(torch.int32)}


def _out(x: torch.Tensor, rows: int) -> torch.Tensor:
    return nan_empty((rows, *x.shape[1:]), x.dtype, x.device)


def _launch_index(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    out = _out(inputs["x"], BLOCK)
    index_local_tensor_kernel[(1,)](inputs["x"], inputs["idx"], out, B=BLOCK)
    return {"out": out}


def _launch_slice(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    out = _out(inputs["x"], BLOCK // 2)
    slice_local_tensor_kernel[(1,)](inputs["x"], out, B=BLOCK)
    return {"out": out}


def _launch_block_ptr(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    out = _out(inputs["x"], BLOCK)
    block_ptr_non_pow2_kernel[(1,)](inputs["x"], out, M=BLOCK, N=BLOCK, B=BLOCK)
    return {"out": out}


def _launch_arange(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    out = _out(inputs["x"], BLOCK)
    arange_runtime_bound_kernel[(1,)](inputs["x"], out, n=BLOCK)
    return {"out": out}


def _launch_extract_slice(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    out = _out(inputs["x"], BLOCK // 2)
    extract_slice_kernel[(1,)](inputs["x"], out, B=BLOCK)
    return {"out": out}


def _top_half(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"][: BLOCK // 2]}


def _gather(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"][inputs["idx"].long()]}


def _copy(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"].clone()}


def _one_case(level: str) -> list[Case]:
    return [Case({"B": BLOCK, "dtype": "fp32"})]


def _probe(name: str, kernel: Any, launch: Any, reference: Any, make_inputs: Any,
           errors: tuple[ExpectedCompileError, ...], doc: str) -> KernelSpec:
    return KernelSpec(name=name, family="probes", kernel=kernel, launch=launch, reference=reference,
                      cases=_one_case, make_inputs=make_inputs, expected_compile_errors=errors,
                      compile_only=True, doc=doc)


def _everywhere(pattern: str, reason: str) -> tuple[ExpectedCompileError, ...]:
    return tuple(ExpectedCompileError(backend, pattern, reason) for backend in ("cuda", "ascend"))


SPECS = [
    _probe("probe_index_local_tensor", index_local_tensor_kernel, _launch_index, _gather, _vector_and_index,
           _everywhere(r"forget to add @triton\.jit",
                       "the code generator reads b_x[b_i] as a call into a non-jit function"),
           "b_x[b_i] with a tensor index; use tl.gather or a masked load instead"),
    _probe("probe_slice_local_tensor", slice_local_tensor_kernel, _launch_slice, _top_half, _square,
           _everywhere(r"unsupported tensor index", "register tiles accept only None and : subscripts"),
           "acc[a:b, :] on a register tile; load the half you need, or tl.split/tl.reshape"),
    _probe("probe_block_ptr_non_pow2", block_ptr_non_pow2_kernel, _launch_block_ptr, _copy, _square,
           (ExpectedCompileError("cuda", r"power of 2|power-of-two|power of two",
                                 "upstream requires power-of-2 block shapes"),),
           "make_block_ptr with block_shape (12, 16); triton-ascend 3.2 accepts it and BiShengIR lowers it"),
    _probe("probe_arange_runtime_bound", arange_runtime_bound_kernel, _launch_arange, _copy, _square,
           _everywhere(r"arguments must be of type tl\.constexpr", "tl.arange bounds must be tl.constexpr"),
           "tl.arange(0, n) with a runtime n"),
    _probe("probe_extract_slice", extract_slice_kernel, _launch_extract_slice, _top_half, _square,
           (ExpectedCompileError("cuda", r"extract_slice",
                                 "tl.extract_slice is a triton-ascend language extension"),),
           "tl.extract_slice: compiles on Ascend only"),
]
