"""mojo_opset (github.com/XPU-Forces/mojo_opset): its Atlas A2 (910B) Triton kernels, op by op.

The ops are called through their `*_impl` entry functions in `mojo_opset/backends/ttx/kernels/npu/a2`,
as mojo's ttx backend calls them. References are ours, in fp64; each op's own torch golden (the
"torch" backend every mojo core op registers) is a second reference: where it disagrees with ours,
the case says so and which of the two the kernel follows.

`import mojo_opset` imports every backend and picks its kernels by the device it finds (NPU, MLU,
Iluvatar; else "meta_device", which has no kernels). To reach the A2 kernels on any tier, the parent
packages' `__init__`s are skipped (their directories are registered as bare packages) and the kernel
modules are imported directly, as mojo's NPU dispatch imports them.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from libraries._load import Library
from libraries.pins import snapshot_version
from parity import KernelSpec, Tolerance, randn
from parity.cases import by_level, product

REPO = "https://github.com/XPU-Forces/mojo_opset"
INSTALL = f"pip install --no-deps git+{REPO} einops pydantic   (or PYTHONPATH=<checkout>)"
# one Library per kernel module: a module that fails to import here (a finding of its own) must not
# hide the others, and Library remembers its first import failure
_LIBS: dict[str, Library] = {}
A2 = "mojo_opset.backends.ttx.kernels.npu.a2"
# parents whose __init__ would pick a device backend at import: registered as bare packages
BARE = ("", ".backends", ".backends.ttx", ".backends.ttx.kernels", ".backends.ttx.kernels.npu", ".utils", ".core",
        ".core.operators")
Params = Mapping[str, Any]
EPS = 1e-6
ROW_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason="a row reduction over up to 8192 fp32 terms in "
                             "another order than the fp64 one"),
           "bf16": Tolerance(rtol=1.6e-2, atol=1e-2, reason="bf16 output rounding (eps 7.8e-3) of values up to "
                             "a few units after normalisation")}
CE_TOL = {"fp32": Tolerance(rtol=1e-4, atol=1e-4, reason="a log-sum-exp over V=4096..32000 fp32 logits from an "
                            "fp32 matmul (tf32/hf32 where the backend chooses it)")}


def _bare_packages() -> None:
    """Register mojo_opset's parent packages without running their __init__ (see the module doc)."""
    if "mojo_opset.backends.ttx.kernels.npu" in sys.modules:
        return
    found = importlib.util.find_spec("mojo_opset")
    if found is None or not found.submodule_search_locations:
        return
    root = Path(next(iter(found.submodule_search_locations)))
    for suffix in BARE:
        name = "mojo_opset" + suffix
        module = types.ModuleType(name)
        module.__path__ = [str(root.joinpath(*suffix.split(".")[1:]))]
        module.__package__ = name
        module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        module.__spec__.submodule_search_locations = list(module.__path__)
        sys.modules[name] = module
    # the snapshot has no .git and no metadata: name the commit its specs were checked against
    sys.modules["mojo_opset"].__version__ = snapshot_version("mojo_opset")  # type: ignore[attr-defined]


def _unavailable() -> str | None:
    if "mojo_opset" not in sys.modules and importlib.util.find_spec("mojo_opset") is None:
        return f"mojo_opset is not installed here; {INSTALL}"
    _bare_packages()
    return None


def _lib(module: str) -> Library:
    return _LIBS.setdefault(module, Library("mojo_opset", f"--no-deps git+{REPO}"))


def _kernels(module: str, *names: str) -> Any:
    if _unavailable():
        return f"mojo_opset:{'+'.join(names)}"
    return _lib(module).kernels(*(f"{A2}.{module}:{n}" for n in names))


def _op(module: str, name: str) -> Any:
    _bare_packages()
    return _lib(module).op(f"{A2}.{module}:{name}")


def golden(op: str, **init: Any) -> Any:
    """mojo's own torch golden of a core op (its registered "torch" backend), built on the CPU."""
    _bare_packages()
    module, cls_name = op.split(":")
    cls = getattr(_lib(f"core.{module}").module(f"mojo_opset.core.operators.{module}"), cls_name)
    return cls.get_backend_impl("torch")(**init)


# --- inputs, launches, references -------------------------------------------------------------------

def _rows(p: Params, gen: torch.Generator) -> dict[str, Any]:
    m, n, dt = p["M"], p["N"], p["dtype"]
    return {"x": randn((m, n), dt, gen), "y": randn((m, n), dt, gen), "w": randn((n,), dt, gen),
            "b": randn((n,), dt, gen, scale=0.1)}


def _rms_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": _op("rmsnorm", "rmsnorm_infer_impl")(inputs["x"], inputs["w"], EPS)}


def _rms_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    return {"y": x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * inputs["w"]}


def _ln_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": _op("layernorm", "layernorm_infer_impl")(inputs["x"], inputs["w"], inputs["b"], EPS)}


def _ln_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    mean, var = x.mean(-1, keepdim=True), x.var(-1, keepdim=True, unbiased=False)
    return {"y": (x - mean) * torch.rsqrt(var + EPS) * inputs["w"] + inputs["b"]}


def _swiglu_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": _op("swiglu", "swiglu_fwd_impl")(inputs["x"], inputs["y"])}


def _swiglu_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": inputs["x"] * torch.sigmoid(inputs["x"]) * inputs["y"]}


def _silu_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": _op("silu", "silu_fwd_impl")(inputs["x"])}


def _silu_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": inputs["x"] * torch.sigmoid(inputs["x"])}


def _gelu_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": _op("gelu", "gelu_fwd_impl")(inputs["x"])}


def _gelu_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """GELU as mojo's golden defines it (torch's default: the exact, erf form)."""
    x = inputs["x"]
    return {"y": 0.5 * x * (1.0 + torch.erf(x / 2.0 ** 0.5))}


def _rope_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    b, n, s, d, dt = p["B"], p["N"], p["S"], p["D"], p["dtype"]
    inv = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    angles = torch.outer(torch.arange(s, dtype=torch.float64), inv)
    emb = torch.cat([angles, angles], -1)
    return {"q": randn((b, n, s, d), dt, gen), "k": randn((b, n, s, d), dt, gen),
            "cos": emb.cos().to(torch.float32), "sin": emb.sin().to(torch.float32)}


def _rope_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    q, k = _op("rope", "rope_fwd_impl")(inputs["q"], inputs["k"], inputs["cos"], inputs["sin"], head_first=True)
    return {"q": q, "k": k}


def _rope_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    cos, sin = inputs["cos"][None, None], inputs["sin"][None, None]

    def rotate(x: torch.Tensor) -> torch.Tensor:
        half = x.shape[-1] // 2
        return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin
    return {"q": rotate(inputs["q"]), "k": rotate(inputs["k"])}


def _ce_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["BT"], p["H"]), p["dtype"], gen), "w": randn((p["V"], p["H"]), p["dtype"], gen, scale=0.05),
            "target": torch.randint(0, p["V"], (p["BT"],), generator=gen)}


def _ce_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    out = _op("fused_linear_cross_entropy", "fused_linear_cross_entropy_fwd_impl")(
        inputs["x"], inputs["w"], inputs["target"], reduction="mean")
    return {"loss": out[0].reshape(1)}


def _ce_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    logits = inputs["x"] @ inputs["w"].T
    return {"loss": torch.nn.functional.cross_entropy(logits, inputs["target"]).reshape(1)}


def _decode_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """A paged KV cache (blocks [N, Hkv, page, D]) whose blocks are handed out in a shuffled order."""
    lens, page, hkv, d, dt = p["lens"], p["page"], p["Hkv"], p["D"], p["dtype"]
    per_seq = [-(-n // page) for n in lens]
    n_blocks = sum(per_seq) + 2  # two spare blocks nobody owns
    order = torch.randperm(n_blocks, generator=gen)
    tables = torch.zeros(len(lens), max(per_seq), dtype=torch.int32)
    used = 0
    for i, count in enumerate(per_seq):
        tables[i, :count] = order[used:used + count].to(torch.int32)
        used += count
    return {"q": randn((len(lens), p["Hq"], d), dt, gen), "k_cache": randn((n_blocks, hkv, page, d), dt, gen),
            "v_cache": randn((n_blocks, hkv, page, d), dt, gen), "seqlens": torch.tensor(lens, dtype=torch.int32),
            "block_tables": tables}


def _decode_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op = _op("flash_attention", "paged_attention_decode_impl")
    return {"o": op(inputs["q"], inputs["k_cache"], inputs["v_cache"], inputs["seqlens"], inputs["block_tables"],
                    False)}


def _decode_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """Grouped heads as AABB (query head h reads KV head h // (Hq / Hkv)), softmax over the visible tokens."""
    q, page, group = inputs["q"], p["page"], p["Hq"] // p["Hkv"]
    out = torch.zeros_like(q)
    for i, n in enumerate(int(x) for x in inputs["seqlens"]):
        blocks = inputs["block_tables"][i, : -(-n // page)].long()
        k = inputs["k_cache"][blocks].permute(1, 0, 2, 3).reshape(p["Hkv"], -1, p["D"])[:, :n]
        v = inputs["v_cache"][blocks].permute(1, 0, 2, 3).reshape(p["Hkv"], -1, p["D"])[:, :n]
        k, v = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)  # [Hq, n, D]
        scores = torch.einsum("hd,hnd->hn", q[i], k) / p["D"] ** 0.5
        out[i] = torch.einsum("hn,hnd->hd", scores.softmax(-1), v)
    return {"o": out}


# --- mojo's torch golden, the second reference -------------------------------------------------------

def _golden_rms(i: Params, p: Params) -> dict[str, torch.Tensor]:
    g = golden("normalization:MojoRMSNorm", norm_size=p["N"], eps=EPS, dtype=torch.float64)
    g.weight = torch.nn.Parameter(i["w"])
    return {"y": g(i["x"])}


def _golden_ln(i: Params, p: Params) -> dict[str, torch.Tensor]:
    g = golden("normalization:MojoLayerNorm", norm_size=p["N"], eps=EPS, dtype=torch.float64)
    g.weight, g.bias = torch.nn.Parameter(i["w"]), torch.nn.Parameter(i["b"])
    return {"y": g(i["x"])}


GOLDENS = {
    "rmsnorm": _golden_rms, "layernorm": _golden_ln,
    "swiglu": lambda i, p: {"y": golden("activation:MojoSwiGLU")(i["x"], i["y"])},
    "silu": lambda i, p: {"y": golden("activation:MojoSilu")(i["x"])},
    "gelu": lambda i, p: {"y": golden("activation:MojoGelu")(i["x"])},
    "paged_decode": lambda i, p: {"o": golden("attention:MojoPagedDecodeGQA", gqa_layout="AABB")(
        i["q"], i["k_cache"], i["v_cache"], i["seqlens"], i["block_tables"])},
    "rope": lambda i, p: dict(zip(("q", "k"), golden("position_embedding:MojoApplyRoPE")(
        i["q"], i["k"], i["cos"], i["sin"], head_first=True), strict=True)),
}


def golden_check(op: str, reference: Any) -> Any:
    """KernelSpec.extra_check: mojo's golden (in fp64) against our fp64 reference, once the kernel passed.

    A disagreement is reported with the numbers: the kernel matched ours, so the golden is the odd one out
    (or our reference reads the op differently, which the message invites a reader to check)."""
    def check(inputs: Params, outputs: Mapping[str, torch.Tensor], p: Params) -> str | None:
        try:
            gold = GOLDENS[op](inputs, p)
        except Exception as exc:  # the golden itself cannot run: report it, it is the library's own reference
            return f"mojo's torch golden for {op} raised {type(exc).__name__}: {str(exc)[:300]}"
        ours = reference(inputs, p)
        for name, ref in ours.items():
            diff = (gold[name].double() - ref).abs().max().item()
            # a golden may compute in fp32 inside (mojo's attention does its softmax in fp32): agree within that
            if not torch.allclose(gold[name].double(), ref, rtol=1e-5, atol=1e-6):
                to_kernel = (gold[name].double() - outputs[name]).abs().max().item()
                return (f"output {name!r}: mojo's torch golden differs from our fp64 reference by max |d| {diff:.3g}; "
                        f"the kernel agrees with the fp64 reference (and differs from the golden by {to_kernel:.3g})")
        return None
    return check


def _spec(name: str, module: str, kernels: tuple[str, ...], op: str | None = None, **fields: Any) -> KernelSpec:
    extra = golden_check(op, fields["reference"]) if op else None
    return KernelSpec(name=f"mojo_{name}", family="mojo_opset", kernel=_kernels(module, *kernels),
                      unavailable=_unavailable, extra_check=extra, **fields)


def _rows_cases(full_n: list[int]) -> Any:
    return by_level(product(M=[16], N=[1024, 4096], dtype=["fp32"]), product(M=[4096], N=full_n, dtype=["bf16"]))


SPECS = [
    _spec("rmsnorm_infer", "rmsnorm", ("_rmsnorm_infer_small_cols_kernel", "_rmsnorm_infer_kernel"), "rmsnorm",
          launch=_rms_launch, reference=_rms_ref, make_inputs=_rows, tolerance=ROW_TOL,
          cases=_rows_cases([4096, 8192])),
    _spec("layernorm_infer", "layernorm", ("_layernorm_fwd_kernel", "_layernorm_fwd_single_pass_kernel"), "layernorm",
          launch=_ln_launch, reference=_ln_ref, make_inputs=_rows, tolerance=ROW_TOL,
          cases=_rows_cases([4096, 8192])),
    _spec("swiglu_fwd", "swiglu", ("_swiglu_fwd_kernel",), "swiglu", launch=_swiglu_launch, reference=_swiglu_ref,
          make_inputs=_rows, cases=_rows_cases([11008])),
    _spec("silu_fwd", "silu", ("_silu_fwd_kernel", "_silu_fwd_nomask_kernel", "_silu_fwd_nomask_single_kernel"),
          "silu", launch=_silu_launch, reference=_silu_ref, make_inputs=_rows, cases=_rows_cases([11008])),
    _spec("gelu_fwd", "gelu", ("_gelu_fwd_kernel", "_gelu_fwd_nomask_kernel", "_gelu_fwd_nomask_single_kernel"),
          "gelu", launch=_gelu_launch, reference=_gelu_ref, make_inputs=_rows, cases=_rows_cases([11008])),
    _spec("rope_fwd", "rope", ("_rope_inplace_kernel",), "rope", launch=_rope_launch, reference=_rope_ref,
          make_inputs=_rope_inputs,
          cases=by_level(product(B=[1], N=[8], S=[128], D=[128], dtype=["fp32"]),
                         product(B=[1], N=[32], S=[4096], D=[128], dtype=["bf16"]))),
    _spec("paged_attention_decode", "flash_attention", ("paged_decode_kernel",), "paged_decode",
          launch=_decode_launch, reference=_decode_ref, make_inputs=_decode_inputs,
          tolerance={"fp32": Tolerance(rtol=1e-4, atol=1e-5, reason="softmax over up to 4096 keys from fp32 dots "
                                       "(tf32/hf32 where the backend picks it)"),
                     "bf16": Tolerance(rtol=1.6e-2, atol=1e-2, reason="bf16 inputs and output")},
          cases=by_level(product(lens=[(100, 300)], Hq=[8], Hkv=[2], D=[128], page=[128], dtype=["fp32"]),
                         product(lens=[(1, 37, 512, 1000, 2048, 4095, 4096, 3000)], Hq=[32], Hkv=[8], D=[128],
                                 page=[128], dtype=["bf16"]))),
    _spec("fused_linear_cross_entropy_fwd", "fused_linear_cross_entropy", ("_cross_entropy_kernel",),
          launch=_ce_launch, reference=_ce_ref, make_inputs=_ce_inputs, tolerance=CE_TOL,
          cases=by_level(product(BT=[64], H=[256], V=[4096], dtype=["fp32"]),
                         product(BT=[4096], H=[4096], V=[32000], dtype=["fp32"]))),
]
