"""vllm-ascend (github.com/vllm-project/vllm-ascend): its own Triton kernels at the shapes its NPU tests name.

Loaded from a checkout named by PARITY_VLLM_ASCEND (a directory holding `vllm_ascend/`), never copied. These
are the kernels whose real-NPU verdicts data/npu-published/vllm-ascend-triton-tests.json records: four its
tests run (a top-k log-softmax at BLOCK_SIZE 1024, the sampler's temperature, l2norm, muls_add) and two they
skip on the NPU (the same log-softmax kernel behind `compute_token_logprobs`, BLOCK_SIZE 12944: "UB overflow";
the penalties' `_bincount_kernel`: "atomic_or operator hangs"). Each case is a shape the test names.

The kernel modules import vLLM only for `vllm.triton_utils` (triton and tl), `vllm.logger` and one output
type, and vllm-ascend's `ops/triton/triton_utils.py`, whose core counts come from torch_npu's device
properties. Where vLLM is not installed those are registered as stand-ins (the same triton and tl, a
logger, an empty type; the counts the 910B3 reports, 20 AI cores and 40 vector cores: parity's Ascend target,
parity/backends/ascend/arch.py), and vllm-ascend's parent packages as bare packages (their `__init__`s
import the engine). References are ours, in fp64.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from libraries._load import Library, bare_module
from libraries.adapters import VLLM_ASCEND
from libraries.pins import SNAPSHOTS, snapshot_version
from parity import KernelSpec, Tolerance, nan_empty, randn
from parity.cases import by_level, product
from parity.spec import DTYPES, Case

REPO = "https://github.com/vllm-project/vllm-ascend"
COMMIT = SNAPSHOTS["vllm_ascend"]
ENV = "PARITY_VLLM_ASCEND"
INSTALL = (f"git clone {REPO} <dir> && git -C <dir> checkout {COMMIT[:10]}; then {ENV}=<dir> (the directory "
           "holding vllm_ascend/)")
BARE = ("vllm_ascend", "vllm_ascend.ops", "vllm_ascend.ops.triton", "vllm_ascend.ops.triton.fla",
        "vllm_ascend.worker", "vllm_ascend.worker.v2", "vllm_ascend.worker.v2.sample")
SAMPLE = "vllm_ascend.worker.v2.sample"
# the 910B3's counts (parity/backends/ascend/arch.py), what init_device_properties_triton reads on that NPU
AI_CORES, VECTOR_CORES = 20, 40
LIB = Library("vllm_ascend", INSTALL)
Params = Mapping[str, Any]


def checkout() -> Path | None:
    root = os.environ.get(ENV)
    return Path(root) if root and (Path(root) / "vllm_ascend").is_dir() else None


def unavailable() -> str | None:
    if checkout() is None:
        where = f" ({ENV}={os.environ[ENV]} holds no vllm_ascend/)" if os.environ.get(ENV) else ""
        return f"vllm-ascend's checkout is not set{where}; {INSTALL}"
    _stand_ins()
    return None


def _stand_ins() -> None:
    """Bare vllm-ascend parents and, where vLLM is absent, the few vLLM names the kernel modules import."""
    root = checkout()
    if root is None or BARE[-1] in sys.modules:
        return
    import triton
    import triton.language as tl

    if "vllm" not in sys.modules and importlib.util.find_spec("vllm") is None:
        bare_module("vllm", None)
        utils = bare_module("vllm.triton_utils", None)
        utils.triton, utils.tl, utils.HAS_TRITON = triton, tl, True  # type: ignore[attr-defined]
        bare_module("vllm.logger", None).logger = logging.getLogger("vllm")  # type: ignore[attr-defined]
        bare_module("vllm.v1", None)
        # only compute_topk_logprobs (not run here) builds one
        bare_module("vllm.v1.outputs", None).LogprobsTensors = type("LogprobsTensors", (), {})  # type: ignore[attr-defined]
    for name in BARE:
        bare_module(name, root.joinpath(*name.split(".")))
    # the real module reads torch_npu's device properties and resolves triton-ascend-only ops at import
    cores = bare_module("vllm_ascend.ops.triton.triton_utils", None)
    cores.init_device_properties_triton = lambda: None  # type: ignore[attr-defined]
    cores.get_aicore_num = lambda: AI_CORES  # type: ignore[attr-defined]
    cores.get_vectorcore_num = lambda: VECTOR_CORES  # type: ignore[attr-defined]
    # triton-ascend's slice ops, from tl as the real module falls back to (triton-ascend 3.2 has them there); on
    # an upstream Triton they stay absent, and a kernel module importing them fails to import, as it would there
    for name in ("insert_slice", "extract_slice", "get_element"):
        if hasattr(tl, name):
            setattr(cores, name, getattr(tl, name))
    # a checkout may be copied without .git: name the commit the specs were checked against
    sys.modules["vllm_ascend"].__version__ = snapshot_version("vllm_ascend")  # type: ignore[attr-defined]


def kernels(*paths: str) -> Any:
    if unavailable():
        return f"vllm_ascend:{'+'.join(p.split(':')[1] for p in paths)}"
    return LIB.kernels(*paths)


def op(path: str) -> Any:
    _stand_ins()
    return LIB.op(path)


def _next_pow2(n: int) -> int:
    return 1 << (n - 1).bit_length()


# --- top-k log-softmax: the kernel at the test's BLOCK_SIZE, and behind compute_token_logprobs --------------

def _logprob_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    return {"logits": randn((p["B"], p["V"]), p["dtype"], gen),
            "ids": torch.randint(0, p["V"], (p["B"], p["K"]), generator=gen, dtype=torch.int64)}


def _log_softmax_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """As test_log_softmax.py launches it: BLOCK_SIZE 1024, one program per row."""
    logits, ids = inputs["logits"], inputs["ids"]
    out = nan_empty((p["B"], p["K"]), torch.float32, logits.device)
    op(f"{SAMPLE}.logprob:_topk_log_softmax_kernel")[(p["B"],)](
        out, logits, logits.stride(0), ids, p["K"], p["V"], BLOCK_SIZE=1024, PADDED_TOPK=max(_next_pow2(p["K"]), 2))
    return {"logprobs": out}


def _token_logprobs_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """vllm-ascend's own wrapper: BLOCK_SIZE 12944 and multibuffer=False, the launch its test skips."""
    return {"logprobs": op(f"{SAMPLE}.logprob:compute_token_logprobs")(inputs["logits"], inputs["ids"])}


def _logprob_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"logprobs": inputs["logits"].log_softmax(-1).gather(1, inputs["ids"])}


# --- the penalties' bincount: a bit mask by atomic_or, counts by atomic_add --------------------------------

def _bincount_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """test_bincount.py's tensors: 64 requests, one token row (request 63), lengths below 10."""
    def ints(shape: tuple[int, ...], high: int) -> torch.Tensor:
        return torch.randint(0, high, shape, generator=gen, dtype=torch.int32)

    return {"mapping": torch.tensor([p["req"]], dtype=torch.int32), "tokens": ints((64, p["T"]), 10),
            "prompt_len": ints((64,), 10), "prefill_len": ints((64,), 10),
            "mask": ints((64, 4748), 2**20), "counts": ints((64, p["V"]), 7)}


def _bincount_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    """As test_bincount.py launches it: the rows of `mapping` zeroed first, grid (1, cdiv(10, 1024))."""
    mask, counts, rows = inputs["mask"].clone(), inputs["counts"].clone(), inputs["mapping"].long()
    mask[rows], counts[rows] = 0, 0
    tokens = inputs["tokens"]
    op(f"{SAMPLE}.penalties:_bincount_kernel")[(1, 1)](
        inputs["mapping"], tokens, tokens.stride(0), inputs["prompt_len"], inputs["prefill_len"], mask,
        mask.stride(0), counts, counts.stride(0), BLOCK_SIZE=1024)
    return {"mask": mask, "counts": counts}


def _bincount_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    mask, counts = inputs["mask"].clone().long(), inputs["counts"].clone().long()
    for req in inputs["mapping"].tolist():
        mask[req], counts[req] = 0, 0
        prompt, prefill = int(inputs["prompt_len"][req]), int(inputs["prefill_len"][req])
        if prefill == 0:  # the kernel returns before reading the prompt (the test draws both lengths apart)
            continue
        for pos in range(prompt):  # the whole prompt, even past prefill_len
            token = int(inputs["tokens"][req, pos])
            mask[req, token // 32] |= 1 << (token % 32)
        for pos in range(prompt, prefill):
            counts[req, int(inputs["tokens"][req, pos])] += 1
    return {"mask": mask.to(torch.float64), "counts": counts.to(torch.float64)}


# --- the sampler's temperature, in place --------------------------------------------------------------------

def _temperature_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """tests/ut/sample/a2/test_gumbel_sampling.py: temperatures in [0.2, 2.0), two rows at 0.0 and 1.0 (kept)."""
    temperature = torch.rand((p["T"],), generator=gen) * 1.8 + 0.2
    temperature[: min(2, p["T"])] = torch.tensor([0.0, 1.0])[: min(2, p["T"])]
    return {"logits": randn((p["T"], p["V"]), "fp32", gen), "temperature": temperature,
            "mapping": torch.randint(0, p["T"], (p["T"],), generator=gen, dtype=torch.int32)}


def _temperature_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    logits = inputs["logits"].clone()
    op(f"{SAMPLE}.gumbel:apply_temperature")(logits, inputs["mapping"], inputs["temperature"])
    return {"logits": logits}


def _temperature_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    temp = inputs["temperature"][inputs["mapping"].long()]
    keep = (temp == 0.0) | (temp == 1.0)
    return {"logits": torch.where(keep[:, None], inputs["logits"], inputs["logits"] / temp[:, None])}


# --- l2norm (fla's, vllm-ascend's port) and muls_add --------------------------------------------------------

def _l2norm_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["B"], p["T"], p["H"], p["D"]), p["dtype"], gen)}


def _l2norm_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"y": op("vllm_ascend.ops.triton.fla.l2norm:l2norm_fwd")(inputs["x"])}


def _l2norm_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["x"]
    return {"y": x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + 1e-6)}


def _muls_add_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    return {"x": randn((p["M"], p["N"]), p["dtype"], gen), "y": randn((p["M"], p["N"]), p["dtype"], gen)}


def _muls_add_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"out": op("vllm_ascend.ops.triton.muls_add:muls_add_triton")(inputs["x"], inputs["y"], p["scale"])}


def _muls_add_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    return {"out": inputs["x"] * p["scale"] + inputs["y"]}


# --- swiglustep, min_p, clear_ssm_states ---------------------------------------------------------------------

def _swiglustep_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    if p["pattern"] == "golden":  # test_swiglustep_triton_clamps_to_golden_value: gate +100, up -100
        x = torch.full((p["M"], p["C"]), 100.0)
        x[:, p["C"] // 2:] = -100.0
        return {"x": x.to(DTYPES[p["dtype"]])}
    cols = 2 * p["C"] if p["pattern"] == "strided" else p["C"]
    return {"x": randn((p["M"], cols), p["dtype"], gen)}


def _swiglustep_x(inputs: Params, p: Params) -> torch.Tensor:
    # _handles_non_contiguous_input: every other column of a twice-as-wide tensor, which the wrapper copies
    x: torch.Tensor = inputs["x"]
    return x[:, ::2] if p["pattern"] == "strided" else x


def _swiglustep_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    op_ = op("vllm_ascend.ops.triton.activation.swiglustep:swiglustep_forward_triton")
    return {"out": op_(_swiglustep_x(inputs, p), limit=p["limit"])}


def _swiglustep_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x, half = _swiglustep_x(inputs, p), p["C"] // 2
    gate = torch.nn.functional.silu(x[:, :half]).clamp(max=p["limit"])
    return {"out": gate * x[:, half:].clamp(-p["limit"], p["limit"])}


def _min_p_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    """The test's logits, rows reversed by the mapping and min_p in [0.01, 0.5]; logits on a 1/8 grid and
    log(min_p) midway between grid points, so no logit lies within rounding of a row's threshold."""
    steps = torch.randint(5, 37, (p["T"],), generator=gen)
    return {"logits": (torch.randn((p["T"], p["V"]), generator=gen) * 8).round() / 8,
            "mapping": torch.arange(p["T"] - 1, -1, -1, dtype=torch.int32),
            "min_p": torch.exp(-(steps + 0.5) / 8).to(torch.float32)}


def _min_p_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    logits = inputs["logits"].clone()  # filtered in place
    op(f"{SAMPLE}.min_p:apply_min_p")(logits, inputs["mapping"], inputs["min_p"])
    return {"logits": logits}


def _min_p_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    logits, min_p = inputs["logits"], inputs["min_p"][inputs["mapping"].long()]
    threshold = logits.max(-1, keepdim=True).values + min_p.log()[:, None]
    return {"logits": torch.where(logits < threshold, float("-inf"), logits)}


def _ssm_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    shape = tuple(int(n) for n in p["shape"].split("x"))
    return {"states": randn(shape, p["dtype"], gen),
            "has_initial": torch.tensor([True, False, True, False, False, True][: shape[0]])}


def _ssm_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    states = inputs["states"].clone()  # zeroed in place
    op("vllm_ascend.ops.triton.fla.utils:clear_ssm_states")(states, inputs["has_initial"])
    return {"states": states}


def _ssm_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    states = inputs["states"].clone()
    states[~inputs["has_initial"]] = 0
    return {"states": states}


def _gating_inputs(p: Params, gen: torch.Generator) -> dict[str, Any]:
    h, t = p["H"], p["T"]
    return {"A_log": randn((h,), "fp16", gen), "dt_bias": randn((h,), "fp16", gen), "a": randn((t, h), "fp16", gen),
            "b": randn((t, h), "fp16", gen)}


def _gating_launch(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    g, beta = op("vllm_ascend.ops.triton.fused_gdn_gating:fused_gdn_gating_patch")(
        inputs["A_log"], inputs["a"], inputs["b"], inputs["dt_bias"], beta=1.0, threshold=20.0)
    return {"g": g, "beta": beta}


def _gating_ref(inputs: Params, p: Params) -> dict[str, torch.Tensor]:
    x = inputs["a"] + inputs["dt_bias"]
    softplus = torch.where(x <= 20.0, torch.log1p(torch.exp(x)), x)
    return {"g": (-torch.exp(inputs["A_log"]) * softplus)[None], "beta": torch.sigmoid(inputs["b"])[None]}


# --- specs --------------------------------------------------------------------------------------------------

# a log-sum-exp over a vocabulary row (up to 151,936 terms) in fp32, in another order than the fp64 one
_LSE = Tolerance(rtol=1e-5, atol=1e-4, reason="an fp32 sum of up to 151,936 exponentials in another order than the "
                "fp64 reference")
ROW_TOL = {"fp32": _LSE, "fp16": _LSE}  # fp16 logits are upcast to fp32 before the sum
# the kernel multiplies in the input dtype and rounds once more on the add
MULS_TOL = {"fp16": Tolerance(rtol=2e-3, atol=2e-3, reason="x * scale rounded to fp16 before the add"),
            "bf16": Tolerance(rtol=1.6e-2, atol=1.6e-2, reason="x * scale rounded to bf16 before the add")}


def _rows(names: tuple[str, ...], rows: tuple[tuple[Any, ...], ...], **fixed: Any) -> list[Case]:
    """The cases a test lists as tuples (not a product), each with the fixed axes."""
    return [c for row in rows for c in product(**{n: [v] for n, v in zip(names, row, strict=True)},
                                               **{k: [v] for k, v in fixed.items()})]


def _spec(name: str, kernel: Any, **fields: Any) -> KernelSpec:
    return KernelSpec(name=f"vllm_ascend_{name}", family="vllm_ascend", kernel=kernel, unavailable=unavailable,
                      **fields)


LIBRARY = VLLM_ASCEND  # identity, tracker and tier needs: libraries/adapters.py
LOGPROB = f"{SAMPLE}.logprob:_topk_log_softmax_kernel"

SPECS = [
    _spec("topk_log_softmax", kernels(LOGPROB), launch=_log_softmax_launch, reference=_logprob_ref,
          make_inputs=_logprob_inputs, tolerance=ROW_TOL,
          cases=by_level(product(B=[24], V=[151936], K=[8], dtype=["fp32"]),
                         _rows(("B", "V", "K"), ((48, 102400, 50), (96, 102400, 1), (24, 151936, 8)), dtype="fp32")),
          doc="test_log_softmax.py: log-softmax over a vocabulary row, gathered at top-k ids (BLOCK_SIZE 1024)"),
    _spec("compute_token_logprobs", kernels(LOGPROB), launch=_token_logprobs_launch, reference=_logprob_ref,
          make_inputs=_logprob_inputs, tolerance=ROW_TOL,
          cases=by_level(product(B=[16], V=[32000], K=[10], dtype=["fp32"]),
                         # _deterministic's three; _dtypes' (8, 32000, 10) in fp32 and fp16; _edge_cases' (1, V, 1)
                         # and (4, V, 5); _kernel's largest top-k (64, PADDED_TOPK 64) at a batch it may draw
                         _rows(("B", "V", "K"), ((16, 32000, 10), (32, 50257, 5), (64, 128256, 20), (8, 32000, 10),
                                                (1, 151936, 1), (4, 151936, 5), (5, 151936, 64)), dtype="fp32")
                         + _rows(("B", "V", "K"), ((8, 32000, 10),), dtype="fp16")),
          doc="test_compute_token_logprobs.py (skipped on the NPU: UB overflow): the same kernel at BLOCK_SIZE "
              "12944, multibuffer=False"),
    _spec("bincount", kernels(f"{SAMPLE}.penalties:_bincount_kernel"), launch=_bincount_launch,
          reference=_bincount_ref, make_inputs=_bincount_inputs,
          cases=by_level(product(req=[63], T=[40960], V=[151936]), product(req=[63], T=[40960], V=[151936])),
          doc="test_bincount.py (skipped on the NPU: atomic_or hangs): a prompt bit mask by tl.atomic_or, "
              "output token counts by tl.atomic_add"),
    _spec("apply_temperature", kernels(f"{SAMPLE}.gumbel:_temperature_kernel"), launch=_temperature_launch,
          reference=_temperature_ref, make_inputs=_temperature_inputs,
          cases=by_level(product(T=[8], V=[32000]),
                         # the A2 unit test's four; test_temperature.py's other vocabularies (its batch is drawn)
                         _rows(("T", "V"), ((1, 32000), (48, 102400), (64, 151936), (5, 50257), (5, 65024),
                                            (5, 128256)))),
          doc="tests/ut/sample/a2 (A2 PR CI): logits / temperature in place, BLOCK_SIZE 44032, multibuffer=False"),
    _spec("l2norm", kernels("vllm_ascend.ops.triton.fla.l2norm:l2norm_fwd_kernel2_loop"), launch=_l2norm_launch,
          reference=_l2norm_ref, make_inputs=_l2norm_inputs, tolerance=ROW_TOL,
          cases=by_level(product(B=[1], T=[63], H=[1], D=[60], dtype=["fp32"]),
                         _rows(("B", "T", "H", "D"), ((1, 63, 1, 60), (2, 500, 4, 64), (2, 1000, 2, 100),
                                                    (3, 1024, 4, 128)), dtype="fp32")),
          doc="test_l2norm.py: rows of N = D (not a power of two) in chunks of 69 rows over 40 programs"),
    _spec("muls_add", kernels("vllm_ascend.ops.triton.muls_add:muls_add_kernel"), launch=_muls_add_launch,
          reference=_muls_add_ref, make_inputs=_muls_add_inputs, tolerance=MULS_TOL,
          cases=by_level(_rows(("M", "scale", "dtype"), ((1, 1.25, "fp16"),), N=2048),
                         _rows(("M", "scale", "dtype"), ((1, 1.25, "fp16"), (4000, 0.75, "fp16"), (4, 1.0, "bf16")),
                               N=2048)),
          doc="test_muls_add.py: x * scale + y, a grid-stride loop over min(blocks, 40) programs"),
    _spec("swiglustep", kernels("vllm_ascend.ops.triton.activation.swiglustep:_swiglustep_kernel"),
          launch=_swiglustep_launch, reference=_swiglustep_ref, make_inputs=_swiglustep_inputs,
          cases=by_level(_rows(("M", "C", "limit", "dtype"), ((1, 2560, 7.0, "fp16"),), pattern="randn"),
                         # _correctness' five ((4, 128, 2560) as 512 rows), _golden_value's, _non_contiguous'
                         _rows(("M", "C", "limit", "dtype"), ((128, 2560, 7.0, "fp16"), (4000, 2560, 7.0, "bf16"),
                                                              (512, 2560, 7.0, "bf16"), (8, 4096, 1.0, "fp16")),
                               pattern="randn")
                         + _rows(("M", "C", "limit", "dtype", "pattern"), ((1, 32, 7.0, "fp16", "golden"),
                                                                           (4, 2560, 7.0, "bf16", "strided")))),
          doc="test_swiglustep.py: silu(gate) clamped above, times up clamped both ways; one row of 2N per loop "
              "step, split by triton-ascend's extract_slice"),
    _spec("min_p", kernels(f"{SAMPLE}.min_p:_min_p_kernel"), launch=_min_p_launch, reference=_min_p_ref,
          make_inputs=_min_p_inputs,
          cases=by_level(product(T=[1], V=[32000]),
                         _rows(("T", "V"), ((1, 32000), (48, 102400), (96, 102400), (24, 151936)))),
          doc="test_min_p.py: logits below max + log(min_p) set to -inf in place, rows over min(T, 40) programs"),
    _spec("clear_ssm_states", kernels("vllm_ascend.ops.triton.fla.utils:_clear_ssm_states_kernel"),
          launch=_ssm_launch, reference=_ssm_ref, make_inputs=_ssm_inputs,
          cases=by_level(product(shape=["6x3x5x7"], dtype=["bf16"]), product(shape=["6x3x5x7", "4x5x25x41"],
                                                                             dtype=["bf16"])),
          doc="test_clear_ssm_states.py: the rows without an initial state zeroed in place"),
    _spec("fused_gdn_gating", kernels("vllm_ascend.ops.triton.fused_gdn_gating:fused_gdn_gating_kernel"),
          launch=_gating_launch, reference=_gating_ref, make_inputs=_gating_inputs,
          tolerance={"fp16": Tolerance(rtol=1e-3, atol=1e-5, reason="g is fp32 from fp16 inputs: exp and log1p in "
                                       "fp32; beta is sigmoid rounded once to fp16")},
          cases=by_level(product(T=[37], H=[8], dtype=["fp16"])),
          doc="test_fused_gdn_gating.py: GDN's gate, -exp(A_log) * softplus(a + dt_bias), and sigmoid(b)"),
]
