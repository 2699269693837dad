"""A user's own FlagGems plugin, as someone outside parity would write it: it imports flag_gems itself at
the top (not through libraries/flag_gems.py), so only FlagGems' adapter (libraries/adapters.py), which
parity applies to any import of a known library, makes it import on a compile tier."""

from __future__ import annotations

import flag_gems.ops as ops
from flag_gems.ops.add import add_func

from parity import KernelSpec, randn
from parity.cases import by_level, product

SPECS = [
    KernelSpec(
        name="user_gems_add",
        family="user_gems",
        kernel=add_func,
        launch=lambda i, p: {"c": ops.add(i["a"], i["b"])},
        reference=lambda i, p: {"c": i["a"] + i["b"]},
        make_inputs=lambda p, gen: {"a": randn((p["M"], p["N"]), p["dtype"], gen),
                                    "b": randn((p["M"], p["N"]), p["dtype"], gen)},
        cases=by_level(product(M=[64], N=[1000], dtype=["fp32"])),
    ),
]
