"""Calibration on upstream Triton's own test kernels: python/test/unit/language/test_core.py, read at run time (never
copied into parity), plus a planted author bug and its clean twin through the same template. Each spec's true owner
per tier is in LABELS, judged from the kernel, upstream's own skips and public facts; tests/test_calibration_core.py
compares parity's owners with them.

The kernels are nested in upstream's test functions: each is taken by (test function, kernel name), with the
template substitution upstream's own `patch_kernel` makes (GENERATE_TEST_HERE), and the module-level @triton.jit
helpers it calls. Source: PARITY_TRITON_TEST_CORE (the file), PARITY_TRITON_SRC (a checkout of
github.com/triton-lang/triton) or PARITY_TRITON_GIT (its git dir; HEAD's file is read).
"""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from parity import KernelSpec
from parity.spec import Case, Tolerance

TEST_CORE = "python/test/unit/language/test_core.py"
HEADER = "import triton\nimport triton.language as tl\n\n"


def test_core_text() -> str | None:
    """test_core.py's text from the environment's source, or None where none is given."""
    direct = os.environ.get("PARITY_TRITON_TEST_CORE")
    if direct and Path(direct).is_file():
        return Path(direct).read_text(encoding="utf-8")
    src = os.environ.get("PARITY_TRITON_SRC")
    if src and (Path(src) / TEST_CORE).is_file():
        return (Path(src) / TEST_CORE).read_text(encoding="utf-8")
    git = os.environ.get("PARITY_TRITON_GIT")
    if git and Path(git).is_dir():
        done = subprocess.run(["git", "--git-dir", git, "show", f"HEAD:{TEST_CORE}"], capture_output=True,
                              text=True, check=False)
        return done.stdout if done.returncode == 0 else None
    return None


def _jit(node: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in node.decorator_list)


def nested_kernel(tree: ast.Module, test: str, kernel: str, name: str, patch: Mapping[str, str] | None = None) -> str:
    """The @triton.jit `kernel` defined inside upstream's function `test`, renamed `name`, with the template
    holes filled as upstream's patch_kernel fills them."""
    outer = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == test), None)
    if outer is None:
        raise LookupError(f"test_core.py has no function {test!r}: pin PARITY_TRITON_* to a checkout that has it")
    inner = next((n for n in ast.walk(outer) if isinstance(n, ast.FunctionDef) and n.name == kernel and _jit(n)), None)
    if inner is None:
        raise LookupError(f"{test} in test_core.py defines no @triton.jit {kernel!r}")
    inner.name = name
    source = ast.unparse(inner)
    for hole, text in (patch or {}).items():
        source = source.replace(hole, text)
    return source


def module_helper(tree: ast.Module, name: str) -> str:
    """A module-level @triton.jit function of test_core.py (a helper a kernel calls)."""
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name and _jit(n)), None)
    if node is None:
        raise LookupError(f"test_core.py has no module-level @triton.jit {name!r}")
    return ast.unparse(node)


# (spec name, test function, kernel, template holes): the kernels taken, each under its own module-level name
PIECES: tuple[tuple[str, str, str, dict[str, str]], ...] = (
    ("tc_where", "test_where", "where_kernel", {}),
    ("tc_where_broadcast", "test_where_broadcast", "where_kernel", {}),
    ("tc_erf", "test_math_erf_op", "kernel", {}),
    ("tc_fma", "test_math_fma_op", "kernel", {}),
    ("tc_transpose", "test_transpose", "kernel", {}),
    ("tc_exp", "_test_unary", "kernel", {"GENERATE_TEST_HERE": "tl.exp(x)"}),
    ("tc_neg_bf16", "_test_unary", "kernel", {"GENERATE_TEST_HERE": "-x"}),
    # planted: the author meant tl.exp(x) (the clean twin above) and wrote exp(x) * (1 + x / 1024)
    ("tc_exp_planted", "_test_unary", "kernel", {"GENERATE_TEST_HERE": "tl.exp(x) * (1.0 + x / 1024.0)"}),
    ("tc_tuples", "test_tuples", "with_fn", {}),
    ("tc_noinline", "test_noinline", "kernel", {"GENERATE_TEST_HERE": "noinline_simple_fn"}),
    ("tc_atomic_max_predicate", "test_atomic_rmw_predicate", "kernel", {}),
    ("tc_sum_atomic_add", "test_tensor_atomic_rmw", "kernel", {}),
    ("tc_cumsum_2d", "test_scan2d", "kernel", {"GENERATE_TEST_HERE": "z = tl.cumsum(x, axis=1, reverse=False)"}),
    ("tc_cumsum_2d_reverse", "test_scan2d", "kernel",
     {"GENERATE_TEST_HERE": "z = tl.cumsum(x, axis=0, reverse=True)"}),
    ("tc_histogram", "test_histogram", "histogram_kernel", {}),
    ("tc_scan_1d", "test_scan_1d", "scan_kernel", {}),
    ("tc_partial_row_sum", "test_optimize_thread_locality", "kernel",
     {"INITIALIZE_PATCH": "tl.zeros([BLOCK_M], dtype=tl.float32)", "ACCUMULATE_PATCH": "local + tl.sum(x, axis=1)"}),
)
HELPERS = ("tuples_fn", "noinline_simple_fn")


def load(folder: Path) -> Any:
    """A module holding PIECES' kernels and their helpers, written under folder (inspect needs a file)."""
    text = test_core_text()
    if text is None:
        return None
    tree = ast.parse(text)
    parts = [HEADER, *(module_helper(tree, h) for h in HELPERS)]
    parts += [nested_kernel(ast.parse(text), test, kernel, name, patch) for name, test, kernel, patch in PIECES]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "upstream_test_core_kernels.py"
    path.write_text("\n\n\n".join(parts) + "\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("upstream_test_core_kernels", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _spec(name: str, kernel: Any, launch: Any, reference: Any, inputs: Any, params: dict[str, Any],
          **extra: Any) -> KernelSpec:
    return KernelSpec(name=name, family="calibration-test-core", kernel=kernel, launch=launch, reference=reference,
                      cases=lambda level: [Case(params)], make_inputs=inputs, **extra)


def _unary(m: Any, name: str, dtype: torch.dtype, ref: Any) -> KernelSpec:
    def launch(i: dict, p: dict) -> dict:
        z = torch.empty_like(i["x"])
        getattr(m, name)[(1,)](z, i["x"], SIZE=128)
        return {"z": z}
    return _spec(name, getattr(m, name), launch, lambda i, p: {"z": ref(i["x"])},
                 lambda p, g: {"x": torch.randn(128, generator=g).to(dtype)},
                 {"n": 128, "dtype": {torch.float32: "fp32", torch.bfloat16: "bf16"}[dtype]})


def specs(folder: Path) -> list[KernelSpec]:
    m = load(folder)
    if m is None:
        return []
    out = []

    def where_launch(i: dict, p: dict) -> dict:
        z = torch.empty_like(i["a"])
        m.tc_where[(1,)](i["cond"], i["a"], i["b"], z, 1000, BLOCK_SIZE=1024, TEST_POINTERS=False,
                         TEST_SCALAR_POINTERS=False)
        return {"z": z}
    out.append(_spec("tc_where", m.tc_where, where_launch,
                     lambda i, p: {"z": torch.where(i["cond"], i["a"], i["b"])},
                     lambda p, g: {"cond": torch.rand(1000, generator=g) > 0.5, "a": torch.randn(1000, generator=g),
                                   "b": torch.randn(1000, generator=g)}, {"n": 1000, "dtype": "fp32"}))

    def bcast_launch(i: dict, p: dict) -> dict:
        z = torch.empty_like(i["a"])
        m.tc_where_broadcast[(1,)](i["cond"], i["a"], z, 32)
        return {"z": z}
    out.append(_spec("tc_where_broadcast", m.tc_where_broadcast, bcast_launch,
                     lambda i, p: {"z": torch.where(i["cond"][None, :], i["a"], 0.0)},
                     lambda p, g: {"cond": torch.rand(32, generator=g) > 0.5, "a": torch.randn(32, 32, generator=g)},
                     {"size": 32, "dtype": "fp32"}))
    out.append(_unary(m, "tc_erf", torch.float32, torch.erf))

    def fma_launch(i: dict, p: dict) -> dict:
        z = torch.empty_like(i["x"])
        m.tc_fma[(1,)](z, i["x"], i["y"], i["w"], SIZE=128)
        return {"z": z}
    out.append(_spec("tc_fma", m.tc_fma, fma_launch, lambda i, p: {"z": i["x"] * i["y"] + i["w"]},
                     lambda p, g: {k: torch.randn(128, generator=g) for k in ("x", "y", "w")},
                     {"n": 128, "dtype": "fp32"}))

    def transpose_launch(i: dict, p: dict) -> dict:
        z = torch.empty(2, 128, dtype=i["x"].dtype, device=i["x"].device)
        m.tc_transpose[(1,)](z, i["x"], SIZE=128)
        return {"z": z}
    # upstream reads X [SIZE, 2] as two rows of SIZE, transposes the tile and stores it through transposed offsets:
    # Z's memory ends up X's (its check compares against x.T in numpy's column-major empty_like)
    out.append(_spec("tc_transpose", m.tc_transpose, transpose_launch, lambda i, p: {"z": i["x"].reshape(2, 128)},
                     lambda p, g: {"x": torch.randn(128, 2, generator=g)}, {"size": 128, "dtype": "fp32"}))
    out.append(_unary(m, "tc_exp", torch.float32, torch.exp))
    out.append(_unary(m, "tc_exp_planted", torch.float32, torch.exp))
    out.append(_unary(m, "tc_neg_bf16", torch.bfloat16, lambda x: -x))

    def tuples_launch(i: dict, p: dict) -> dict:
        a, b, c = (torch.empty_like(i["x"]) for _ in range(3))
        m.tc_tuples[(1,)](i["x"], i["y"], a, b, c)
        return {"a": a, "b": b, "c": c}
    out.append(_spec("tc_tuples", m.tc_tuples, tuples_launch,
                     lambda i, p: {"a": i["x"] + i["y"], "b": i["x"] - i["y"], "c": i["x"] * i["y"]},
                     lambda p, g: {"x": torch.tensor([1.3]), "y": torch.tensor([1.9])}, {"n": 1, "dtype": "fp32"}))

    def noinline_launch(i: dict, p: dict) -> dict:
        z = torch.zeros_like(i["x"])
        m.tc_noinline[(1,)](i["x"], i["y"], z)
        return {"z": z}
    out.append(_spec("tc_noinline", m.tc_noinline, noinline_launch, lambda i, p: {"z": i["x"] + i["y"]},
                     lambda p, g: {"x": torch.tensor([1.0]), "y": torch.tensor([2.0])}, {"n": 1, "dtype": "fp32"}))

    def predicate_launch(i: dict, p: dict) -> dict:
        x = torch.zeros(1, dtype=torch.int32, device=i["x"].device)
        m.tc_atomic_max_predicate[(4096,)](x)
        return {"x": x}
    out.append(_spec("tc_atomic_max_predicate", m.tc_atomic_max_predicate, predicate_launch,
                     lambda i, p: {"x": torch.tensor([63], dtype=torch.float64)},
                     # dtype names the tolerance row: the int32 maximum is compared as a float, exactly or not at all
                     lambda p, g: {"x": torch.zeros(1)}, {"programs": 4096, "dtype": "fp32"}))

    def sum_add_launch(i: dict, p: dict) -> dict:
        z, old = i["z"].clone(), torch.zeros_like(i["z"])
        m.tc_sum_atomic_add[(1,)](z, i["x"], old, 1, 8, 8, None, True)
        return {"z": z, "old": old}
    out.append(_spec("tc_sum_atomic_add", m.tc_sum_atomic_add, sum_add_launch,
                     lambda i, p: {"z": i["z"] + i["x"].sum(1), "old": i["z"]},
                     lambda p, g: {"x": torch.randn(8, 8, generator=g), "z": torch.randn(8, generator=g)},
                     {"shape": "8x8", "axis": 1, "dtype": "fp32"},
                     tolerance={"fp32": Tolerance(rtol=1e-4, atol=1e-5, reason="upstream's own rtol for this sum")}))

    def scan2d(name: str, axis: int, reverse: bool) -> KernelSpec:
        def launch(i: dict, p: dict) -> dict:
            z = torch.empty_like(i["x"])
            getattr(m, name)[(1,)](i["x"], i["y"], z, BLOCK_M=32, BLOCK_N=16, AXIS=axis)
            return {"z": z}

        def reference(i: dict, p: dict) -> dict:
            x = i["x"].flip(axis) if reverse else i["x"]
            z = torch.cumsum(x, axis)
            return {"z": z.flip(axis) if reverse else z}
        return _spec(name, getattr(m, name), launch, reference,
                     lambda p, g: {"x": torch.randn(32, 16, generator=g), "y": torch.randn(32, 16, generator=g)},
                     {"shape": "32x16", "axis": axis, "reverse": int(reverse), "dtype": "fp32"},
                     tolerance={"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason=(
                         "a scan of up to 32 fp32 terms in another order than torch's: a few ulp of the running sum"))})
    out += [scan2d("tc_cumsum_2d", 1, False), scan2d("tc_cumsum_2d_reverse", 0, True)]

    def histogram_launch(i: dict, p: dict) -> dict:
        z = torch.empty(8, dtype=torch.int32, device=i["x"].device)
        m.tc_histogram[(1,)](i["x"], z, M=1024, N=8)
        return {"z": z}
    out.append(_spec("tc_histogram", m.tc_histogram, histogram_launch,
                     lambda i, p: {"z": torch.bincount(i["x"].long(), minlength=8).double()},
                     lambda p, g: {"x": torch.randint(0, 8, (1024,), generator=g, dtype=torch.int32)},
                     {"M": 1024, "N": 8, "dtype": "fp32"}))  # dtype names the tolerance row: counts are exact

    def scan1d_launch(i: dict, p: dict) -> dict:
        z = torch.empty(64, dtype=torch.int32, device=i["x"].device)
        m.tc_scan_1d[(1,)](z, i["x"], 8, 8)
        return {"z": z}
    out.append(_spec("tc_scan_1d", m.tc_scan_1d, scan1d_launch,
                     lambda i, p: {"z": torch.cumsum(i["x"], 0).reshape(1, 8).expand(8, 8).reshape(64).double()},
                     lambda p, g: {"x": torch.randint(-100, 100, (8,), generator=g, dtype=torch.int32)},
                     {"M": 8, "N": 8, "dtype": "fp32"}))

    def partial_launch(i: dict, p: dict) -> dict:
        y = torch.empty(32, 2, dtype=torch.float32, device=i["x"].device)
        m.tc_partial_row_sum[(1, 2, 1)](i["x"], y, 512, 32, 64)
        return {"y": y}

    def partial_reference(i: dict, p: dict) -> dict:
        blocks = i["x"].reshape(32, 8, 64).sum(2)  # [BLOCK_M, N / BLOCK_N]
        return {"y": torch.stack([blocks[:, 0::2].sum(1), blocks[:, 1::2].sum(1)], 1)}
    out.append(_spec("tc_partial_row_sum", m.tc_partial_row_sum, partial_launch, partial_reference,
                     lambda p, g: {"x": torch.randn(32, 512, generator=g)},
                     {"M": 32, "N": 512, "BLOCK_N": 64, "programs_n": 2, "dtype": "fp32"},
                     tolerance={"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason=(
                         "256 fp32 terms per output, summed in blocks of 64: a few ulp of the sum"))}))
    return out


# true owner (record["owner"]["who"]) of each failure, by kernel and tier; a pass has no owner (None).
# Judged from the kernels and upstream's own skips: test_core skips bf16 under the interpreter
# (check_type_supported: "bfloat16 is not supported in the interpreter"), and Triton's interpreter negates bf16 bit
# patterns (docs/measurements-2026-12-01.md); tc_exp_planted's expression is wrong on purpose (the author's bug, seen
# wherever the kernel computes; the compile tiers compile it fine).
EVERY_TIER = ("interpret", "cuda-compile", "ascend-compile", "ascend-lowered")
RUN_TIERS = ("interpret", "ascend-lowered")
LABELS: dict[str, dict[str, str | None]] = {
    name: dict.fromkeys(EVERY_TIER) for name, *_ in PIECES
}
LABELS["tc_exp_planted"].update(dict.fromkeys(RUN_TIERS, "author"))
LABELS["tc_neg_bf16"]["interpret"] = "tier"
# @triton.jit(noinline=True) is Triton's language; triton-adapter cannot convert the tt.call it makes ("failed to
# legalize unresolved materialization from ('memref<?xf32>') to '!tt.ptr<f32>'"), reported as
# https://github.com/triton-lang/triton-ascend/issues/39 (open): triton-ascend's, where it compiles
LABELS["tc_noinline"].update({"ascend-compile": "triton-ascend", "ascend-lowered": "triton-ascend"})
