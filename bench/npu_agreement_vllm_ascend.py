"""vllm-ascend's Triton kernel tests against parity's verdicts on libraries/vllm_ascend.py (issue 51): printed, never
asserted.

The source (data/npu-published/vllm-ascend-triton-tests.json) gives one verdict per test function of vllm-ascend's
NPU tests; parity's side is its specs of the same kernels at the shapes those tests name, run on the Ascend tiers.
JOINS says which spec cases stand for which test function (a test's own shapes; a drawn batch size is one draw);
a test function not in it is not joined, with the reason UNJOINED gives for its file. parity's verdict per test
function, over its cases and every results dir: ports when all passed, fails when one failed with an owner who must
act, no prediction otherwise (a case missing, skipped, or owned by parity's tier or the environment).

The source's stack is triton-ascend 3.2.2 / CANN 9.1.0 on A2, parity's 3.2.0 on a 910B3 (A2): the same minor
release, so npu_agreement's classifier would call every disagreement a parity defect. BY_HAND gives the class of
the disagreements whose cause the source itself dates (a skip recorded under another NPU-IR, a hang at run time),
printed as such.

    PARITY_VLLM_ASCEND=<checkout> pytest suites --backend=ascend-compile \\
        --kernels libraries.vllm_ascend,libraries.vllm_ascend_sample,libraries.vllm_ascend_rope \\
        --level full --results-dir R/ascend-compile -n 1     # and --backend=ascend-lowered
    python bench/npu_agreement_vllm_ascend.py --results R/ascend-compile R/ascend-lowered
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import npu_agreement as na  # bench/ on the path

DATA = na.DATA / "vllm-ascend-triton-tests.json"
E2E = "tests/e2e/nightly/single_node/ops/singlecard_ops/triton/"
LOGPROB = "vllm_ascend_compute_token_logprobs"
TEMP = "vllm_ascend_apply_temperature"
SWIGLU = "vllm_ascend_swiglustep"
GREEDY = "vllm_ascend_gumbel_sample_greedy"
UT = "tests/ut/sample/a2/test_gumbel_sampling.py::TestGumbelSampling::"


def _ids(keys: str, *rows: tuple[Any, ...], **fixed: Any) -> tuple[str, ...]:
    """Case ids as parity.cases spells them: the row's axes in order, then the fixed ones."""
    names = keys.split(",")
    return tuple(",".join([f"{n}={v}" for n, v in zip(names, row, strict=True)]
                          + [f"{k}={v}" for k, v in fixed.items()]) for row in rows)


# test function -> (spec, the case ids standing for it; () = every case of the spec)
JOINS: dict[str, tuple[str, tuple[str, ...]]] = {
    E2E + "test_log_softmax.py::test_topk_log_softmax_kernel": ("vllm_ascend_topk_log_softmax", ()),
    E2E + "test_compute_token_logprobs.py::test_topk_log_softmax_deterministic":
        (LOGPROB, _ids("B,V,K", (16, 32000, 10), (32, 50257, 5), (64, 128256, 20), dtype="fp32")),
    E2E + "test_compute_token_logprobs.py::test_topk_log_softmax_dtypes":
        (LOGPROB, _ids("B,V,K", (8, 32000, 10), dtype="fp32") + _ids("B,V,K", (8, 32000, 10), dtype="fp16")),
    E2E + "test_compute_token_logprobs.py::test_topk_log_softmax_edge_cases":
        (LOGPROB, _ids("B,V,K", (1, 151936, 1), (4, 151936, 5), dtype="fp32")),
    E2E + "test_compute_token_logprobs.py::test_topk_log_softmax_kernel":
        (LOGPROB, _ids("B,V,K", (5, 151936, 64), dtype="fp32")),
    E2E + "test_bincount.py::test_bincount_kernel": ("vllm_ascend_bincount", ()),
    E2E + "test_temperature.py::test_temperature_kernel": (TEMP, _ids("T,V", (5, 50257), (5, 65024), (5, 128256))),
    UT + "test_apply_temperature":
        (TEMP, _ids("T,V", (1, 32000), (8, 32000), (48, 102400), (64, 151936))),
    E2E + "test_l2norm.py::test_l2norm": ("vllm_ascend_l2norm", ()),
    E2E + "test_muls_add.py::test_muls_add_triton_correctness": ("vllm_ascend_muls_add", ()),
    E2E + "test_swiglustep.py::test_swiglustep_triton_correctness":
        (SWIGLU, _ids("M,C,limit,dtype", (1, 2560, 7.0, "fp16"), (128, 2560, 7.0, "fp16"), (4000, 2560, 7.0, "bf16"),
                      (512, 2560, 7.0, "bf16"), (8, 4096, 1.0, "fp16"), pattern="randn")),
    E2E + "test_swiglustep.py::test_swiglustep_triton_clamps_to_golden_value":
        (SWIGLU, _ids("M,C,limit,dtype,pattern", (1, 32, 7.0, "fp16", "golden"))),
    E2E + "test_swiglustep.py::test_swiglustep_triton_handles_non_contiguous_input":
        (SWIGLU, _ids("M,C,limit,dtype,pattern", (4, 2560, 7.0, "bf16", "strided"))),
    E2E + "test_min_p.py::test_apply_min_p_kernel": ("vllm_ascend_min_p", ()),
    E2E + "test_clear_ssm_states.py::test_clear_ssm_states_ref_parity": ("vllm_ascend_clear_ssm_states", ()),
    E2E + "test_penality.py::TestApplyPenalties::test_apply_penalties": ("vllm_ascend_apply_penalties", ()),
    E2E + "test_fused_gdn_gating.py::test_fused_gdn_gating_310p_parity_precision": ("vllm_ascend_fused_gdn_gating", ()),
    E2E + "test_rope.py::test_rotary_embedding_triton_kernel": ("vllm_ascend_rope", ()),
    UT + "test_gumbel_sample_greedy":
        (GREEDY, _ids("T,R,V", (1, 1, 32000), (4, 4, 32000), (8, 4, 32000), (16, 8, 102400), apply=0)),
    UT + "test_gumbel_sample_greedy_apply_temp_flag_irrelevant":
        (GREEDY, _ids("T,R,V,apply", (4, 4, 32000, 0), (4, 4, 32000, 1))),
}

_NO_SPEC = "loads with the same stand-ins; no spec written yet"
_OPS = ("it calls a torch.ops.vllm op that vllm-ascend's engine registers at import; the kernel module "
        "(ops/triton/linearnorm/) has no spec yet")
_VLLM = "its module (or the test's reference) imports vLLM beyond the stand-ins: "
# per test file (or file::function), why its functions are not joined
UNJOINED: dict[str, str] = {
    "test_causal_conv1d.py::test_causal_conv1d_update_with_batch_gather":
        "the test passes x as (batch, dim, seqlen), while causal_conv1d_update_npu at this commit reads x.shape as "
        "(batch, seqlen, dim): the skipped test no longer matches the op (changed 8 times since the skip of "
        "2026-04-27); its module also imports vllm.v1.attention.backends.utils",
    "test_penality.py::TestApplyPenalties::test_apply_penalties_capable_with_large_shape":
        "its one shape (2048 x 155648 bf16 logits: 637 MB, 2.5 GB as the fp64 reference) is too large for the CPU "
        "tiers here",
    "test_apply_penalties_triton.py": _VLLM + "vllm.utils (platform_utils, torch_utils)",
    "test_apply_top_k_top_p_triton.py": _VLLM + "vllm.utils (math_utils, platform_utils)",
    "test_causal_conv1d.py": _VLLM + "vllm.v1.attention.backends.utils",
    "test_chunk_gated_delta_rule.py": _VLLM + "vllm.distributed, vllm.forward_context, vllm.third_party",
    "test_chunk_kda_npu.py": _VLLM + "vllm.utils.math_utils",
    "test_fused_recurrent_kda_npu.py": _VLLM + "vllm.utils.math_utils",
    "test_compute_slot_mapping.py": _VLLM + "vllm.v1.worker.gpu.block_table",
    "test_copy_and_expand_dflash_dspark.py": _VLLM + "vllm.config and vllm-ascend's proposer (the engine)",
    "test_prepare_inputs_padded.py": _VLLM + "vllm.config, models and vllm-ascend's proposer (the engine)",
    "test_rejection_sample.py": _VLLM + "vllm.v1.sample and vllm-ascend's sampler (the engine)",
    "test_split_qkv_rmsnorm_rope.py": "goes through vllm_ascend.device.device_op, which imports torch_npu",
    "test_postprocess_mamba.py": _VLLM + "vllm.v1 scheduler and mamba utils (a patch of the engine)",
    "test_fused_recurrent_gated_delta_rule.py": "it tests torch.ops._C_ascend.npu_recurrent_gated_delta_rule, a "
                                                "compiled custom op, not a Triton kernel",
    "test_fused_qkvzba_split_reshape_cat.py": _VLLM + "its reference is vLLM's GatedDeltaNetAttention",
    "test_mrope.py": "its kernel is vLLM's own triton_mrope (vllm.model_executor), not vllm-ascend's",
    "test_split_qkv_rmsnorm_mrope.py": _OPS, "test_split_qkv_tp_rmsnorm_rope.py": _OPS,
    "test_gumbel_sampling.py": "no spec written: most draw at a temperature above 0 and check validity, spread or "
                               "run-to-run equality, which an fp64 reference does not give",
    "test_compute_topk_logprobs.py": "loads, but its op returns vLLM's LogprobsTensors (an empty stand-in here): a "
                                     "spec would launch its kernels directly; none written yet",
    "test_bad_words.py": _NO_SPEC, "test_batch_invariant_ops.py": _NO_SPEC,
    "test_batch_memcpy.py": _NO_SPEC, "test_build_local_metadata_triton.py": _NO_SPEC,
    "test_clear_ssm_states.py": _NO_SPEC, "test_compute_slot_mapping_v1.py": _NO_SPEC,
    "test_fused_gdn_gating.py": _NO_SPEC, "test_min_p.py": _NO_SPEC,
    "test_lightning_attn.py": "loads with the same stand-ins and einops (a pip dependency); no spec written yet",
    "test_penality.py": _NO_SPEC, "test_rope.py": _NO_SPEC, "test_swiglustep.py": _NO_SPEC,
    "test_temperature.py": _NO_SPEC, "test_log_softmax.py": _NO_SPEC,
    "test_l2norm.py": _NO_SPEC, "test_muls_add.py": _NO_SPEC,
}

# disagreements whose cause the source dates, by test function: (class, why)
_LOGPROB_WHY = ("vllm-ascend PR #9193 (2026-05-21): after 'the NPU-IR update' (the last CANN and triton-ascend "
                "upgrade before it: CANN 9.0.0, triton-ascend 3.2.1, PR #9085) tl.maximum's NaN handling takes more UB "
                "and this kernel overflowed; the skip came with PR #9465 under 3.2.1. parity's tiers: triton-ascend "
                "3.2.0 with ascendnpu-ir 1.2.0's bishengir; unproven until compiled with 3.2.1 and CANN 9.0.0")
BY_HAND: dict[str, tuple[str, str]] = {
    **{E2E + f"test_compute_token_logprobs.py::{f}": ("version", _LOGPROB_WHY) for f in (
        "test_topk_log_softmax_deterministic", "test_topk_log_softmax_dtypes", "test_topk_log_softmax_edge_cases",
        "test_topk_log_softmax_kernel")},
    E2E + "test_bincount.py::test_bincount_kernel": (
        "hardware", "a hang at run time on the NPU ('atomic_or operator hangs in current npu_ir version', recorded "
        "2026-04-09 under triton-ascend 3.2.0, parity's release): bishengir builds it and the lowering computes it "
        "right on x86; no tier of parity runs the NPU, so a runtime hang is outside what it checks"),
}


def case_verdict(records: dict[str, list[dict[str, Any]]], spec: str, ids: tuple[str, ...]) -> na.ParityVerdict:
    """parity's verdict on one test function: its cases' records in every results dir."""
    owners: set[str] = set()
    messages, silent = [], []
    for tier, recs in records.items():
        mine = [r for r in recs if r.get("kernel") == spec and (not ids or str(r.get("case", "")).split("[")[0] in ids)]
        seen = {str(r.get("case", "")).split("[")[0] for r in mine}
        silent += [f"{tier}: {i} not run" for i in ids if i not in seen] + ([f"{tier}: no record"] if not mine else [])
        for r in mine:
            status, who = r.get("status"), str((r.get("owner") or {}).get("who") or "")
            if status == "passed":
                continue
            if status in na.FAILED and who in na.ACTING_OWNERS:
                owners.add(who)
                messages.append(na.record_message(r))
            else:
                silent.append(f"{tier} {r.get('case')}: {status}" + (f" ({who})" if who else ""))
    if owners:
        return na.ParityVerdict(spec, "fails", tuple(sorted(owners)), tuple(messages))
    if silent:
        return na.ParityVerdict(spec, "none", why="; ".join(silent[:3]))
    return na.ParityVerdict(spec, "ports")


def parity_side(dirs: list[Path]) -> tuple[dict[str, na.ParityVerdict], na.Stack | None]:
    records: dict[str, list[dict[str, Any]]] = {}
    stack = None
    for d in dirs:
        path = d / "results.jsonl"
        recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []
        records[d.name] = [r for r in recs if r.get("suite") in (None, "accuracy", "compile")]
        env = json.loads((d / "env.json").read_text()) if (d / "env.json").is_file() else {}
        gen = next((na.generation(w) for w in str(env.get("target_arch", "")).split() if na.generation(w)), None)
        if stack is None and gen:
            stack = na.Stack(env.get("triton_ascend"), gen)
    return {test: case_verdict(records, spec, ids) for test, (spec, ids) in JOINS.items()}, stack


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--results", type=Path, nargs="+", required=True, help="results dirs of the Ascend tiers")
    args = parser.parse_args()
    source = na.parse_source(json.loads(args.data.read_text(encoding="utf-8")))
    parity, stack = parity_side(args.results)
    agreement = na.join(source, parity, stack)
    for i, row in enumerate(agreement.rows):
        if row.outcome == "not joined" and row.parity is None and row.npu.verdict != "not_run":
            name = row.test.rsplit("/", 1)[-1]
            reason = UNJOINED.get(name) or UNJOINED.get(name.split("::")[0], _NO_SPEC)
            agreement.rows[i] = na.Row(row.test, row.npu, None, row.outcome, why=f"parity has no spec of it: {reason}")
        elif row.cls is not None and row.test in BY_HAND:
            cls, why = BY_HAND[row.test]
            agreement.rows[i] = na.Row(row.test, row.npu, row.parity, row.outcome, cls, f"(by hand) {why}")
    print(na.render(agreement).replace("| " + E2E, "| "))
    c = agreement.counts()
    judged = sum(c[o] for o in (*na.OUTCOMES, "both fail, other reason"))
    by_class = Counter(r.cls for r in agreement.disagreements())
    rest = judged - sum(by_class[k] for k in ("version", "hardware", "harness"))
    agree = c["both port"] + c["both fail, same reason"]
    print(f"\nWith the version, hardware and harness classes set aside ({dict(by_class)}): {agree} of {rest} agree")
    print("\nClassed by hand (the source dates the cause):")
    for why in sorted({r.why for r in agreement.disagreements() if r.why.startswith("(by hand)")}):
        tests = [r.test.replace(E2E, "") for r in agreement.disagreements() if r.why == why]
        print(f"- {', '.join(tests)}: {why}")
    reasons = Counter(r.why for r in agreement.rows if r.outcome == "not joined")
    print("\nNot joined, by reason (test functions):")
    for why, n in reasons.most_common():
        print(f"- {n}: {why}")


if __name__ == "__main__":
    main()
