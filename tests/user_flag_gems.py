"""A user's own FlagGems plugin, as someone outside parity would write it: it imports flag_gems itself at
the top (not through libraries/flag_gems.py), so only FlagGems' adapter (libraries/adapters.py), which
parity applies to any import of a known library, makes it import on a compile tier."""

from __future__ import annotations

import torch
from flag_gems.ops import softmax
from flag_gems.ops.softmax import softmax_kernel_inner

from parity import KernelSpec, Tolerance, randn
from parity.cases import by_level, product

SPECS = [
    KernelSpec(
        name="user_gems_softmax",
        family="user_gems",
        kernel=softmax_kernel_inner,
        launch=lambda i, p: {"y": softmax(i["a"], -1, False)},
        reference=lambda i, p: {"y": torch.softmax(i["a"], -1)},
        make_inputs=lambda p, gen: {"a": randn((p["M"], p["N"]), p["dtype"], gen)},
        tolerance={"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason="a row reduction in another order")},
        cases=by_level(product(M=[64], N=[1000], dtype=["fp32"])),
    ),
]
