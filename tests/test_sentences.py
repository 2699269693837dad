"""Every cross-tier sentence of DIVERGENCE.md is earned by the records: a tier is said to compile, or to compute
the fp64 answer, only where that case's record on that tier passed, in the words of the tier's mode."""

from __future__ import annotations

import pytest

from parity.report import claims, divergence, divergence_md
from parity.results import OwnerKind, Status
from parity.triage.owner import make_owner
from tests.synthetic_records import rec

UB = {"ok": False, "stage_reached": "bishengir", "error_kind": "ub_overflow", "message": "ub overflow, requires 2 bits"}
OK = {"ok": True, "stage_reached": "bishengir"}
GRID = {"ok": True, "launch_error": "grid should be less than 65536!"}


def col(tier: str) -> divergence.Column:
    return divergence.Column(tier, tier, claims.tier_mode(tier), {})


def find(by_tier: dict[str, dict]) -> list[divergence.Divergence]:
    """One case 'k'/'c' on every tier given: tier -> the record's fields (mode from the tier's Backend)."""
    records = {t: [rec(t, claims.tier_mode(t), "k", "c", **fields)] for t, fields in by_tier.items()}
    return divergence.find([col(t) for t in by_tier], records)


def one(divs: list[divergence.Divergence], kind: str) -> divergence.Divergence:
    (d,) = [d for d in divs if d.kind == kind]
    return d


def test_mode_comes_from_the_backend_class_not_the_name():
    assert claims.tier_mode("ascend-lowered") == "run" and claims.tier_mode("interpret") == "interpret"
    assert claims.tier_mode("cuda-compile") == "compile"
    assert claims.tier_mode("my-vendor-compile", "run") == "run"  # an unknown tier: its records' mode, not its name


def test_compile_divergence_names_no_failed_tier_as_compiling():
    # the user's report: "compiles on cuda-compile, ascend-lowered" where both had failed
    divs = find({"cuda-compile": {"status": Status.FAILED, "compile": OK},
                 "ascend-lowered": {"status": Status.FAILED},
                 "ascend-compile": {"status": Status.FAILED, "compile": UB}})
    d = one(divs, "compile")
    head = d.summary.partition(": ")[0]
    assert "compiles on" not in head and "computes" not in head, d.summary
    assert "gets through the compiler but the case fails on cuda-compile" in head
    assert "runs but fails the fp64 check on ascend-lowered" in head
    assert "does not compile on ascend-compile" in head
    assert d.cells["cuda-compile"] == "compile ok, status failed for another reason"
    assert d.cells["ascend-lowered"].startswith("failed")  # its fp64 verdict, never "compiled"


def test_compile_divergence_control_passing_tiers_keep_their_words():
    divs = find({"cuda-compile": {"status": Status.PASSED, "compile": OK},
                 "ascend-lowered": {"status": Status.PASSED},
                 "ascend-compile": {"status": Status.FAILED, "compile": UB}})
    head = one(divs, "compile").summary.partition(": ")[0]
    assert head == ("does not compile on ascend-compile; compiles on cuda-compile; computes the fp64 answer on "
                    "ascend-lowered")


def test_a_run_tier_that_errors_is_not_said_to_fail_a_compile():
    divs = find({"cuda-compile": {"status": Status.PASSED, "compile": OK},
                 "interpret": {"status": Status.ERROR, "reason": "CompilationError: at 3:4: unsupported"}})
    head = one(divs, "compile").summary.partition(": ")[0]
    assert head == "errors before computing on interpret; compiles on cuda-compile"


def test_numeric_divergence_in_each_modes_words():
    divs = find({"interpret": {"status": Status.PASSED},
                 "ascend-lowered": {"status": Status.FAILED, "reason": "3% off"}})
    d = one(divs, "numeric")
    assert d.summary == "computes the fp64 answer on interpret; runs but fails the fp64 check on ascend-lowered: 3% off"
    assert "passes on" not in d.summary and "compiles" not in d.summary


def test_launch_divergence_names_a_failed_compile_tier_by_its_record():
    divs = find({"cuda-compile": {"status": Status.FAILED, "compile": OK, "reason": "expected a recompile storm"},
                 "ascend-compile": {"status": Status.FAILED, "compile": GRID}})
    d = one(divs, "launch")
    assert d.summary.startswith("refused at launch on ascend-compile; gets through the compiler but the case "
                                "fails on cuda-compile"), d.summary
    assert d.cells["cuda-compile"] == "compile ok, status failed for another reason"
    # control: the same tier passing is said to compile
    divs = find({"cuda-compile": {"status": Status.PASSED, "compile": OK},
                 "ascend-compile": {"status": Status.FAILED, "compile": GRID}})
    assert one(divs, "launch").summary.startswith("refused at launch on ascend-compile; compiles on cuda-compile")


@pytest.mark.parametrize("status", [Status.FAILED, Status.ERROR, Status.CRASHED, Status.XFAILED])
def test_no_earned_clause_says_compiles_or_passes_for_a_failed_record(status):
    for mode in ("compile", "run", "interpret"):
        words = claims.earned(mode, status)
        assert "compiles" not in words and "computes the fp64 answer" not in words and "passes" not in words


def test_the_rendered_table_keeps_the_earned_words():
    divs = find({"cuda-compile": {"status": Status.FAILED, "compile": OK},
                 "ascend-compile": {"status": Status.FAILED, "compile": UB}})
    text = divergence_md.divergence_table(divs)
    assert "compiles on cuda-compile" not in text and "gets through the compiler but the case fails" in text


def test_no_divergence_over_zero_compared_cases_is_not_agreement():
    cols = [col("interpret"), col("cuda-compile")]
    apart = {"interpret": [rec("interpret", "interpret", "k", "a", Status.PASSED)],
             "cuda-compile": [rec("cuda-compile", "compile", "k", "b", Status.PASSED, compile=OK)]}
    text = divergence_md.render(cols, apart, divergence.find(cols, apart), None)
    assert "nothing was compared" in text and "agrees" not in text
    # control: the same case on both dirs is compared, and the count says over how many
    together = {"interpret": [rec("interpret", "interpret", "k", "a", Status.PASSED)],
                "cuda-compile": [rec("cuda-compile", "compile", "k", "a", Status.PASSED, compile=OK)]}
    text = divergence_md.render(cols, together, divergence.find(cols, together), None)
    assert "None found over the 1 case(s) that ran on two or more results dirs." in text


def test_a_provisional_owner_says_another_error_only_where_the_error_differs():
    from parity.triage import decide

    text = "RuntimeError: bishengir-compile failed: 'hivm.hir.vbrc' op operand #0 must be ub memref"
    mine = {"backend": "ascend-lowered", "kernel": "k", "case": "N=8", "status": Status.ERROR, "reason": text,
            "params": {"N": 8}}
    alike = {**mine, "backend": "ascend-compile"}  # one frontend failing alike: no evidence, and no other error
    owner = decide(mine, {"ascend-compile": alike})
    assert "another error" not in owner.evidence and "the same way on ascend-compile" in owner.evidence
    # control: a different error there is still named as one
    other = {**alike, "reason": "MLIRCompilationError: ub overflow, requires 3 bits while 1 bits available"}
    assert "with another error on ascend-compile" in decide(mine, {"ascend-compile": other}).evidence


def test_the_legend_covers_what_its_marks_are_given_for():
    from parity.report import legend, verdict

    tier = make_owner(OwnerKind.TIER, "interpreter", "a limit")
    limited = [rec("interpret", "interpret", "k", "c", Status.FAILED, owner=tier)]
    assert verdict.result("interp", limited, "interpret", "", {}).mark == "–"  # cases ran: all a tier limit
    assert "every case that ran failed for a tier limit" in legend.legend({"–"})
    mixed = [*limited, rec("interpret", "interpret", "k", "d", Status.PASSED)]
    assert verdict.result("interp", mixed, "interpret", "", {}).mark == "✓"  # a failed case beside the mark
    assert "except those counted beside the mark as a tier limit" in legend.legend({"✓"})


def test_everywhere_means_every_element():
    import torch

    from parity.repro.where import classify
    from parity.run.compare import describe_region

    mask = torch.ones(20, 20, dtype=torch.bool)
    assert describe_region(mask) == "everywhere"
    mask[torch.arange(0, 20), torch.arange(0, 20)] = False  # 380 of 400, scattered
    assert describe_region(mask) == "nearly everywhere (95.0%)"
    assert classify({"mismatch_frac": 0.95, "max_rel_err": 0.5}, "fp32") == "nearly everywhere (95.0% of elements)"
    assert classify({"mismatch_frac": 1.0, "max_rel_err": 0.5}, "fp32") == "everywhere"  # control


def test_author_and_issue_sentences_say_only_what_was_done():
    from parity.repro.author import author_reason
    from parity.repro.issue import shrink_none

    why = author_reason({"status": Status.FAILED, "diagnosis": {"what": "an int32 offset"}}, "interpret")
    assert "every backend" not in why and "an int32 offset" in why  # no other backend's record was read
    assert shrink_none({"trials": 0, "steps": []}).startswith("none tried")  # nothing tried: no "did not fail"
    assert shrink_none({"trials": 3, "steps": []}) == "none: the 3 smaller case(s) tried did not fail the same way"


def test_no_storm_is_ruled_out_over_sweeps_that_counted_nothing():
    from parity.report.backend_md import storm_count

    def row(verdict: str) -> list:
        return ["k", "", "T", 3, 1, 1, 1, 1, "1/1", verdict, "n/a"]

    assert storm_count([row("not checked"), row("not launched")]).startswith("No sweep counted compiles")
    assert storm_count([row("ok"), row("storm"), row("not checked")]) == \
        "Recompile storms: 1 of the 2 sweep(s) that counted compiles."  # control: the counted ones are counted


def test_tier_md_says_a_probe_retires_a_limit_only_where_the_limit_has_one():
    from parity.triage.drafts import render_tier
    from parity.triage.limits import LIMITS

    probed = next(limit for limit in LIMITS if limit.probe is not None)
    bare = next(limit for limit in LIMITS if limit.probe is None)
    record = {"kernel": "k", "case": "c", "reason": "x"}

    def note(limit) -> str:
        owner = make_owner(OwnerKind.TIER, "interpreter", "e", limit=limit.id)
        return render_tier({**record, "owner": owner}, "interpret", None)

    assert "its probe retires it" in note(probed)  # control: a probed entry keeps the sentence
    assert "its probe retires it" not in note(bare) and "it has no probe" in note(bare)


def test_a_vendor_verdicts_evidence_says_a_compile_tier_compiled_not_that_it_ran_the_inputs():
    from parity.triage import decide

    failing = {"backend": "ascend-compile", "kernel": "k", "case": "N=8", "status": Status.FAILED, "params": {"N": 8},
               "reason": "MLIRCompilationError: failed to legalize operation 'tt.foo'",
               "compile": {"ok": False, "error_kind": "mlir_error", "message": "failed to legalize operation "
                           "'tt.foo'", "stage_reached": "ttir"}}
    passed = {"kernel": "k", "case": "N=8", "status": Status.PASSED, "params": {"N": 8}}
    owner = decide(failing, {"cuda-compile": {**passed, "backend": "cuda-compile", "compile": {"ok": True}}})
    assert "cuda-compile compiles it" in owner.evidence and "same inputs" not in owner.evidence, owner
    # control: a tier that ran the case on its inputs keeps the words
    owner = decide(failing, {"interpret": {**passed, "backend": "interpret"}})
    assert "interpret passes the same case on the same inputs" in owner.evidence, owner


def test_a_version_change_names_a_failed_release_by_what_its_record_shows():
    from parity.report.divergence import Facts
    from parity.report.versions import case_changes

    ran_wrong = Facts(status=Status.FAILED, record={"metrics": {"err_ratio": 0.5}}, compiled=True,
                      built_status=Status.FAILED)
    broke = Facts(status=Status.ERROR, compiled=False, compile_error="CompilationError: boom",
                  built_status=Status.ERROR)
    (change,) = [c for c in case_changes(ran_wrong, broke, "3.2.0", "3.3.0", "run") if c[0] == "compile"]
    assert change[1].startswith("errors before computing on triton 3.3.0; runs but fails the fp64 check on "
                                "triton 3.2.0"), change
    assert change[2].startswith("failed")  # its fp64 verdict, not "compiled"
    passed = Facts(compiled=True, built_status=Status.PASSED)
    (change,) = [c for c in case_changes(passed, broke, "3.2.0", "3.3.0", "compile") if c[0] == "compile"]
    assert change[1].startswith("does not compile on triton 3.3.0; compiles on triton 3.2.0")  # control


def test_a_cell_read_through_key_line_gains_no_claim():
    from parity.reasons import key_line

    divs = find({"cuda-compile": {"status": Status.FAILED, "compile": OK},
                 "ascend-compile": {"status": Status.FAILED, "compile": UB}})
    cell = one(divs, "compile").cells["cuda-compile"]
    assert key_line(cell) == cell  # a cell ending on "failed" was read as an announcement: "printed nothing after it"
