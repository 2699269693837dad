"""bench/npu_agreement_vllm_ascend.py: its joins name real spec cases, and a test function's verdict reads them all."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench_module import load

va = load("npu_agreement_vllm_ascend")  # it puts bench/ on the path for its sibling npu_agreement


def _specs() -> dict[str, set[str]]:
    from libraries import vllm_ascend, vllm_ascend_rope, vllm_ascend_sample

    specs = vllm_ascend.SPECS + vllm_ascend_sample.SPECS + vllm_ascend_rope.SPECS
    return {s.name: {c.id for c in s.cases("full")} for s in specs}


def test_every_join_names_a_spec_and_cases_it_has():
    specs = _specs()
    for test, (spec, ids) in va.JOINS.items():
        assert spec in specs, f"{test}: no spec {spec}"
        assert set(ids) <= specs[spec], f"{test}: {set(ids) - specs[spec]} are not cases of {spec}"


def test_a_misspelled_case_id_is_caught():  # the negative control of the check above
    specs = _specs()
    assert not set(va._ids("B,V,K", (16, 32000, 10), dtype="fp16")) <= specs["vllm_ascend_compute_token_logprobs"]


def test_every_joined_test_and_every_by_hand_class_is_an_entry_of_the_source():
    entries = {e["test"] for e in json.loads(va.DATA.read_text())["entries"]}
    assert set(va.JOINS) <= entries and set(va.BY_HAND) <= entries


def _rec(kernel: str, case: str, status: str, who: str | None = None) -> dict[str, Any]:
    return {"kernel": kernel, "case": case, "status": status, "suite": "accuracy",
            "owner": {"who": who} if who else None, "reason": f"{status} here"}


@pytest.mark.parametrize(("records", "verdict"), [
    ({"c": [_rec("k", "a", "passed"), _rec("k", "b", "passed")]}, "ports"),
    ({"c": [_rec("k", "a", "passed"), _rec("k", "b", "failed", "author")]}, "fails"),
    ({"c": [_rec("k", "a", "passed")]}, "none"),  # case b missing: no prediction, not a pass
    ({"c": [_rec("k", "a", "passed"), _rec("k", "b", "failed", "tier")]}, "none"),  # the tier's own limit
])
def test_a_test_function_ports_only_when_every_case_passed(records, verdict):
    assert va.case_verdict(records, "k", ("a", "b")).verdict == verdict


def test_results_dirs_are_read_with_their_stack(tmp_path: Path):
    d = tmp_path / "ascend-compile"
    d.mkdir()
    (d / "results.jsonl").write_text(json.dumps(_rec("vllm_ascend_bincount", "req=63,T=40960,V=151936", "passed")))
    (d / "env.json").write_text(json.dumps({"triton_ascend": "3.2.0", "target_arch": "Ascend910B3"}))
    parity, stack = va.parity_side([d])
    assert stack == va.na.Stack("3.2.0", "A2")
    assert parity[va.E2E + "test_bincount.py::test_bincount_kernel"].verdict == "ports"
