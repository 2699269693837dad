"""The evidence triage reads from sibling results dirs is handed in by the driver and kept on the record it
decided (parity.driver.evidence); a record triage did not weigh (a pass) keeps none."""

from __future__ import annotations

from types import SimpleNamespace

from parity.driver import pipeline
from parity.results import Status, empty_record, write_results
from parity.triage.stage import CaseCode


def _record(tier: str, status: Status) -> dict:
    record = empty_record(tier, "interpret", "k", "N=8", {"N": 8})
    record.update(suite="accuracy", status=status, reason=None if status is Status.PASSED else "differs",
                  input_digest="d")
    return record


def _session(results_dir):
    return SimpleNamespace(results_dir=results_dir, replay=None)


def test_the_sibling_tiers_triage_read_are_kept_on_the_record(tmp_path):
    write_results(tmp_path / "cuda", [_record("cuda", Status.PASSED)])
    own = tmp_path / "interpret" / ".running"  # a run writes into its staging dir
    own.mkdir(parents=True)
    record = _record("interpret", Status.FAILED)
    pipeline.triage(_session(own), record, CaseCode())
    evidence = record["triage_evidence"]
    assert evidence["dirs"] == ["cuda"] and evidence["tiers"] == {"cuda": "passed"}
    assert "release" in evidence


def test_a_record_triage_did_not_weigh_keeps_no_evidence(tmp_path):
    write_results(tmp_path / "cuda", [_record("cuda", Status.PASSED)])
    record = _record("interpret", Status.PASSED)
    pipeline.triage(_session(tmp_path / "interpret"), record, CaseCode())
    assert "triage_evidence" not in record
