"""The GDN NPU port (sgl-kernel-npu's Ascend port of fla's GDN forward, as shipped in
huawei-csl/gdn-tri-inverse under `src/gdn_tri_inverse/triton_chunk_gdn/fla`): op by op.

Its entry functions are called as sglang calls them, in the `[B, T, H, K]` layout with natural-log
gates, fixed-length and varlen. The references are ours, in fp64 (libraries/_gdn_ref.py). Its
modules import `sgl_kernel_npu.fla.utils`: where sgl-kernel-npu itself is not installed but
gdn-tri-inverse is (pip or PYTHONPATH), `sgl_kernel_npu.fla` is made an alias of the port's
directory, so the port's files load unchanged. Neither is on the package index (DEVELOPERS.md).
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from libraries import _gdn_ref as ref
from libraries._debug_lint import source_check_launch
from libraries._load import Library
from libraries.adapters import GDN_NPU
from libraries.pins import snapshot_version
from parity import KernelSpec, Tolerance, cu_seqlens, l2_normalized, logsigmoid_of_randn, randn, sigmoid_of_randn
from parity.cases import by_level, product

REPO = "https://github.com/huawei-csl/gdn-tri-inverse"
# the project pins torch 2.8.0 + torch-npu + triton-ascend; --no-deps keeps the tier's own stack
INSTALL = f"pip install --no-deps git+{REPO} einops   (or PYTHONPATH=<checkout>/src)"
PORT = Library("sgl_kernel_npu", f"--no-deps git+{REPO}")
Params = Mapping[str, Any]

RATIO_REASON = ("fla's own criterion for its GDN forward (fla/utils/testing.py assert_close): err_ratio <= 0.005; "
                "dot products take bf16 (or tf32/hf32) operands, so elementwise bounds fail near zero")
RATIO_TOL = {d: Tolerance(rtol=0.0, atol=1e-6, max_err_ratio=0.005, reason=RATIO_REASON) for d in ("bf16", "fp32")}
TRIL_TOL = {"fp32": Tolerance(rtol=0.0, atol=1e-6, max_err_ratio=1e-4, reason="fla's solve_tril criterion "
                              "(fla/utils/testing.py): err_ratio <= 1e-4 for an fp32 inverse by block substitution")}
CUMSUM_TOL = {"fp32": Tolerance(rtol=1e-5, atol=1e-5, reason="an fp32 sum of up to 64 terms in another "
                                "order than the fp64 one: rounding grows past torch's 1.3e-6 default")}


def _alias_port() -> None:
    """Make `sgl_kernel_npu.fla` the port's directory when only gdn-tri-inverse is importable."""
    if "sgl_kernel_npu" in sys.modules or importlib.util.find_spec("sgl_kernel_npu") is not None:
        return
    found = importlib.util.find_spec("gdn_tri_inverse")
    if found is None or not found.submodule_search_locations:
        return
    fla_dir = Path(next(iter(found.submodule_search_locations))) / "triton_chunk_gdn" / "fla"
    if not (fla_dir / "utils.py").is_file():
        return
    root, fla = types.ModuleType("sgl_kernel_npu"), types.ModuleType("sgl_kernel_npu.fla")
    root.__path__, fla.__path__ = [], [str(fla_dir)]  # packages: submodules load from fla_dir
    root.__package__, fla.__package__ = "sgl_kernel_npu", "sgl_kernel_npu.fla"
    root.fla = fla  # type: ignore[attr-defined]
    root.__version__ = snapshot_version("gdn_tri_inverse")  # type: ignore[attr-defined]  # the port's snapshot
    sys.modules.update({"sgl_kernel_npu": root, "sgl_kernel_npu.fla": fla})


def _unavailable() -> str | None:
    _alias_port()
    missing = PORT.unavailable()
    return f"the GDN NPU port is not installed here; {INSTALL}" if missing else None


def _kernels(*names: str) -> Any:
    _alias_port()
    return PORT.kernels(*(f"sgl_kernel_npu.fla.{n}" for n in names))


def _op(path: str) -> Any:
    return PORT.op(f"sgl_kernel_npu.fla.{path}")


# --- inputs: fixed length, or varlen (B = 1) with ragged tails ----------------------------------------

def _lengths(p: Params) -> list[int] | None:
    """seqs=ragged: three sequences with partial last chunks; seqs=empty: one of them is empty."""
    t = p["T"]
    if p.get("seqs", "none") == "none":
        return None
    first = min(t, t // 3 + 5)
    if p["seqs"] == "empty":
        return [first, 0, t - first]
    second = min(t - first, max(t // 3 - 7, 0))  # tiny T (the specialization sweep's T=1): shorter, never < 0
    return [first, second, t - first - second]


def _base(p: Params) -> dict[str, Any]:
    lengths = _lengths(p)
    return {} if lengths is None else {"cu_seqlens": cu_seqlens(lengths).to(torch.int64)}


def _gates(inputs: dict[str, Any], p: Params, gen: torch.Generator) -> torch.Tensor:
    """Chunk-local cumsums of log-sigmoid decays: the g every op after cumsum receives."""
    raw = logsigmoid_of_randn((p["B"], p["T"], p["H"]), "fp32", gen)
    return ref.cumsum({"g": raw, **inputs}, p)["g"]


def _lower(inputs: dict[str, Any], p: Params, gen: torch.Generator, diag: float) -> torch.Tensor:
    """[B, T, H, BT], lower-triangular per chunk (strictly when diag == 0), zero past a chunk's end."""
    a = randn((p["B"], p["T"], p["H"], p["BT"]), "fp32", gen, scale=0.1)
    mask = torch.zeros(p["B"], p["T"], 1, p["BT"], dtype=torch.bool)
    for _, b, bos, eos in ref.sequences(inputs, p["B"], p["T"]):
        for s, e in ref.chunk_ranges(bos, eos, p["BT"]):
            rows = torch.arange(e - s)
            mask[b, s:e, 0, : e - s] = rows[:, None] > rows[None, :]
            if diag:
                mask[b, s:e, 0, : e - s] |= rows[:, None] == rows[None, :]
    a = torch.where(mask, a, 0.0)
    if diag:
        eye = torch.zeros_like(a)
        for _, b, bos, eos in ref.sequences(inputs, p["B"], p["T"]):
            for s, e in ref.chunk_ranges(bos, eos, p["BT"]):
                eye[b, s:e, :, : e - s] += torch.eye(e - s)[:, None, :]
        a = torch.where(mask, a + diag * eye, 0.0)
    return a


def _inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """Every tensor the op named by p['op'] takes, from one generator."""
    b, t, h, dt = p["B"], p["T"], p["H"], p["dtype"]
    inputs = _base(p)
    op = p["op"]
    if op == "cumsum":
        return {**inputs, "g": logsigmoid_of_randn((b, t, h), "fp32", gen)}
    if op == "solve_tril":
        return {**inputs, "A": _lower(inputs, p, gen, 0.0)}
    k = l2_normalized((b, t, h, p["K"]), dt, gen)
    if op == "kkt":
        return {**inputs, "k": k, "beta": sigmoid_of_randn((b, t, h), dt, gen), "g": _gates(inputs, p, gen)}
    if op == "wy":
        return {**inputs, "k": k, "v": randn((b, t, h, p["V"]), dt, gen), "beta": sigmoid_of_randn((b, t, h), dt, gen),
                "g": _gates(inputs, p, gen), "A": _lower(inputs, p, gen, 1.0).to(torch.float32)}
    n = b if "cu_seqlens" not in inputs else len(inputs["cu_seqlens"]) - 1
    g = _gates(inputs, p, gen)
    if op == "h":
        return {**inputs, "k": k, "w": randn((b, t, h, p["K"]), dt, gen, scale=0.1),
                "u": randn((b, t, h, p["V"]), dt, gen), "g": g, "h0": randn((n, h, p["K"], p["V"]), "fp32", gen)}
    lengths = _lengths(p)
    n_chunks = -(-t // p["BT"]) if lengths is None else sum(-(-n // p["BT"]) for n in lengths)
    chunks = (b, n_chunks, h, p["K"], p["V"])
    return {**inputs, "q": l2_normalized((b, t, h, p["K"]), dt, gen), "k": k, "v": randn((b, t, h, p["V"]), dt, gen),
            "h": randn(chunks, dt, gen, scale=0.1), "g": g}


# --- launches: the port's entry functions, as its users call them -------------------------------------

def _cu(inputs: Params) -> Any:
    return inputs.get("cu_seqlens")


def _cumsum_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"g": _op("cumsum:chunk_local_cumsum")(inputs["g"], chunk_size=p["BT"], cu_seqlens=_cu(inputs))}


def _kkt_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op = _op("chunk_scaled_dot_kkt:chunk_scaled_dot_kkt_fwd_npu")
    return {"A": op(inputs["k"], inputs["beta"], g_cumsum=inputs["g"], cu_seqlens=_cu(inputs), chunk_size=p["BT"])}


def _tril_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"Ai": _op("solve_tril:solve_tril_npu")(inputs["A"], cu_seqlens=_cu(inputs))}


def _paral_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """The module's older 16x16 kernel, launched as solve_tril_npu launches its _v3 successor (BT = 16)."""
    a, cu = inputs["A"], _cu(inputs)
    b, t, h, bt = a.shape
    large = 608 * 2  # the port's LARGE_BLOCK_T
    indices = _op("utils:prepare_chunk_indices")(cu, large) if cu is not None else None
    n_t = len(indices) if cu is not None else -(-t // large)
    out = torch.empty(b, t, h, 16, device=a.device, dtype=torch.float32)
    kernel = _op("solve_tril:solve_tril_16x16_kernel_paral")
    kernel[n_t, b * h](A=a, Ad=out, cu_seqlens=cu, chunk_indices=indices, T=t, H=h, BT=bt, LARGE_BLOCK_T=large,
                       num_warps=1, num_stages=4)
    return {"Ai": out}


def _wy_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op = _op("wy_fast:recompute_w_u_fwd_npu")
    w, u = op(inputs["k"], inputs["v"], inputs["beta"], inputs["g"], inputs["A"], _cu(inputs))
    return {"w": w, "u": u}


def _h_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op = _op("chunk_delta_h:chunk_gated_delta_rule_fwd_h_npu")
    h, v_new, ht = op(inputs["k"], inputs["w"], inputs["u"], g=inputs["g"], initial_state=inputs["h0"],
                      output_final_state=True, chunk_size=p["BT"], cu_seqlens=_cu(inputs))
    return {"h": h, "v_new": v_new, "ht": ht}


def _o_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op = _op("chunk_o:chunk_fwd_o_npu")
    return {"o": op(inputs["q"], inputs["k"], inputs["v"], inputs["h"], g=inputs["g"], scale=p["K"] ** -0.5,
                    cu_seqlens=_cu(inputs), chunk_size=p["BT"])}


# --- cases: tiny for the CPU tiers; the shapes sglang serves (B=1, T to 65536, H=32, K=V=128) in full ----

def _cases(op: str, dtypes: tuple[str, ...] = ("fp32", "bf16"), **extra: list[Any]) -> Any:
    quick = product(op=[op], B=[1], T=[100, 128], H=[2], K=[128], V=[128], BT=[64], seqs=["none", "ragged"],
                    dtype=["fp32"], **extra)
    full = (product(op=[op], B=[1], T=[4096, 65536], H=[32], K=[128], V=[128], BT=[64], seqs=["none"],
                    dtype=list(dtypes), **extra)
            + product(op=[op], B=[1], T=[8192], H=[32], K=[128], V=[128], BT=[64], seqs=["ragged", "empty"],
                      dtype=["bf16" if "bf16" in dtypes else "fp32"], **extra))
    return by_level(quick, full)


def _spec(name: str, kernels: tuple[str, ...], **fields: Any) -> KernelSpec:
    return KernelSpec(name=f"gdn_npu_{name}", family="gdn_npu", kernel=_kernels(*kernels), unavailable=_unavailable,
                      make_inputs=fields.pop("make_inputs", _inputs), dynamic_args=fields.pop("dynamic_args", ("T",)),
                      **fields)


# every kernel the port's GDN modules define, for the leftover-debugging scan
ALL_KERNELS = ("cumsum:chunk_local_cumsum_scalar_kernel", "chunk_scaled_dot_kkt:chunk_scaled_dot_kkt_fwd_trans_kernel",
               "solve_tril:solve_tril_16x16_kernel_paral", "solve_tril:solve_tril_16x16_kernel_paral_v3",
               "solve_tril:merge_16x16_to_32x32_inverse_kernel",
               "solve_tril:merge_16x16_to_64x64_inverse_kernel_reorder_all_masked",
               "wy_fast:recompute_w_u_fwd_kernel_npu_kernel",
               "chunk_delta_h:chunk_gated_delta_rule_fwd_kernel_h_blockdim64_npu_kernel",
               "chunk_o:chunk_fwd_kernel_o_npu_kernel")


LIBRARY = GDN_NPU  # identity, tracker and tier needs: libraries/adapters.py

SPECS = [
    _spec("chunk_local_cumsum", ("cumsum:chunk_local_cumsum_scalar_kernel",), launch=_cumsum_launch,
          reference=ref.cumsum, tolerance=CUMSUM_TOL, cases=_cases("cumsum", ("fp32",)),
          out_dims={"g": ("b", "t", "h")}),
    _spec("chunk_scaled_dot_kkt_fwd", ("chunk_scaled_dot_kkt:chunk_scaled_dot_kkt_fwd_trans_kernel",),
          launch=_kkt_launch, reference=ref.kkt, tolerance=RATIO_TOL, cases=_cases("kkt"),
          out_dims={"A": ("b", "t", "h", "j")}),
    _spec("solve_tril", ("solve_tril:solve_tril_16x16_kernel_paral_v3",
                         "solve_tril:merge_16x16_to_32x32_inverse_kernel",
                         "solve_tril:merge_16x16_to_64x64_inverse_kernel_reorder_all_masked"),
          launch=_tril_launch, reference=ref.solve_tril, tolerance=TRIL_TOL,
          cases=by_level(product(op=["solve_tril"], B=[1], T=[128], H=[2], BT=[16, 32, 64], seqs=["none", "ragged"],
                                 dtype=["fp32"]),
                         product(op=["solve_tril"], B=[1], T=[65536], H=[32], BT=[64], seqs=["none"], dtype=["fp32"])
                         + product(op=["solve_tril"], B=[1], T=[8192], H=[32], BT=[64], seqs=["ragged", "empty"],
                                   dtype=["fp32"])),
          out_dims={"Ai": ("b", "t", "h", "j")}),
    _spec("solve_tril_16x16_paral", ("solve_tril:solve_tril_16x16_kernel_paral",), launch=_paral_launch,
          reference=ref.solve_tril, tolerance=TRIL_TOL,
          cases=by_level(product(op=["solve_tril"], B=[1], T=[128], H=[2], BT=[16], seqs=["none"], dtype=["fp32"]),
                         product(op=["solve_tril"], B=[1], T=[65536], H=[32], BT=[16], seqs=["none"],
                                 dtype=["fp32"])),
          out_dims={"Ai": ("b", "t", "h", "j")}),
    _spec("recompute_w_u_fwd", ("wy_fast:recompute_w_u_fwd_kernel_npu_kernel",), launch=_wy_launch,
          reference=ref.recompute_w_u, tolerance=RATIO_TOL, cases=_cases("wy"),
          out_dims={"w": ("b", "t", "h", "k"), "u": ("b", "t", "h", "v")}),
    _spec("chunk_gated_delta_rule_fwd_h", ("chunk_delta_h:chunk_gated_delta_rule_fwd_kernel_h_blockdim64_npu_kernel",),
          launch=_h_launch, reference=ref.delta_h, tolerance=RATIO_TOL, cases=_cases("h"),
          out_dims={"v_new": ("b", "t", "h", "v"), "h": ("b", "c", "h", "k", "v")}),
    _spec("chunk_fwd_o", ("chunk_o:chunk_fwd_kernel_o_npu_kernel",), launch=_o_launch, reference=ref.chunk_o,
          tolerance=RATIO_TOL, cases=_cases("o"), out_dims={"o": ("b", "t", "h", "v")}),
    _spec("leftover_debug", ALL_KERNELS, launch=source_check_launch(lambda: _kernels(*ALL_KERNELS)),
          reference=lambda inputs, p: {"debug_calls": torch.zeros(1, dtype=torch.float64)},
          make_inputs=lambda p, gen: {"x": torch.zeros(1)}, dynamic_args=(),
          cases=by_level(product(scan=["source"])), doc="tl.device_print and other debugging left in the kernels"),
]
