"""Specs whose launcher raises before any Triton launch: in a library's code, and in parity's own.

The same file (planted_site/planted_lib.py) is loaded twice: as `planted_lib`, a package outside parity
(so the raise is the library's), and as `kernels._planted_lib`, as if it were one of parity's kernels
(so the raise stays parity's and gets no repro). Loaded by path: nothing is added to sys.path.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import torch

from parity import KernelSpec
from parity.cases import by_level, product

SITE = Path(__file__).parent / "planted_site"


def _load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SITE / "planted_lib.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


library = _load("planted_lib")
own = _load("kernels._planted_lib")


def _spec(name: str, module: ModuleType) -> KernelSpec:
    return KernelSpec(name=name, family="controls", kernel=module.scale_kernel,
                      launch=lambda i, p: {"y": module.scale(i["x"], 2.0)},
                      reference=lambda i, p: {"y": 2.0 * i["x"]}, cases=by_level(product(N=[1000])),
                      make_inputs=lambda p, gen: {"x": torch.randn(p["N"], generator=gen)})


in_library = _spec("scale_in_library", library)
in_parity = _spec("scale_in_parity", own)
