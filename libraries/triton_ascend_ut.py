"""triton-ascend's own unit-test kernels (github.com/Ascend/triton-ascend, `third_party/ascend/unittest`).

Loaded from a checkout at run time, never copied: PARITY_TRITON_ASCEND_SRC names a checkout (or an
extract of `third_party/ascend/unittest`), PARITY_TRITON_ASCEND_GIT a git dir (bare clone or `.git`)
read at HEAD, as tests/test_calibration.py reads it. Without either, the specs skip and say so.

Why the functions are taken from the file's syntax tree, not imported: the test module imports
`torch_npu` and its `test_common` at the top, which exist only on an NPU host, and the kernel and its
launcher are closures inside the test function (`test_gather` defines `gather_kernel` and
`triton_gather` in its body), so even a clean import would not reach them. So the file is parsed and
only those two function definitions are compiled, under the file's own name and line numbers: Triton
reads the kernel's source from that file (inspect.getsource) and compile errors point into it. No
stand-in for torch_npu is needed, and nothing of the test harness runs.

The gather's last 2-D case (src [128, 64] fp32, indices [128, 128], gather along axis 1) launches one
program whose block sizes are the problem sizes; it needs more unified buffer than an Atlas A2 core has,
and the test itself returns early for it ("mem overflow", by its own size rule `4 * src.numel() >=
ub_size / 8`, ub_size 196608 bytes in its test_common.py). So its authors know: the case is declared
expected by them on the Ascend tiers (KnownDivergence.expected_by), which triage turns into theirs with
nothing drafted, where a draft to their tracker would tell them what their own test says. The fit advisor
still names the row block that fits. The other six cases are the test's too.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from libraries.adapters import TRITON_ASCEND_UT
from parity import KernelSpec, KnownDivergence, Tolerance
from parity.cases import by_level, product

REPO = "https://github.com/Ascend/triton-ascend"
UNITTEST = "third_party/ascend/unittest"
GATHER = f"{UNITTEST}/generalization_cases/test_general_gather.py"
PACKAGE = "triton_ascend_ut"  # the module name the loaded functions carry (libraries/adapters.py packages)
INSTALL = (f"set PARITY_TRITON_ASCEND_SRC to a checkout of {REPO} (or an extract: `git archive HEAD {UNITTEST} | "
           f"tar -x -C <dir>`), or PARITY_TRITON_ASCEND_GIT to its git dir")
Params = Mapping[str, Any]
_LOADED: dict[str, dict[str, Any] | str] = {}


def _source(rel: str) -> tuple[str, str, str] | None:
    """(text, filename, version) of `rel` in the checkout the environment names, or None."""
    src = os.environ.get("PARITY_TRITON_ASCEND_SRC")
    if src and (Path(src) / rel).is_file():
        path = Path(src) / rel
        head = subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
        # an extract (git archive) has no .git: the draft says so rather than naming a path of this machine
        version = f"git {head.stdout.strip()}" if head.returncode == 0 else "checkout without git metadata"
        return path.read_text(encoding="utf-8"), str(path), version
    git = os.environ.get("PARITY_TRITON_ASCEND_GIT")
    if not git or not Path(git).is_dir():
        return None
    show = subprocess.run(["git", "--git-dir", git, "show", f"HEAD:{rel}"], capture_output=True, text=True,
                          check=False)
    head = subprocess.run(["git", "--git-dir", git, "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    if show.returncode != 0:
        return None
    # the text is not in a file here: linecache gets it under this name, so inspect (Triton) finds it
    name = f"{git}@{head.stdout.strip()[:12]}/{rel}"
    import linecache

    linecache.cache[name] = (len(show.stdout), None, show.stdout.splitlines(keepends=True), name)
    return show.stdout, name, f"git {head.stdout.strip()}"


def unavailable() -> str | None:
    return None if _source(GATHER) is not None else f"no triton-ascend checkout here; {INSTALL}"


def _nested(tree: ast.Module, outer: str, names: tuple[str, ...]) -> list[ast.stmt]:
    """The definitions `names` inside function `outer`, with their line numbers in the file."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == outer:
            found = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name in names]
            if {n.name for n in found} == set(names):
                return found
    raise LookupError(f"{GATHER} has no {', '.join(names)} inside {outer}(): the checkout differs from the one "
                      f"this spec was written against (Ascend/triton-ascend eeb030e7)")


def gather() -> dict[str, Any]:
    """{"kernel": gather_kernel, "launch": triton_gather}, compiled from the checkout's test file."""
    if "gather" not in _LOADED:
        found = _source(GATHER)
        if found is None:
            raise RuntimeError(unavailable())
        text, filename, version = found
        try:
            body = _nested(ast.parse(text), "test_gather", ("gather_kernel", "triton_gather"))
            import triton
            import triton.language as tl

            module = types.ModuleType(PACKAGE)
            module.__version__ = version  # type: ignore[attr-defined]  # what an issue draft names
            sys.modules.setdefault(PACKAGE, module)
            scope: dict[str, Any] = {"__name__": PACKAGE, "triton": triton, "tl": tl, "torch": torch}
            exec(compile(ast.Module(body=body, type_ignores=[]), filename, "exec"), scope)
        except Exception as exc:  # the kernel does not load here: every case says why
            _LOADED["gather"] = f"loading {GATHER}: {type(exc).__name__}: {exc}"
        else:
            _LOADED["gather"] = {"kernel": scope["gather_kernel"], "launch": scope["triton_gather"]}
    loaded = _LOADED["gather"]
    if isinstance(loaded, str):
        raise ImportError(loaded)
    return loaded


def _kernel() -> Any:
    try:
        return gather()["kernel"]
    except (ImportError, RuntimeError):
        return "triton-ascend:test_general_gather/gather_kernel"


# --- the test's 2-D cases: (src shape, indices shape, axis), fp32 as its torch.randn --------------------

CASES = [([2, 2], [4, 2], 0), ([3, 3], [1, 3], 0), ([3, 4], [4, 4], 0), ([4, 4], [8, 4], 0),
         ([4, 32], [4, 16], 1), ([4, 64], [4, 32], 1), ([128, 64], [128, 128], 1)]
_ALL = [c for s, i, a in CASES for c in product(src=[tuple(s)], idx=[tuple(i)], axis=[a], dtype=["fp32"])]


def _inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """As the test makes them: src ~ N(0, 1), indices uniform over the gathered axis (int64)."""
    src = torch.randn(p["src"], generator=gen, dtype=torch.float32)
    idx = torch.randint(0, p["src"][p["axis"]], p["idx"], generator=gen, dtype=torch.int64)
    return {"src": src, "idx": idx}


def _launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"out": gather()["launch"](inputs["src"], p["axis"], inputs["idx"])}


def _reference(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"out": torch.gather(inputs["src"], p["axis"], inputs["idx"])}


LIBRARY = TRITON_ASCEND_UT  # identity, tracker and tier needs: libraries/adapters.py
TEST_UB_BYTES = 98304 * 2  # the test's TestUtils.ub_size (test_common.py)


def _the_test_skips(p: Params) -> bool:
    """The test's own early return: `get_dtype_size('int32') * prod(src.shape) >= ub_size / 8`."""
    return 4 * p["src"][0] * p["src"][1] >= TEST_UB_BYTES / 8


SKIPPED_BY_ITS_TEST = tuple(
    KnownDivergence(backend, reason="the test returns early for this case itself ('mem overflow': its blocks are "
                    "the problem's extents and overflow the unified buffer)", link=f"{REPO}/blob/main/{GATHER}",
                    applies=_the_test_skips, expected_by="triton-ascend's own test_general_gather.py")
    for backend in ("ascend-compile", "ascend"))

SPECS = [
    KernelSpec(
        name="ta_ut_gather", family="triton_ascend_ut", kernel=_kernel(), launch=_launch, reference=_reference,
        cases=by_level(_ALL), make_inputs=_inputs, unavailable=unavailable, timed=False,
        known_divergences=SKIPPED_BY_ITS_TEST,
        tolerance={"fp32": Tolerance(rtol=0.0, atol=0.0, reason="a gather copies values: exact, as the test's "
                                     "assert_close(rtol=0, atol=0)")},
        doc="triton-ascend's test_general_gather kernel: one program, block sizes = problem sizes"),
]
