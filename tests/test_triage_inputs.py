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
    assert owner is not None and owner["who"] == "tier" and owner["limit"] == "interpret-bf16-arith"
    assert owner["provisional"] and "record the workload on a GPU" in owner["settle"]


def test_other_recordings_and_dtypes_keep_the_usual_owner():
    for record in (_replayed("interpret", "fp32"), _replayed("cuda", "bf16")):
        owner = decide(record, {}, "")
        assert owner is not None and owner.get("limit") != "interpret-bf16-arith", (record["params"], owner)
    # the interpreter replaying its own recording: its own limit, by the usual rule, not the recording's
    own = decide(_replayed("interpret", "bf16", backend="interpret"), {}, "")
    assert own is not None and "were recorded under" not in own["evidence"]


def test_a_failure_within_rounding_under_the_specs_tolerance_is_the_tolerances():
    record = _replayed("cuda", "fp32")
    record["rounding"] = {"within": True, "judged": False, "sentence": "within fp32 rounding for a 4,096-term sum"}
    owner = decide(record, {}, "")
    assert owner is not None and owner["who"] == "tolerance" and "4,096-term" in owner["evidence"]
    record["rounding"]["within"] = False  # control: beyond rounding, the usual rules decide
    assert decide(record, {}, "")["who"] != "tolerance"
