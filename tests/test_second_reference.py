"""A library's golden is checked against the fp64 reference whatever the kernel did, and a wrong one is named."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from parity.backends import get_backend
from parity.report.backend_md import render_report
from parity.report.portability import cell
from parity.run.refcache import ReferenceCache, reference_source
from parity.run.runner import run_case
from parity.run.second_reference import OURS, SecondReference
from tests import planted_prefill

F = torch.nn.functional


def _ours(i, p):
    return {"y": torch.relu(i["x"])}


def _off_golden(i, p):  # the planted bug: a golden 1 % off
    return {"y": torch.relu(i["x"]) * 1.01}


def _arbiter(i, p):
    return {"y": F.relu(i["x"])}


def _raise(i, p):
    raise RuntimeError("the kernel never ran")


LAUNCHES = {"passed": lambda i, p: {"y": torch.relu(i["x"])},  # the right answer
            "failed": lambda i, p: {"y": planted_prefill.relu_short(i["x"])},  # its unwritten tail
            "error": _raise}


def _run(golden, verdict: str) -> dict:
    second = SecondReference(_ours, golden, "the demo golden", _arbiter, "F.relu in fp64")
    spec = replace(planted_prefill.relu_own_output, reference=second, launch=LAUNCHES[verdict])
    record, _ = run_case(spec, spec.cases("quick")[0], get_backend("interpret"), seed=0,
                         cache=ReferenceCache(enabled=False))
    assert record["status"] == verdict  # the golden's verdict never changes the kernel's
    return record


@pytest.mark.parametrize("verdict", ["passed", "failed", "error"])
def test_a_planted_golden_that_is_off_is_reported_whatever_the_kernel_verdict(verdict):
    second = _run(_off_golden, verdict)["second_reference"]
    assert not second["agrees"] and second["wrong"] == "golden"
    assert second["max_abs_diff"] > 0.01 and "the demo golden is the one that is off" in second["message"]


@pytest.mark.parametrize("verdict", ["passed", "failed", "error"])
def test_a_right_golden_agrees_whatever_the_kernel_verdict(verdict):
    second = _run(lambda i, p: {"y": F.relu(i["x"])}, verdict)["second_reference"]
    assert second["agrees"] and second["wrong"] is None


def test_the_arbiter_names_our_reference_when_it_is_ours_that_is_off():
    x = {"x": torch.randn(64, dtype=torch.float64)}
    wrong_ours = SecondReference(_off_golden, _ours, "g", _arbiter, "F.relu")
    verdict, gold = wrong_ours.cross_check(x, {}, _off_golden(x, {}))
    assert verdict["wrong"] == OURS and torch.equal(gold["y"], _ours(x, {})["y"])


def test_without_an_arbiter_or_with_a_failing_golden_the_record_says_so():
    x = {"x": torch.randn(64, dtype=torch.float64)}
    verdict, _ = SecondReference(_ours, _off_golden, "g").cross_check(x, {}, _ours(x, {}))
    assert verdict["wrong"] == "undecided" and "no independent third evaluation" in verdict["message"]
    verdict, gold = SecondReference(_ours, _raise, "g").cross_check(x, {}, _ours(x, {}))
    assert verdict["wrong"] == "golden" and "raised RuntimeError" in verdict["message"] and gold == {}


def test_the_report_and_the_portability_cell_show_the_disagreement():
    record = _run(_off_golden, "passed")
    report = render_report([record], {"backend": "interpret"})
    assert "## Library goldens that disagree with the fp64 reference" in report
    assert "golden off" in cell([record]) and cell([record]).startswith("passed")
    assert "kernel_to_golden" in record["second_reference"]  # the kernel ran: its distance to the golden too
    agreeing = _run(lambda i, p: {"y": F.relu(i["x"])}, "failed")
    summary = render_report([agreeing], {"backend": "interpret"})
    assert "Every library golden checked agrees" in summary and "golden off" not in cell([agreeing])


def test_the_reference_cache_key_is_stable():
    second = SecondReference(_ours, _off_golden, "g")
    key = reference_source(second)  # what input_hash keys the cached fp64 result on
    assert "0x" not in key and "torch.relu" in key and key == reference_source(_ours)

    def built_from(inner):
        def reference(i, p):
            return inner(i, p)
        return reference
    # a reference made by a factory: the key changes with what it was built from, wrapped or not
    assert reference_source(SecondReference(built_from(_ours), _ours, "g")) != reference_source(
        SecondReference(built_from(_arbiter), _ours, "g"))
    assert reference_source(built_from(_ours)) != reference_source(built_from(_arbiter))


def test_a_repro_embeds_our_reference_not_the_wrapper():
    from parity.repro.source import extract_function

    extracted = extract_function(SecondReference(_ours, _off_golden, "g"))
    assert extracted.entry == "_ours" and "torch.relu" in extracted.text()
