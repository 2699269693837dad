"""Owners settled by the inputs and values of a case (parity.triage.inputs), with their controls."""

from __future__ import annotations

from parity.triage.decide import decide


def _replayed(recorded_on: str, out: str, backend: str = "ascend-lowered") -> dict:
    return {"backend": backend, "mode": "run", "kernel": "k", "case": "launch=0", "status": "failed",
            "params": {"launch": 0, "out": out}, "reason": "output 'o': 22.7% of elements outside atol + rtol",
            "metrics": {"max_abs_err": 2.4, "worst_index": [29]}, "compile": None,
            "replay": {"bundle": "b", "recorded_on": recorded_on, "verified": True}}


def test_bf16_outputs_recorded_by_the_interpreter_are_not_blamed_on_the_kernel():
    # upstream's test_clamp_symmetric, recorded under the interpreter: its bf16 reference was the wrong side
    owner = decide(_replayed("interpret", "bf16"), {}, "")
    assert owner is not None and owner.who == "tier" and owner.limit == "interpret-bf16-arith"
    assert owner.provisional and "record the workload on a GPU" in owner.settle


def test_other_recordings_and_dtypes_keep_the_usual_owner():
    for record in (_replayed("interpret", "fp32"), _replayed("cuda", "bf16")):
        owner = decide(record, {}, "")
        assert owner is not None and owner.limit != "interpret-bf16-arith", (record["params"], owner)
    # the interpreter replaying its own recording: its own limit, by the usual rule, not the recording's
    own = decide(_replayed("interpret", "bf16", backend="interpret"), {}, "")
    assert own is not None and "were recorded under" not in own.evidence


def test_a_failure_within_rounding_under_the_specs_tolerance_is_the_tolerances():
    record = _replayed("cuda", "fp32")
    record["rounding"] = {"within": True, "judged": False, "sentence": "within fp32 rounding for a 4,096-term sum"}
    owner = decide(record, {}, "")
    assert owner is not None and owner.who == "tolerance" and "4,096-term" in owner.evidence
    record["rounding"]["within"] = False  # control: beyond rounding, the usual rules decide
    assert decide(record, {}, "").who != "tolerance"


def _reduced(err_ratio: float, reductions: list[str], out: str = "fp32", recorded_on: str = "interpret") -> dict:
    record = _replayed(recorded_on, out)
    record["metrics"].update(err_ratio=err_ratio, max_abs_err=1e-3, nan_count=0)
    record["source_facts"] = {"reductions": reductions}
    return record


def test_a_replay_that_differs_by_summation_order_is_the_replays_tolerance_provisionally():
    # an fp32 atomic sum of 2^20 terms, recorded under the interpreter, replayed on ascend-lowered: 7e-5 as a whole
    owner = decide(_reduced(7e-5, ["tl.atomic_add", "tl.sum"]), {}, "")
    assert owner is not None and owner.who == "tolerance" and owner.provisional
    assert "summation orders" in owner.evidence and "fp64 reference" in owner.settle
    # controls: a difference far beyond reordering, a kernel that does not reduce, a bf16 output
    for record in (_reduced(1e-2, ["tl.sum"]), _reduced(7e-5, []), _reduced(7e-5, ["tl.sum"], out="fp16")):
        assert decide(record, {}, "").who != "tolerance", record


def test_a_replay_of_a_gpu_recording_with_tf32_dots_is_the_precision_mode():
    record = _reduced(6e-4, ["tl.dot"], recorded_on="cuda")
    record["params"]["K"] = 512
    compiled = {"status": "passed", "tf32_dots": {"tf32": 1, "fp32_dots": 1, "block_k": [32]}}
    owner = decide(record, {"cuda-compile": compiled}, "")
    assert owner is not None and owner.limit == "cuda-tf32-dot" and not owner.provisional
    assert "precision mode of the recording" in owner.evidence
    # without cuda-compile's TTIR it is said provisionally; an interpreter recording (ieee dots) is no precision mode
    assert decide(record, {}, "").provisional
    assert decide(_reduced(6e-4, ["tl.dot"]), {}, "").limit != "cuda-tf32-dot"


def test_a_provisional_precision_mode_is_settled_at_report_time_by_cuda_compiles_ttir():
    # interpret replayed before cuda-compile did: its verdict was provisional; the report holds the evidence
    from parity.triage.merged import retriage

    record = _reduced(6e-4, ["tl.dot"], recorded_on="cuda", out="fp32")
    record.update(backend="interpret", mode="interpret", suite="accuracy", params={**record["params"], "K": 512})
    record["owner"] = decide(record, {}, "")
    assert record["owner"].provisional
    compiled = {"backend": "cuda-compile", "kernel": "k", "case": "launch=0", "suite": "compile", "status": "passed",
                "tf32_dots": {"tf32": 1, "fp32_dots": 1}, "replay": {"recorded_on": "cuda"}}
    assert retriage([record]) == 0  # control: alone, nothing settles it
    assert retriage([record, compiled]) == 1
    assert record["owner"].limit == "cuda-tf32-dot" and not record["owner"].provisional
