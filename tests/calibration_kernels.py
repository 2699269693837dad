"""Kernels written by others, loaded at run time from a triton-ascend checkout (never copied into parity),
plus two planted negative controls of parity's own. Each spec's true owner per tier is in LABELS, judged
by reading the kernel and the public issues; tests/test_calibration.py compares parity's owners with them.

Source: github.com/Ascend/triton-ascend, third_party/ascend/unittest/pytest_ut (set PARITY_TRITON_ASCEND_GIT
to its git dir, or PARITY_TRITON_ASCEND_SRC to a checkout). Only the @triton.jit functions are taken (with
the module's tl.constexpr globals); their test harness imports torch_npu and is not needed.
"""

from __future__ import annotations

import ast
import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec
from parity.spec import Case

UT = "third_party/ascend/unittest/pytest_ut"
# the module-level imports the kernels use, as a user porting them would write them: the NPU-only modules
# (triton.language.extra.cann) fall back to what the installed Triton has, so upstream sees the plain names
HEADER = ("import triton\nimport triton.language as tl\n"
          "try:\n    from triton.language.extra import libdevice\nexcept ImportError:\n    libdevice = None\n"
          "try:\n    import triton.language.extra.cann.extension as extension\nexcept ImportError:\n"
          "    extension = tl\n")


def upstream_file(name: str) -> str | None:
    """The text of pytest_ut/<name> from the checkout, or None where there is none."""
    src = os.environ.get("PARITY_TRITON_ASCEND_SRC")
    if src and (Path(src) / UT / name).is_file():
        return (Path(src) / UT / name).read_text(encoding="utf-8")
    git = os.environ.get("PARITY_TRITON_ASCEND_GIT")  # a git dir (a bare clone or a checkout's .git)
    if not git or not Path(git).is_dir():
        return None
    done = subprocess.run(["git", "--git-dir", git, "show", f"HEAD:{UT}/{name}"], capture_output=True, text=True,
                          check=False)
    return done.stdout if done.returncode == 0 else None


def jit_only(text: str) -> str:
    """The file's @triton.jit functions and tl.constexpr globals; other decorators (libentry) dropped."""
    tree = ast.parse(text)
    keep = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            node.decorator_list = [d for d in node.decorator_list if "jit" in ast.unparse(d)]
            keep.append(ast.unparse(node))
        elif isinstance(node, ast.Assign) and "constexpr" in ast.unparse(node.value):
            keep.append(ast.unparse(node))
    return HEADER + "\n\n".join(keep) + "\n"


def load(name: str, folder: Path) -> Any:
    """Import pytest_ut/<name>'s kernels from a module file written under folder (inspect needs a file)."""
    text = upstream_file(name)
    if text is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"ta_{name}"
    path.write_text(jit_only(text), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"ta_{Path(name).stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- planted controls (parity's own kernels)


@triton.jit
def row_mean_no_tail_mask(x, out, N, BLOCK: tl.constexpr):
    i_r = tl.program_id(0)
    o_c = tl.arange(0, BLOCK)
    b_x = tl.load(x + i_r * N + o_c)  # planted: no mask, the tail reads the next row
    tl.store(out + i_r, tl.sum(b_x.to(tl.float32), axis=0) / N)


@triton.jit
def int_to_bf16(x, out, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    tl.store(out + o, tl.load(x + o).to(tl.bfloat16))


# ---------------------------------------------------------------- specs


def _spec(name: str, kernel: Any, launch: Any, reference: Any, inputs: Any, params: dict[str, Any]) -> KernelSpec:
    return KernelSpec(name=name, family="calibration", kernel=kernel, launch=launch, reference=reference,
                      cases=lambda level: [Case(params)], make_inputs=inputs)


def specs(folder: Path) -> list[KernelSpec]:
    out = []
    gelu = load("test_gelu.py", folder)
    if gelu is not None:
        def gelu_launch(i: dict, p: dict) -> dict:
            y = torch.empty_like(i["x"])
            gelu.triton_elementwise_unary[(1,)](i["x"], y, N=p["N"], NUMEL=p["NUMEL"])
            return {"out": y}
        out.append(_spec("ta_gelu_erf", gelu.triton_elementwise_unary, gelu_launch,
                         lambda i, p: {"out": i["x"] * 0.5 * (1.0 + torch.erf(i["x"] / math.sqrt(2.0)))},
                         lambda p, g: {"x": torch.randn(p["N"], generator=g).to(torch.float16)},
                         {"N": 37, "NUMEL": 64, "dtype": "fp16"}))
    cumsum = load("test_cumsum.py", folder)
    if cumsum is not None:
        def cumsum_launch(i: dict, p: dict) -> dict:
            y = torch.empty_like(i["x"])
            cumsum.triton_kernel[(1, 1, 1)](y, i["x"], 1, False, 7, 23, 7, 23)
            return {"out": y}
        out.append(_spec("ta_cumsum_7x23", cumsum.triton_kernel, cumsum_launch,
                         lambda i, p: {"out": torch.cumsum(i["x"], 1)},
                         lambda p, g: {"x": torch.randn(7, 23, generator=g)}, {"rows": 7, "cols": 23, "dtype": "fp32"}))
    expm1 = load("test_expm1.py", folder)
    if expm1 is not None:
        def expm1_launch(i: dict, p: dict) -> dict:
            y = torch.zeros_like(i["x"])
            expm1.triton_expm1[(2, 1, 1)](i["x"], y, 512, 128)
            return {"out": y}
        out.append(_spec("ta_expm1", expm1.triton_expm1, expm1_launch, lambda i, p: {"out": torch.expm1(i["x"])},
                         lambda p, g: {"x": torch.rand(2, 64, 8, generator=g)}, {"n": 1024, "dtype": "fp32"}))
    add = load("test_add.py", folder)
    if add is not None:
        def add_launch(i: dict, p: dict) -> dict:
            y = torch.zeros_like(i["x"])
            add.triton_add[(2, 1, 1)](i["x"], i["y"], y, 512, 128)
            return {"out": y}
        out.append(_spec("ta_add_bf16", add.triton_add, add_launch, lambda i, p: {"out": i["x"] + i["y"]},
                         lambda p, g: {"x": torch.randn(2, 64, 8, generator=g).to(torch.bfloat16),
                                       "y": torch.randn(2, 64, 8, generator=g).to(torch.bfloat16)},
                         {"n": 1024, "dtype": "bf16"}))
    sliced = load("test_extract_slice.py", folder)
    if sliced is not None:
        def slice_launch(i: dict, p: dict) -> dict:
            y = torch.zeros_like(i["x"])
            sliced.triton_kernel[(1,)](i["x"], i["y"], y, 1024, BLOCK_SIZE=1024)
            return {"out": y[:32]}
        out.append(_spec("ta_extract_slice", sliced.triton_kernel, slice_launch,
                         lambda i, p: {"out": (i["x"] + i["y"])[:32]},
                         lambda p, g: {"x": torch.rand(1024, generator=g), "y": torch.rand(1024, generator=g)},
                         {"n": 1024, "dtype": "fp32"}))
    block_ptr = load("test_block_ptr.py", folder)
    if block_ptr is not None:
        def dma_launch(i: dict, p: dict) -> dict:
            x = i["x"]
            y = torch.zeros_like(x)
            block_ptr.dma_block_ptr[(20,)](x, y, i["scale"], 3, i["cu"], x.stride(0), x.stride(1), y.stride(0),
                                           y.stride(1), i["scale"].stride(0), x.shape[1], BLOCK_SIZE_M=4,
                                           BLOCK_SIZE_N=128)
            return {"out": y}

        def dma_reference(i: dict, p: dict) -> dict:
            cu, out = i["cu"].tolist(), torch.zeros_like(i["x"])
            for b in range(3):
                out[cu[b]: cu[b + 1]] = i["x"][cu[b]: cu[b + 1]] * i["scale"][b]
            return {"out": out}
        out.append(_spec("ta_dma_block_ptr", block_ptr.dma_block_ptr, dma_launch, dma_reference,
                         lambda p, g: {"x": torch.randn(64, 128, generator=g), "scale": torch.rand(3, generator=g),
                                       "cu": torch.tensor([0, 10, 30, 64], dtype=torch.int32)},
                         {"T": 64, "D": 128, "dtype": "fp32"}))

    def mean_launch(i: dict, p: dict) -> dict:
        y = torch.empty(p["rows"], dtype=torch.float32, device=i["x"].device)
        row_mean_no_tail_mask[(p["rows"],)](i["x"], y, p["N"], BLOCK=64)
        return {"out": y}
    out.append(_spec("cal_row_mean_no_mask", row_mean_no_tail_mask, mean_launch,
                     lambda i, p: {"out": i["x"][: p["rows"] * p["N"]].view(p["rows"], p["N"]).mean(1)},
                     # the rows sit in a longer buffer, so the unmasked tail reads real values, never past it
                     lambda p, g: {"x": torch.rand(p["rows"] * p["N"] + 64, generator=g) + 1.0},
                     {"rows": 4, "N": 37, "dtype": "fp32"}))

    def cast_launch(i: dict, p: dict) -> dict:
        y = torch.empty(16, dtype=torch.bfloat16, device=i["x"].device)
        int_to_bf16[(1,)](i["x"], y, BLOCK=16)
        return {"out": y}
    out.append(_spec("cal_int_to_bf16", int_to_bf16, cast_launch, lambda i, p: {"out": i["x"].double()},
                     lambda p, g: {"x": torch.arange(1, 17, dtype=torch.int32)}, {"n": 16, "dtype": "bf16"}))
    return out


# true owner (record["owner"]["who"]) of each failure, by kernel and tier; a pass has no owner (None)
# (judged from the code: the cumsum tile is 7x23, which upstream's tl.arange refuses and triton-ascend takes;
# test_expm1 calls libdevice.expm1, which Triton's interpreter returns as None (a tier limit) and which
# triton-ascend 3.2.0's libdevice lacks while upstream compiles it; the planted kernels as their comments say)
LABELS: dict[str, dict[str, str | None]] = {
    "ta_gelu_erf": {"interpret": None, "cuda-compile": None, "ascend-compile": None, "ascend-lowered": None},
    "ta_cumsum_7x23": {"interpret": "author", "cuda-compile": "author", "ascend-compile": None,
                       "ascend-lowered": None},
    "ta_expm1": {"interpret": "tier", "cuda-compile": None, "ascend-compile": "triton-ascend",
                 "ascend-lowered": "triton-ascend"},
    # bf16 addition: the interpreter adds bit patterns (a tier limit); the lowered tier brings the bf16
    # builtins the host's libgcc lacks, so it computes the sum right
    "ta_add_bf16": {"interpret": "tier", "cuda-compile": None, "ascend-compile": None, "ascend-lowered": None},
    # tl.extract_slice is triton-ascend's extension: upstream rejects it by design (an Ascend-only construct)
    "ta_extract_slice": {"interpret": "author", "cuda-compile": "author", "ascend-compile": None,
                         "ascend-lowered": None},
    # a block pointer built inside the loop from a loaded base: triton-adapter asserts (getFullShapeOp() only
    # support ReinterpretCastOp...) on code upstream compiles and the interpreter runs right: triton-ascend's
    "ta_dma_block_ptr": {"interpret": None, "cuda-compile": None, "ascend-compile": "triton-ascend",
                         "ascend-lowered": "triton-ascend"},
    "cal_row_mean_no_mask": {"interpret": "author", "cuda-compile": None, "ascend-compile": None,
                             "ascend-lowered": "author"},
    "cal_int_to_bf16": {"interpret": "tier", "cuda-compile": None, "ascend-compile": None, "ascend-lowered": None},
}
