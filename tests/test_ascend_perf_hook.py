"""parity.backends.ascend.perf_hook: the evidence a compile tier hands the perf rules (no triton-ascend needed)."""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from parity.backends.ascend import perf_hook
from parity.backends.ascend.arch import ASCEND_ARCHS
from parity.backends.ascend.perf_rules import Evidence, advise

CORES = 20  # a hard-coded core count, as a module constant


@triton.jit
def _double(x):
    return x * 2


@triton.jit
def _persistent(x_ptr, n_tiles, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    for tile in range(pid, n_tiles, CORES):
        offs = tile * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, _double(tl.load(x_ptr + offs)))


def test_sources_reach_the_helper_with_file_lines_and_module_constants():
    sources = perf_hook.sources_of(_persistent)
    assert [s.name for s in sources] == ["_persistent", "_double"]
    assert sources[0].file.endswith("test_ascend_perf_hook.py") and sources[0].text.startswith("def _persistent")
    assert perf_hook.module_ints(_persistent, sources) == {"CORES": 20}
    ev = Evidence("_persistent", ASCEND_ARCHS["Ascend910B1"], (20,), "aiv", tuple(sources), {"BLOCK": 1024},
                  {"n_tiles": 4096}, {"x_ptr": perf_rules_tensor()}, perf_hook.module_ints(_persistent, sources))
    found = advise(ev).findings
    assert [f.rule for f in found] == ["cores.hard_coded"] and "CORES (module constant 20)" in found[0].evidence
    assert found[0].line.endswith(f"test_ascend_perf_hook.py:{sources[0].first_line + 2}")


def perf_rules_tensor():
    from parity.backends.ascend.perf_rules import TensorArg

    return TensorArg("float32", 4, (1 << 22,), (1,))


def test_launch_args_keep_tensor_layout_and_ints_only():
    x = torch.empty(8, 4).t()
    args = perf_hook.launch_args(["x", "n", "flag", "scale"], [x, 7, True, 0.5])
    assert args == {"tensors": {"x": {"dtype": "float32", "itemsize": 4, "shape": [4, 8], "stride": [1, 4]}},
                    "scalars": {"n": 7}}
