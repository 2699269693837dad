"""Calibration specs for the Ascend performance advice (docs/ascend-perf-2026-12-03.md): a `--kernels` module.

Each spec is an existing one (shared kernels, fla, mojo_opset, the GDN NPU port, fa-test) renamed `calib_*`
with one or two cases at a size the advice judges (above 32 KiB of tensors per core: quick cases are
mostly too small to say anything about cores). Plus the clean twins (`calib_twin_*`): each finding's kernel with
the change the finding names applied to its own file's text at load time (bench/ascend_perf_twins.py), and
`calib_full_*` controls where no twin can apply a core rule's change.

    PYTHONPATH=<fla>:<mojo_opset>:<gdn-tri-inverse>/src:<fa-test> PARITY_CALIB=shared,fla,mojo,gdn_npu,fa_test \\
      python -m pytest suites/test_compile.py --backend ascend-compile --ascend-arch Ascend910B1 \\
      --kernels bench/ascend_perf_calib.py --no-fit -n 0 --results-dir reports/perf-calib-B1 -k calib_
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Mapping
from typing import Any

from bench.ascend_perf_twins import FULL_CORES, TWINS, twin_spec
from parity.cases import by_level
from parity.spec import Case, KernelSpec

# spec name -> the parameters changed from its first quick case (one case each, two where noted)
SIZES: dict[str, list[dict[str, Any]]] = {
    # shared kernels
    "vector_add": [{"N": 1 << 20, "dtype": "fp32"}],
    "softmax": [{"M": 4096, "N": 1024}],
    "rmsnorm": [{"M": 4096, "N": 1024}],
    "cumsum": [{"M": 4096, "N": 1024}],
    "matmul": [{"M": 1024, "N": 1024, "K": 1024}],
    "block_ptr_tile": [{"B": 2, "T": 4096, "H": 4, "K": 64, "transposed": False},
                       {"B": 2, "T": 4096, "H": 4, "K": 64, "transposed": True}],
    "flash_attention_fwd": [{"B": 1, "T": 2048, "H": 8, "D": 128, "grid": "per_block"},
                            {"B": 1, "T": 2048, "H": 8, "D": 128, "grid": "persistent"}],
    # GDN gates with g: use_g=1 as its users run it; use_g=0 (the first quick case's) leaves the gate's block
    # pointer out of the compile, and the advice must not judge it there
    "gdn_chunk_scaled_dot_kkt": [{"B": 1, "T": 4096, "H": 4, "K": 128, "V": 128, "BT": 64, "use_g": u}
                                 for u in (False, True)],
    "gdn_chunk_fwd_h": [{"B": 1, "T": 4096, "H": 4, "K": 128, "V": 128, "BT": 64, "use_g": u} for u in (False, True)],
    "gdn_chunk_local_cumsum": [{"B": 1, "T": 4096, "H": 4, "BT": 64}],
    # fla's GPU kernels taken to Ascend: their perf cases' shapes
    "fla_chunk_local_cumsum": [{"B": 1, "T": 4096, "H": 16, "BT": 64}],
    "fla_chunk_scaled_dot_kkt_fwd": [{"B": 1, "T": 2048, "H": 8, "K": 128, "BT": 64}],
    "fla_solve_tril": [{"B": 1, "T": 4096, "H": 16, "BT": 64}],
    # mojo_opset's A2 kernels, written for the NPU
    "mojo_rmsnorm_infer": [{"M": 4096, "N": 1024}],
    "mojo_layernorm_infer": [{"M": 4096, "N": 1024}],
    "mojo_swiglu_fwd": [{"M": 4096, "N": 1024}],
    "mojo_silu_fwd": [{"M": 4096, "N": 1024}],
    "mojo_gelu_fwd": [{"M": 4096, "N": 1024}],
    "mojo_rope_fwd": [{"B": 1, "N": 8, "S": 2048, "D": 128}],
    "mojo_sdpa_infer": [{"B": 1, "S": 2048}],
    # the GDN NPU port
    "gdn_npu_chunk_local_cumsum": [{"T": 4096, "H": 4}],
    "gdn_npu_chunk_scaled_dot_kkt_fwd": [{"T": 4096, "H": 4}],
    "gdn_npu_solve_tril": [{"T": 4096, "H": 4, "BT": 64}],
    "gdn_npu_recompute_w_u_fwd": [{"T": 4096, "H": 4}],
    "gdn_npu_chunk_gated_delta_rule_fwd_h": [{"T": 4096, "H": 4}],
    "gdn_npu_chunk_fwd_o": [{"T": 4096, "H": 4}],
    # fa-test: the doc's case (D=128, non-causal); S1=2048 makes 4x more tiles than programs
    "fa_test_npu_attn_fwd": [{"B": 1, "N1": 2, "S1": 2048, "D": 128, "causal": False}],
}
SOURCES = {
    "shared": ("kernels.basics.vector_add", "kernels.basics.softmax", "kernels.basics.rmsnorm", "kernels.basics.cumsum",
               "kernels.basics.matmul", "kernels.basics.block_ptr_tile", "kernels.attention.flash",
               "kernels.gdn.kkt", "kernels.gdn.chunk_h", "kernels.gdn.cumsum"),
    "fla": ("libraries.fla",),
    "mojo": ("libraries.mojo_opset",),
    "gdn_npu": ("libraries.gdn_npu",),
    "fa_test": ("libraries.fa_test",),
}


def calibrated(spec: KernelSpec, changes: list[Mapping[str, Any]], name: str | None = None) -> KernelSpec:
    first = dict(spec.cases("quick")[0].params)
    cases = [Case({**first, **change}) for change in changes]
    return dataclasses.replace(spec, name=name or f"calib_{spec.name}", cases=by_level(cases, cases),
                               perf_cases=(), compile_signature=None)


def cap_configs(kernel: Any) -> None:
    """PARITY_CALIB_CONFIGS=N keeps an autotuned kernel's first N configs (its findings do not depend on the
    config: fa-test's 48 take ~15 minutes per arch on two shared cores)."""
    keep = int(os.environ.get("PARITY_CALIB_CONFIGS", "0") or 0)
    if keep and hasattr(kernel, "configs"):
        kernel.configs = kernel.configs[:keep]


def with_twins(spec: KernelSpec) -> list[KernelSpec]:
    """The calibrated spec, its clean twin (`calib_twin_*`, bench/ascend_perf_twins.py) where one is defined and
    its checkout matches, and the original at a size where the cores are full (`calib_full_*`) where no twin
    can apply a core rule's change."""
    sizes = SIZES[spec.name]
    out = [calibrated(spec, sizes)]
    twin = TWINS.get(spec.name)
    built = twin_spec(twin, spec) if twin is not None else None
    if twin is not None and built is not None:
        cap_configs(built.kernel)
        more = [{**sizes[-1], **m} for m in twin.more_sizes]
        out.append(calibrated(built, sizes + more, f"calib_twin_{spec.name}"))
    if spec.name in FULL_CORES:
        out.append(calibrated(spec, [{**sizes[-1], **FULL_CORES[spec.name][0]}], f"calib_full_{spec.name}"))
    return out


def _specs() -> list[KernelSpec]:
    wanted = [w.strip() for w in os.environ.get("PARITY_CALIB", "shared").split(",") if w.strip()]
    out = []
    for group in wanted:
        for module_name in SOURCES[group]:
            module = importlib.import_module(module_name)
            for spec in module.SPECS:
                if spec.name in SIZES and (spec.unavailable is None or spec.unavailable() is None):
                    cap_configs(spec.kernel)
                    out.extend(with_twins(spec))
    return out


SPECS = _specs()
