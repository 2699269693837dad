"""hongziqi/fa-test: one flash-attention forward written twice, for Ascend (`npu/`) and for the GPU (`gpu/`).

github.com/hongziqi/fa-test is the autotune example the Ascend porting note names. Its kernels live in
pytest files, not a package: `npu/test_fa_fwd_npu_prof_tune.py` (block pointers, `tl.advance`, HEAD_DIM 256
through an fp32 accumulator in global memory, 48 autotune configs of BLOCK_M x BLOCK_N x bishengir knobs)
and `gpu/test_fa_fwd_gpu_prof_tune.py` (Triton's v3.2.0 fused-attention tutorial with its own configs).

The scripts are loaded from a checkout on PYTHONPATH (a directory holding `npu/` and `gpu/`), never
copied. At import they do what only their author's machine has: `import torch_npu`,
`torch.npu.set_device(0)`, `import pandas` (for their spreadsheet of cases), `os.makedirs` of a results
directory in the working directory, and environment variables for `do_bench`. While a script imports,
parity presents stand-ins for what is missing here (torch_npu, torch.npu, pandas), runs it in a directory
under parity's cache, and puts the environment back; the kernels and launchers are then the script's own.

Their golden, `torch_npu.npu_fusion_attention`, exists only on an NPU; ours is attention in fp64
(reference/attention.py), checked against the torch reference the GPU script writes out (tests/test_fa_test.py).
Both launchers use sm_scale = 0.5, layout [B, N1, S1, D], and need S1 to be a multiple of every BLOCK_M and
BLOCK_N they may pick (neither masks a ragged tail): 512 for the NPU kernel, 128 for the GPU one.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import torch

from libraries.adapters import FA_TEST
from libraries.pins import snapshot_version
from parity import KernelSpec, Peer, Tolerance, randn
from parity.cases import by_level, product
from reference import attention as ref

REPO = "https://github.com/hongziqi/fa-test"
COMMIT = "5d8e928f5f54bd12b72fe613bee0ebde8f553012"
INSTALL = f"git clone {REPO} <dir> && git -C <dir> checkout {COMMIT[:8]}; then PYTHONPATH=<dir>"
SCRIPTS = {"npu": "npu/test_fa_fwd_npu_prof_tune.py", "gpu": "gpu/test_fa_fwd_gpu_prof_tune.py"}
SM_SCALE = 0.5  # both scripts' test_op_fwd
# the environment variables the scripts set at import (do_bench's method, autotune printing): put back after
SCRIPT_ENV = ("TRITON_BENCH_METHOD", "TRITON_PRINT_AUTOTUNING")
Params = Mapping[str, Any]
_LOADED: dict[str, types.ModuleType | str] = {}


def checkout() -> Path | None:
    """The first PYTHONPATH (sys.path) entry holding both scripts."""
    for entry in sys.path:
        root = Path(entry or ".")
        if all((root / rel).is_file() for rel in SCRIPTS.values()):
            return root
    return None


def unavailable() -> str | None:
    return None if checkout() is not None else f"hongziqi/fa-test is not on PYTHONPATH here; {INSTALL}"


class _Absent:
    """pandas stand-in: the scripts name pd.DataFrame in annotations of functions parity never calls."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("parity loads only fa-test's kernels; its spreadsheet readers need pandas")


def _stand_in(name: str) -> types.ModuleType:
    module = types.ModuleType(name, "parity's stand-in while hongziqi/fa-test imports (libraries/fa_test.py)")
    module.__getattr__ = lambda attr: _Absent  # type: ignore[method-assign]
    return module


@contextlib.contextmanager
def _script_imports() -> Iterator[None]:
    """Stand-ins for torch_npu, torch.npu and pandas where missing, a private working directory, and the
    environment as it was afterwards. A real torch_npu (on an NPU) is used as it is."""
    from parity.compile.torch_device import NoDeviceContext
    from parity.paths import cache_root

    added = [n for n in ("torch_npu", "pandas") if n not in sys.modules and importlib.util.find_spec(n) is None]
    sys.modules.update({n: _stand_in(n) for n in added})
    npu = getattr(torch, "npu", None)
    undo_npu = npu is None or not hasattr(npu, "set_device")
    if npu is None:
        torch.npu = types.SimpleNamespace(device=NoDeviceContext)  # type: ignore[attr-defined]
    if undo_npu:
        saved_set = getattr(torch.npu, "set_device", None)
        torch.npu.set_device = lambda device: None  # type: ignore[attr-defined]
    env = {k: os.environ.get(k) for k in SCRIPT_ENV}
    workdir = cache_root() / "fa-test"  # the scripts' os.makedirs("./test_results_batch") lands here
    workdir.mkdir(parents=True, exist_ok=True)
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        yield
    finally:
        os.chdir(cwd)
        for key, value in env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        for name in added:
            sys.modules.pop(name, None)
        if npu is None:
            del torch.npu  # type: ignore[attr-defined]
        elif undo_npu:
            if saved_set is None:
                del torch.npu.set_device  # type: ignore[attr-defined]
            else:
                torch.npu.set_device = saved_set  # type: ignore[attr-defined]


def script(which: str) -> types.ModuleType:
    """The loaded script `which` ("npu" or "gpu"); raises with the import's own error where it fails here
    (the NPU script's triton.Config(..., multibuffer=...) is a TypeError on upstream Triton)."""
    if which not in _LOADED:
        root = checkout()
        if root is None:
            raise RuntimeError(unavailable())
        name = f"fa_test_{which}"
        spec = importlib.util.spec_from_file_location(name, root / SCRIPTS[which])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        module.__version__ = snapshot_version("fa_test")  # type: ignore[attr-defined]
        try:
            with _script_imports():
                spec.loader.exec_module(module)
        except Exception as exc:  # the script does not import here: every case of it says why
            _LOADED[which] = (f"import error: {SCRIPTS[which]} raised {type(exc).__name__}: {exc} "
                              f"(hongziqi/fa-test {COMMIT[:8]})")
        else:
            sys.modules[name] = module
            _LOADED[which] = module
    loaded = _LOADED[which]
    if isinstance(loaded, str):
        raise ImportError(loaded)
    return loaded


def _kernel(which: str) -> Any:
    """The script's autotuned `_attn_fwd`, or a label where the script is absent or does not import."""
    try:
        return script(which)._attn_fwd
    except (ImportError, RuntimeError):
        return f"fa-test:{which}/_attn_fwd"


# --- inputs, launches, references ---------------------------------------------------------------------

def _inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """q, k, v in the scripts' BNSD layout; N(0, 0.5) as theirs."""
    shape = (p["B"], p["N1"], p["S1"], p["D"])
    return {n: randn(shape, p["dtype"], gen, scale=0.5) for n in ("q", "k", "v")}


def _npu_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    # BM and BN are the launcher's arguments, unused: the Autotuner picks them
    return {"o": script("npu").attention(inputs["q"], inputs["k"], inputs["v"], p["causal"], SM_SCALE, 128, 128)}


def _gpu_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"o": script("gpu").attention(inputs["q"], inputs["k"], inputs["v"], p["causal"], SM_SCALE)}


def reference(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """Attention in fp64, one (batch, head) slab at a time: at S1=8192 one score matrix is 0.5 GB."""
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    o = torch.empty_like(q)
    for b in range(q.shape[0]):
        for h in range(q.shape[1]):
            cut = (slice(b, b + 1), slice(h, h + 1))
            o[cut] = ref.attention(*(x[cut].transpose(1, 2) for x in (q, k, v)), p["causal"], SM_SCALE).transpose(1, 2)
    return {"o": o}


def _sdpa(inputs: Params, p: Params) -> torch.Tensor:
    return torch.nn.functional.scaled_dot_product_attention(inputs["q"], inputs["k"], inputs["v"],
                                                            is_causal=p["causal"], scale=SM_SCALE)


def _our_flash(inputs: Params, p: Params) -> Any:
    """parity's own flash kernel (kernels/attention/flash.py) on the same tensors, in its [B, T, H, D] layout."""
    from kernels.attention.flash import flash_attention_fwd

    q, k, v = (inputs[n].transpose(1, 2).contiguous() for n in ("q", "k", "v"))
    return lambda: flash_attention_fwd(q, k, v, p["causal"], scale=SM_SCALE, grid="per_block")


# --- cases: both masks and every head dim the NPU launcher accepts; S1 a multiple of 512 (see the doc) --

DTYPES = ["fp16", "bf16"]
_QUICK = product(B=[1], N1=[2], S1=[512], D=[64, 128, 256], causal=[False, True], dtype=["fp16"])
# the scripts' active case (4, 32, 2048, 64, fp16) and its commented-out siblings up to S1 = 8192
_FULL = (product(B=[4], N1=[32], S1=[2048], D=[64, 128, 256], causal=[False, True], dtype=DTYPES)
         + product(B=[4], N1=[32], S1=[8192], D=[64], causal=[False, True], dtype=["fp16"]))
PERF_CASES = product(B=[4], N1=[32], S1=[2048, 8192], D=[64], causal=[False, True], dtype=["fp16"])

_RATIO_REASON = ("P is rounded to the value dtype before P·V (both scripts do, as every flash kernel does), so "
                 "elementwise bounds fail where o crosses zero; judged on err_ratio, fla's 0.005 budget for one "
                 "fused forward")
TOL = {dt: Tolerance(rtol=0.0, atol=1e-6, max_err_ratio=0.005, reason=_RATIO_REASON) for dt in DTYPES}


def _flops(p: Params) -> float:
    return 4 * p["B"] * p["N1"] * p["S1"] * p["S1"] * p["D"] * (0.5 if p["causal"] else 1.0)


def _bytes(p: Params) -> float:
    return 4 * p["B"] * p["N1"] * p["S1"] * p["D"] * 2


def _spec(which: str, launch: Any, doc: str) -> KernelSpec:
    return KernelSpec(
        name=f"fa_test_{which}_attn_fwd", family="fa_test", kernel=_kernel(which), launch=launch,
        reference=reference, cases=by_level(_QUICK, _FULL), make_inputs=_inputs, tolerance=TOL,
        unavailable=unavailable, out_dims={"o": ("b", "head", "s", "d")}, bytes=_bytes, flops=_flops,
        baseline=_sdpa, peer=Peer("parity flash_attention_fwd", _our_flash), perf_cases=PERF_CASES,
        perf_reference=reference, bound="compute", doc=doc)


LIBRARY = FA_TEST  # identity, tracker and tier needs: libraries/adapters.py

SPECS = [
    _spec("npu", _npu_launch, "fa-test's Ascend kernel: 48 autotune configs, HEAD_DIM 256 via a global accumulator"),
    _spec("gpu", _gpu_launch, "fa-test's GPU kernel: Triton v3.2.0's fused-attention tutorial, 15 configs"),
]
