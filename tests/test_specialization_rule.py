"""The specialization sweep's owner is a triage rule (parity.triage.specialization), one test per outcome, with
the negative control: a sweep that found nothing gets no owner."""

from __future__ import annotations

import pytest

from parity.compile.specialize import SweepResult
from parity.results import OwnerKind, Status, empty_record
from parity.triage import library_rule, specialization
from parity.triage.stage import CaseCode

DEMO = library_rule.LibraryInfo("demo lib", "parity-demo-lib-not-installed", "https://example.org/demo",
                                ("parity_demo_lib",), ())


def swept(verdict: str, per_base_max: int = 1) -> tuple[dict, SweepResult]:
    result = SweepResult(kernel="k", arg="N", values=[1, 15, 16], bases=1, compiles=3, per_base_max=per_base_max)
    record = empty_record("cuda-compile", "compile", "k", "sweep-N-k", {"arg": "N"})
    record.update(suite="specialization", status=Status.FAILED,
                  specialization={"verdict": verdict, "arg": "N"})
    return record, result


def test_a_storm_in_our_kernel_is_its_authors_with_do_not_specialize():
    record, result = swept(specialization.STORM, 3)
    owner = specialization.decide(record, result, CaseCode(), [])
    assert owner is not None and owner.who is OwnerKind.AUTHOR and "do_not_specialize" in owner.evidence
    text = specialization.storm_text(record, result, 1, owner)
    assert "3 compilations" in text and "do_not_specialize" in text and "finding_of" not in record


def test_a_storm_in_a_librarys_kernel_is_the_librarys_finding(monkeypatch):
    monkeypatch.setattr(library_rule, "library_of", lambda family, kernels=(): DEMO)
    record, result = swept(specialization.STORM, 3)
    owner = specialization.decide(record, result, CaseCode(family="demo"), [])
    assert owner is not None and owner.who is OwnerKind.LIBRARY and owner.name == "demo lib"
    assert record["finding_of"]["name"] == "demo lib"
    assert "demo lib's finding, not parity's" in specialization.storm_text(record, result, 1, owner)


def test_a_claim_of_the_spec_that_does_not_hold_is_the_authors():
    record, result = swept("ok")
    claims = ["k: declared 2 heuristic variants, the sweep compiled 3"]
    owner = specialization.decide(record, result, CaseCode(), claims)
    assert owner is not None and owner.who is OwnerKind.AUTHOR and "declared 2 heuristic variants" in owner.evidence


@pytest.mark.parametrize("verdict", ["ok", "not checked"])
def test_a_sweep_that_found_nothing_has_no_owner(verdict):
    record, result = swept(verdict)
    assert specialization.decide(record, result, CaseCode(), []) is None
