"""Clean twins for the Ascend performance advice's calibration (docs/ascend-perf-2026-12-04.md).

A twin is a calibrated kernel with the change its finding names applied, and nothing else: the kernel's own
file (ours under kernels/, or the library checkout's) is read, each (old, new) text pair below replaced once,
and the result loaded from a temporary file. No code of another project is copied here: the pairs name the
lines the change touches. A pair that no longer matches the file drops the twin (None), never a half-patched one.

bench/ascend_perf_calib.py builds the twins beside the kernels they fix (`calib_twin_*`), at the calibration's
size plus, where a rule has no twin, a size at which the cores are full (the rule silent there is a control,
not a fix). bench/ascend_perf_table.py prints the twins table.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from parity.spec import KernelSpec

Fixes = tuple[tuple[str, str], ...]


@dataclasses.dataclass(frozen=True)
class Twin:
    of: str  # the calibrated spec's name
    fixes: Fixes  # (text in the file, the same text with the finding's change)
    source: Callable[[], Path | None]  # the file the fixes apply to (None: the checkout is absent)
    rebuild: Callable[[KernelSpec, ModuleType], KernelSpec]  # the spec over the patched module
    change: str  # the finding's change as applied, for the doc's twins table
    residual: Mapping[str, str] = dataclasses.field(default_factory=dict)  # rule -> why no twin removes it
    more_sizes: tuple[dict[str, Any], ...] = ()  # cases beyond the calibration's (e.g. where the cores are full)
    imports: Imports = contextlib.nullcontext


Imports = Callable[[], contextlib.AbstractContextManager[Any]]


@functools.cache
def _twin_dir() -> tempfile.TemporaryDirectory[str]:
    """One folder per process for the twins' files, removed when the process exits (Triton reads a kernel's
    source from its file while the module is alive, so the files outlive `patched`)."""
    return tempfile.TemporaryDirectory(prefix="parity-twin-")


def patched(path: Path, fixes: Fixes, name: str, imports: Imports = contextlib.nullcontext) -> ModuleType | None:
    """`path`'s module with each (old, new) replaced once, loaded from a temporary file; None where an `old`
    is not in the file exactly once (the checkout moved on: the twin would not be the finding's kernel)."""
    text = path.read_text()
    for old, new in fixes:
        if text.count(old) != 1:
            return None
        text = text.replace(old, new)
    twin_path = Path(tempfile.mkdtemp(dir=_twin_dir().name)) / f"{path.stem}_twin.py"
    twin_path.write_text(text)
    loader_spec = importlib.util.spec_from_file_location(name, twin_path)
    assert loader_spec is not None and loader_spec.loader is not None
    module = importlib.util.module_from_spec(loader_spec)
    with imports():
        loader_spec.loader.exec_module(module)
    return module


def twin_spec(twin: Twin, spec: KernelSpec) -> KernelSpec | None:
    path = twin.source()
    if path is None:
        return None
    module = patched(path, twin.fixes, f"{spec.name}_twin", twin.imports)
    return None if module is None else twin.rebuild(spec, module)


def _ours(module_name: str) -> Callable[[], Path | None]:
    def source() -> Path | None:
        spec = importlib.util.find_spec(module_name)
        return Path(spec.origin) if spec is not None and spec.origin else None
    return source


def _own_spec(spec: KernelSpec, module: ModuleType) -> KernelSpec:
    """Our kernels: the patched module's own spec (its kernel and launcher are the patched ones)."""
    return dataclasses.replace(module.SPECS[0], name=spec.name)


# --- our shared kernels: contiguity ------------------------------------------------------------------------

BLOCK_PTR_TILE = Twin(
    "block_ptr_tile",
    (("p_s = tl.make_block_ptr(rowsum + i_b * T * H + i_h, (T,), (H,), (i_t * BT,), (BT,), (0,))",
      "p_s = tl.make_block_ptr(rowsum + i_bh * T, (T,), (1,), (i_t * BT,), (BT,), (0,))"),
     ("rowsum = nan_empty((B, T, H), torch.float32, x.device)",
      "rowsum = nan_empty((B, H, T), torch.float32, x.device)"),
     ("    return y, rowsum\n", "    return y, rowsum.transpose(1, 2)\n")),
    _ours("kernels.basics.block_ptr_tile"), _own_spec,
    "rowsum allocated [B, H, T] and stored along T with stride 1 (the caller gets the [B, T, H] view)")

# the varlen row offsets too: three sequences, one of them empty, in T = 4096 (B = 1)
VARLEN = {"B": 1, "T": 4096, "seqlens": (1500, 0, 2596)}

# g and beta transposed to [B, H, T] before the launch; the block pointers read them with stride 1. In a varlen
# launch (B = 1) a sequence's row starts at i_h * T_all + bos; fixed-length at (i_b * H + i_h) * T_all.
_KKT_ROW = "(i_b * H + i_h) * T_all + bos - i_b * T_all"
GDN_KKT = Twin(
    "gdn_chunk_scaled_dot_kkt",
    (("    i_t, bos, T = chunk_bounds(", "    T_all = T\n    i_t, bos, T = chunk_bounds("),
     ("tl.make_block_ptr(beta + bos * H + i_h, (T,), (H,),", f"tl.make_block_ptr(beta + {_KKT_ROW}, (T,), (1,),"),
     ("tl.make_block_ptr(g + bos * H + i_h, (T,), (H,),", f"tl.make_block_ptr(g + {_KKT_ROW}, (T,), (1,),"),
     ("](k=k, beta=beta, g=g_cumsum,",
      "](k=k, beta=beta.transpose(1, 2).contiguous(),\n"
      "        g=None if g_cumsum is None else g_cumsum.transpose(1, 2).contiguous(),")),
    _ours("kernels.gdn.kkt"), _own_spec,
    "g and beta transposed to [B, H, T] before the launch; their block pointers read stride 1",
    more_sizes=(VARLEN,))

GDN_CHUNK_H = Twin(
    "gdn_chunk_fwd_h",
    (("    i_n, i_h = i_nh // H, i_nh % H\n", "    i_n, i_h = i_nh // H, i_nh % H\n    T_all = T\n"),
     ("        boh = tl.load(chunk_offsets + i_n).to(tl.int32)\n",
      "        boh = tl.load(chunk_offsets + i_n).to(tl.int32)\n        o_g = i_h * T_all + bos\n"),
     ("        boh = i_n * NT\n", "        boh = i_n * NT\n        o_g = (i_n * H + i_h) * T_all\n"),
     ("tl.load(g + (bos + last) * H + i_h)", "tl.load(g + o_g + last)"),
     ("tl.make_block_ptr(g + bos * H + i_h, (T,), (H,),", "tl.make_block_ptr(g + o_g, (T,), (1,),"),
     ("](k=k, w=w, u=u, g=g_cumsum,",
      "](k=k, w=w, u=u, g=None if g_cumsum is None else g_cumsum.transpose(1, 2).contiguous(),")),
    _ours("kernels.gdn.chunk_h"), _own_spec,
    "g transposed to [B, H, T] before the launch; its block pointer and last-row load read stride 1",
    residual={r: "no twin: the state recurrence runs over T in order inside each program, and V splits no finer "
                 "than BV=16 (smaller dot tiles than the cube's 16 contradict the cube-and-vector advice); "
                 "silent where B*H fills the cores (its H=32 case)"
              for r in ("cores.idle", "cores.last_wave")},
    more_sizes=(VARLEN, {"H": 32}))


# --- the GDN NPU port: idle cores --------------------------------------------------------------------------

def _port_file(name: str) -> Callable[[], Path | None]:
    def source() -> Path | None:
        from libraries import gdn_npu  # the port's alias, made where it loads

        gdn_npu._alias_port()
        spec = importlib.util.find_spec(f"sgl_kernel_npu.fla.{name}")
        return Path(spec.origin) if spec is not None and spec.origin else None
    return source


def _port_o(spec: KernelSpec, module: ModuleType) -> KernelSpec:
    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, Any]:
        return {"o": module.chunk_fwd_o_npu(inputs["q"], inputs["k"], inputs["v"], inputs["h"], g=inputs["g"],
                                            scale=p["K"] ** -0.5, cu_seqlens=inputs.get("cu_seqlens"),
                                            chunk_size=p["BT"])}
    return dataclasses.replace(spec, kernel=(module.chunk_fwd_kernel_o_npu_kernel,), launch=launch)


_NUM_AICORE = 'triton.runtime.driver.active.utils.get_device_properties(0)["num_aicore"]'
_NUM_VECTORCORE = 'triton.runtime.driver.active.utils.get_device_properties(0)["num_vectorcore"]'
GDN_NPU_O = Twin(
    "gdn_npu_chunk_fwd_o",
    (("    for i_t in range(NT):\n", "    for i_t in range(tl.program_id(2), NT, tl.num_programs(2)):\n"),
     ('        return (triton.cdiv(V, meta["BV"]), N * H)\n',
      f'        return (triton.cdiv(V, meta["BV"]), N * H, triton.cdiv({_NUM_AICORE}, N * H))\n')),
    _port_file("chunk_o"), _port_o,
    "a grid over one more axis, the chunks of T (independent in chunk_o): cdiv(num_aicore, N*H) programs per "
    "(V block, sequence x head), each looping `range(pid_2, NT, num_programs(2))`")


def _port_tril(spec: KernelSpec, module: ModuleType) -> KernelSpec:
    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, Any]:
        return {"Ai": module.solve_tril_npu(inputs["A"], cu_seqlens=inputs.get("cu_seqlens"))}
    names = ("solve_tril_16x16_kernel_paral_v3", "merge_16x16_to_32x32_inverse_kernel",
             "merge_16x16_to_64x64_inverse_kernel_reorder_all_masked")
    return dataclasses.replace(spec, kernel=tuple(getattr(module, n) for n in names), launch=launch)


GDN_NPU_TRIL = Twin(
    "gdn_npu_solve_tril",
    (("    LARGE_BLOCK_T = 608 * 2\n",
      f"    LARGE_BLOCK_T = max(32, min(608 * 2,\n"
      f"        triton.next_power_of_2(T * B * H // (2 * {_NUM_VECTORCORE})) // 2))\n"),),
    _port_file("solve_tril"), _port_tril,
    "smaller tiles: LARGE_BLOCK_T sized from num_vectorcore (a power of two, 32 to 1216, for about two programs "
    "per vector core; 128 at T=4096, B*H=4) instead of the fixed 1216")


# --- fa-test: the hard-coded core count ----------------------------------------------------------------------

def _fa_test_file() -> Path | None:
    from libraries import fa_test  # only when a twin is asked for

    root = fa_test.checkout()
    return None if root is None else root / fa_test.SCRIPTS["npu"]


@contextlib.contextmanager
def _fa_test_imports() -> Iterator[None]:
    from libraries import fa_test

    with fa_test._script_imports():
        yield


def _fa_test(spec: KernelSpec, module: ModuleType) -> KernelSpec:
    from libraries import fa_test

    def launch(inputs: Mapping[str, Any], p: Mapping[str, Any]) -> dict[str, Any]:
        return {"o": module.attention(inputs["q"], inputs["k"], inputs["v"], p["causal"], fa_test.SM_SCALE, 128, 128)}
    return dataclasses.replace(spec, kernel=module._attn_fwd, launch=launch)


FA_TEST = Twin(
    "fa_test_npu_attn_fwd",
    (("for block_idx in range(pid, NUM_BLOCKS, 20):", "for block_idx in range(pid, NUM_BLOCKS, tl.num_programs(0)):"),
     ("        num_cores = 20\n", f"        num_cores = {_NUM_AICORE}\n")),
    _fa_test_file, _fa_test,
    "the loop strides by `tl.num_programs(0)` and the launcher's grid is `num_aicore`", imports=_fa_test_imports)

TWINS: dict[str, Twin] = {t.of: t for t in (BLOCK_PTR_TILE, GDN_KKT, GDN_CHUNK_H, GDN_NPU_O, GDN_NPU_TRIL, FA_TEST)}

# Rules whose change cannot be applied without rewriting the kernel's algorithm: the original kernel at a size
# where the cores are full, to show the rule silent there (a control, named calib_full_*, not a twin)
FULL_CORES: dict[str, tuple[dict[str, Any], str]] = {
    "gdn_npu_chunk_gated_delta_rule_fwd_h": (
        {"T": 2048, "H": 32, "seqs": "ragged"},
        "no twin: the port's kernel walks T in order (the state recurrence) and splits V into two hard-coded "
        "halves of 64 inside one program, so more programs need a rewrite; sglang's serving shape (H=32, three "
        "sequences: 96 programs) fills the cores"),
}
