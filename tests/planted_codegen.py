"""Planted launchers for the compile counter and the compile tiers' device-typed inputs.

- `codegen_scale`: a codegen op in the shape of FlagGems' pointwise_dynamic. The spec can name only
  the op object; the @triton.jit kernel it launches is written as source at the first call and
  exec'd (its text registered with linecache, so Triton can read it back), so no spec can list it.
  Its compiles must still be counted, under the generated kernel's name and file.
- `codegen_twins`: two generated kernels with the same __name__, exec'd from different files into
  namespaces with the same __name__: their compiles must stay apart.
- `device_branch`: a launcher that picks its kernel by `x.device.type`, as libraries do; on a
  compile tier it must take the target's branch (tensors that say "cuda" / "npu").
"""

from __future__ import annotations

import linecache
from collections.abc import Mapping
from typing import Any

import torch
import triton
import triton.language as tl

from parity import KernelSpec, nan_empty, randn
from parity.cases import by_level, product

SOURCE = '''
@triton.jit(do_not_specialize=["n"])
def {name}(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(out + o, tl.load(x + o, mask=m) {expr}, mask=m)
'''
BLOCK = 1024


class CodegenOp:
    """x -> x <expr>, by a kernel generated at the first call; `module` is the generated namespace's
    __name__ (the same for every op here, as a codegen library would reuse one)."""

    def __init__(self, tag: str, expr: str, name: str = "pointwise_kernel", module: str = "codegen.generated") -> None:
        self.tag, self.expr, self.name, self.module = tag, expr, name, module
        self.generated: Any = None

    def _generate(self) -> Any:
        filename = f"<parity-codegen-{self.tag}>"
        text = SOURCE.format(name=self.name, expr=self.expr)
        linecache.cache[filename] = (len(text), None, text.splitlines(keepends=True), filename)
        namespace: dict[str, Any] = {"triton": triton, "tl": tl, "__name__": self.module}
        exec(compile(text, filename, "exec"), namespace)  # generated code is the point
        return namespace[self.name]

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.generated is None:
            self.generated = self._generate()
        out = nan_empty(x.shape, x.dtype, x.device)
        self.generated[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK=BLOCK)
        return out


SCALE = CodegenOp("scale", "* 2.0")
SHIFT = CodegenOp("shift", "+ 1.0")


def _inputs(p: Mapping[str, Any], gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"x": randn((p["N"],), p["dtype"], gen)}


@triton.jit(do_not_specialize=["n"])
def target_path_kernel(x, out, n, BLOCK: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    tl.store(out + o, tl.load(x + o, mask=m) * 2.0, mask=m)


def _branch_launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    if x.device.type == "cpu":  # a library's host fallback: no kernel at all
        return {"y": x * 2.0}
    out = nan_empty(x.shape, x.dtype, x.device)
    target_path_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK=BLOCK)
    return {"y": out}


CASES = by_level(product(N=[1000], dtype=["fp32"]), product(N=[4096], dtype=["fp32"]))
SPECS = [
    KernelSpec(name="codegen_scale", family="planted", kernel=SCALE, launch=lambda i, p: {"y": SCALE(i["x"])},
               reference=lambda i, p: {"y": i["x"] * 2.0}, make_inputs=_inputs, cases=CASES, dynamic_args=("N",)),
    KernelSpec(name="codegen_twins", family="planted", kernel=(SCALE, SHIFT),
               launch=lambda i, p: {"y": SHIFT(SCALE(i["x"]))},
               reference=lambda i, p: {"y": i["x"] * 2.0 + 1.0}, make_inputs=_inputs, cases=CASES),
    KernelSpec(name="device_branch", family="planted", kernel=target_path_kernel, launch=_branch_launch,
               reference=lambda i, p: {"y": i["x"] * 2.0}, make_inputs=_inputs, cases=CASES, dynamic_args=("N",)),
]
