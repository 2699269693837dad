"""A third vendor's compile tier is one Backend class plus its registration: it appears in the verdict, the
report, triage and fit, each with a clean twin (the same records without it) that shows the check can fail."""

from __future__ import annotations

import pytest

from parity import backends
from parity.report import divergence, divergence_md, verdict
from parity.report.divergence import Column
from parity.repro import launch_repro
from parity.run import fit_proof as prove
from parity.triage import limits
from parity.triage.decide import decide
from tests import synthetic_records, third_vendor_tier

POWER_OF_2 = "at 3:4: arange's range must be a power of 2"
ACME = "Acme (triton-acme)"


@pytest.fixture
def acme(monkeypatch):
    """The tier registered for one test, then forgotten (the class cache too)."""
    monkeypatch.setitem(backends.BACKENDS, third_vendor_tier.NAME, third_vendor_tier.REGISTRATION)
    backends.backend_class.cache_clear()
    yield third_vendor_tier.NAME
    monkeypatch.delitem(backends.BACKENDS, third_vendor_tier.NAME)
    backends.backend_class.cache_clear()


def acme_failure():
    return synthetic_records.rec("acme-compile", "compile", "tile", "N=37", "failed", reason=POWER_OF_2,
                                 compile={"ok": False, "error_kind": "frontend", "message": POWER_OF_2})


def columns_and_records(failure):
    cols = [Column("acme-compile", "acme-compile", "compile", {"target_arch": "X1"}),
            Column("cuda-compile", "cuda-compile", "compile", {"target_arch": "sm_90"}),
            Column("interpret", "interpret", "interpret", {})]
    records = {"acme-compile": [failure],
               "cuda-compile": [synthetic_records.rec("cuda-compile", "compile", "tile", "N=37", "passed",
                                                      compile={"ok": True})],
               "interpret": [synthetic_records.rec("interpret", "interpret", "tile", "N=37", "passed")]}
    return cols, records


def test_triage_applies_the_language_rules_of_the_language_the_tier_declares(acme):
    failure = acme_failure()
    owner = decide(failure, {})
    assert owner is not None and owner.who == "author" and owner.limit == "upstream-power-of-2"
    rule = next(x for x in limits.LIMITS if x.id == "upstream-power-of-2")
    assert rule.on("acme-compile") and rule.on("cuda-compile") and not rule.on("ascend-compile")
    assert "acme-compile" in backends.tiers_where(language="triton")


def test_without_its_registration_the_tier_is_unknown_and_no_rule_claims_it():
    rule = next(x for x in limits.LIMITS if x.id == "upstream-power-of-2")
    assert not rule.on("acme-compile")
    assert verdict.check_of("acme-compile").target == "acme-compile"  # a column of its own, named after it


def test_the_verdict_gives_it_its_vendors_column_word_and_check(acme):
    failure = acme_failure()
    failure["owner"] = decide(failure, {})
    cols, records = columns_and_records(failure)
    v = verdict.build(cols, records)
    assert v.targets == ["NVIDIA (Triton)", ACME]  # a vendor with a device tier first
    assert f"{ACME}: build = builds for X1 (acme-compile)" in v.checked
    row = dict(v.rows)["tile"]
    assert row[1].startswith("build ✗ kernel fix #1"), row
    assert list(v.missing) == ["NVIDIA (Triton)"]  # no device tier registered for Acme: nothing claimed for it


def test_divergence_md_orders_its_column_by_its_report_rank(acme):
    cols, records = columns_and_records(acme_failure())
    ordered = [c.label for c in sorted(cols, key=divergence.order_key)]
    assert ordered == ["interpret", "cuda-compile", "acme-compile"]
    by_rank = sorted(cols, key=divergence.order_key)
    text = divergence_md.render(by_rank, records, divergence.find(by_rank, records), None)
    assert ACME in text and "acme-compile" in text


def test_fit_proves_its_advice_on_the_tier_it_names(acme):
    assert prove.proof_tier(backends.get_backend("acme-compile")) == ("interpret", "")


def test_a_launch_option_repro_rebuilds_for_its_gpu_target(acme):
    assert launch_repro.target_of("acme-compile", None) == ("acme", "X1", 64)
    assert launch_repro.target_of("acme-compile", "X2") == ("acme", "X2", 64)
    assert launch_repro.target_of("ascend-compile", None) == ("npu", "Ascend910B3", 0)
    assert launch_repro.target_of("cuda-compile", 80) == ("cuda", 80, 32)
