"""Owners across tiers (parity.triage): each rule, its negative control, and the drafts that follow."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from parity.driver import pipeline
from parity.reasons import key_line
from parity.triage import decide, plan_drafts
from parity.triage import limits as lim
from parity.triage.evidence import others_for, sibling_dirs
from parity.triage.merged import retriage


def numeric(tier: str, worst=(3,), status="failed", **extra) -> dict:
    return {"backend": tier, "kernel": "k", "case": "N=8", "status": status, "reason": "output 'out': 1% off",
            "metrics": {"worst_index": list(worst), "max_abs_err": 1.0}, "params": {"N": 8, "dtype": "fp32"}, **extra}


def compiled(tier: str, ok: bool, message: str = "", kind: str | None = None, stage: str | None = None) -> dict:
    return {"backend": tier, "kernel": "k", "case": "N=8", "status": "passed" if ok else "failed",
            "reason": None if ok else message, "params": {"N": 8},
            "compile": {"ok": ok, "error_kind": kind, "message": message, "stage_reached": stage}}


PASS = {"status": "passed"}


def test_the_same_wrong_values_on_two_tiers_are_the_authors_on_both():
    interp, lowered = numeric("interpret"), numeric("ascend-lowered")
    for mine, other in ((interp, lowered), (lowered, interp)):
        owner = decide(mine, {other["backend"]: other})
        assert owner.who == "author" and not owner.provisional, owner
        assert "fail the same way" in owner.evidence and "[3]" in owner.evidence
        assert plan_drafts({"owner": owner}).kind == "author"


def errored(tier: str, reason: str) -> dict:
    return {"backend": tier, "kernel": "k", "case": "N=8", "status": "error", "reason": reason, "params": {"N": 8}}


def test_the_same_error_on_two_compilers_is_the_authors_and_two_different_errors_are_not():
    cause = "TypeError: cannot add pointers together (operand 1 of 2)"
    upstream = errored("cuda-compile", f"triton.compiler.errors.CompilationError: at 4:12: {cause}")
    ascend = errored("ascend-compile", cause.replace("2", "4"))  # the numbers may differ, the message not
    owner = decide(upstream, {"ascend-compile": ascend})
    assert owner.who == "author" and "fail the same way" in owner.evidence, owner
    # negative control: each compiler fails with its own error: no "same way", so no author verdict from it
    other = errored("ascend-compile", "RuntimeError: bishengir-compile failed: 'hivm.hir.vbrc' op operand #0 "
                                      "must be ub memref")
    owner = decide(upstream, {"ascend-compile": other})
    assert "fail the same way" not in owner.evidence and owner.provisional, owner
    assert "with another error on ascend-compile" in owner.evidence
    assert "fail the same way" not in decide(other, {"cuda-compile": upstream}).evidence


def test_a_removed_upstream_api_is_the_authors_to_port_and_names_the_removal():
    text = ("triton.runtime.errors.InterpreterError: NotImplementedError('Block pointers have been removed in "
            "favor of the tensor descriptor API')")
    owner = decide(errored("interpret", text), {"cuda-compile": errored("cuda-compile", text)})
    assert owner.who == "author" and not owner.provisional and owner.limit == "upstream-block-ptr-removed"
    assert "tensor descriptor" in owner.evidence and "pull/6847" in owner.evidence
    assert plan_drafts({"owner": owner}).kind == "author"  # no vendor draft for a deliberate removal
    # negative controls: another error on the same tier, and the same text on a tier whose language keeps them
    assert decide(errored("interpret", "TypeError: cannot add pointers together"), {}).limit is None
    assert decide(errored("ascend-lowered", text), {}).limit != "upstream-block-ptr-removed"


def test_a_lowering_divergence_where_the_interpreter_agrees_with_the_reference_is_triton_ascends():
    owner = decide(numeric("ascend-lowered"), {"interpret": {**PASS, "backend": "interpret"}})
    assert owner.who == "triton-ascend" and not owner.provisional
    plan = plan_drafts({"owner": owner})
    assert plan.kind == "vendor" and plan.trackers == ["triton-ascend"]  # no second draft without "also"
    # negative control: the interpreter fails too, so no vendor is the odd one out
    assert decide(numeric("ascend-lowered"), {"interpret": numeric("interpret")}).who == "author"


def test_only_the_interpreter_differing_from_a_gpu_is_the_interpreters():
    owner = decide(numeric("interpret"), {"cuda": {**PASS, "backend": "cuda"}})
    assert (owner.who, owner.name) == ("triton", "Triton interpreter")


def test_a_single_tier_verdict_is_provisional_and_names_the_run_that_settles_it():
    owner = decide(numeric("ascend-lowered"), {})
    assert owner.provisional and "interpret" in owner.settle
    assert plan_drafts({"owner": owner}).kind == "author"  # never a vendor draft without evidence
    vendor_guess = decide(compiled("ascend-compile", False, "error: x", "mlir_error", "ttir"), {})
    assert vendor_guess.who == "triton-ascend" and vendor_guess.provisional
    assert plan_drafts({"owner": vendor_guess}).kind == "author"


def test_a_compile_error_on_code_upstream_compiles_is_triton_ascends():
    msg = ("loc(#loc3): error: expected offsets to be non-negative, but got -16\n"
           "%5 = tt.load %4 : tensor<16x!tt.ptr<f32>> -> tensor<16xf32>\n" * 3)
    owner = decide(compiled("ascend-compile", False, msg, "mlir_error", "ttir"),
                   {"cuda-compile": compiled("cuda-compile", True)})
    assert owner.who == "triton-ascend" and not owner.provisional
    assert "expected offsets to be non-negative, but got -16" in owner.evidence


def test_upstream_language_restrictions_are_the_authors_not_tritons():
    erf = compiled("cuda-compile", False, "at 3:20:\nExpected dtype ['fp32', 'fp64'] but got fp16", "unsupported")
    owner = decide(erf, {"ascend-compile": compiled("ascend-compile", True)}, "y = tl.erf(x)")
    assert owner.who == "author" and owner.limit == "upstream-erf-fp32-only"
    tup = compiled("cuda-compile", False, "cannot convert [...] of type <class 'triton.language.core.tuple'> to "
                   "tensor", "unsupported")
    owner = decide(tup, {"ascend-compile": compiled("ascend-compile", True)}, "b = tl.broadcast(a, a)")
    assert owner.who == "author" and owner.limit == "upstream-tuple-store"
    # an upstream frontend error with no documented rule, where triton-ascend compiles it: still not Triton's
    other = compiled("cuda-compile", False, "some frontend complaint", "unsupported")
    assert decide(other, {"ascend-compile": compiled("ascend-compile", True)}).who == "author"
    # control: a backend crash past the frontend where Ascend compiles is Triton's
    crash = compiled("cuda-compile", False, "LLVM ERROR: bad", "mlir_error", "llir")
    assert decide(crash, {"ascend-compile": compiled("ascend-compile", True)}).who == "triton"


def test_tier_limits_are_the_tiers_and_get_a_note_not_a_draft():
    declined = compiled("ascend-lowered", False, "ascend-lowered tier limit lowered-cumsum-i1: tl.cumsum over a "
                        "boolean (i1) tile")
    declined.update(status="error", compile=None)
    owner = decide(declined, {})
    assert owner.who == "tier" and owner.limit == "lowered-cumsum-i1"
    assert plan_drafts({"owner": owner}).kind == "tier"
    # the tier now ships the bf16 builtins the host lacks: that limit has retired itself
    assert not next(x for x in lim.LIMITS if x.id == "lowered-truncsfbf2").holds()
    # a wrong cumsum on the lowered tier alone is no tier limit (its stand-in follows triton-ascend): provisional
    cumsum = numeric("ascend-lowered")
    owner = decide(cumsum, {}, "b = tl.cumsum(x, 0)")
    assert owner.who != "tier" and owner.provisional
    # negative control: the same wrong values under the interpreter make it the kernel's
    assert decide(cumsum, {"interpret": numeric("interpret")}, "b = tl.cumsum(x, 0)").who == "author"


def test_libdevice_under_the_interpreter_is_the_tiers_and_does_not_make_ascend_s_failure_the_authors():
    """upstream's libdevice.erf returns None under the interpreter (no GPU to map it) and on triton-ascend (its
    backend maps no module): the interpreter's is a tier limit, so the Ascend tier is the odd one out against
    cuda-compile, not 'failing the same way' with the interpreter."""
    source = "tl.store(y + o, 1.0 + libdevice.erf(tl.load(x + o)))"
    text = "TypeError(\"unsupported operand type(s) for +: 'float' and 'NoneType'\")"
    interp = {**compiled("interpret", False, text), "status": "error", "compile": None}
    lowered = {**compiled("ascend-lowered", False, text), "status": "error", "compile": None}
    built = {**compiled("cuda-compile", True), "backend": "cuda-compile"}
    owner = decide(interp, {"cuda-compile": built}, source)  # the interpreter's run, before the Ascend tier's
    assert (owner.who, owner.limit) == ("tier", "interpret-libdevice"), owner
    interp["owner"] = owner
    vendor = decide(lowered, {"interpret": interp, "cuda-compile": built}, source)
    assert vendor.who == "triton-ascend" and "cuda-compile" in vendor.evidence, vendor
    # with the module it came from (as parity's extracted source writes it), the bug is the one already reported:
    # the vendor's, and a note pointing at the report rather than a fresh draft
    imported = "import triton.language.extra.libdevice as libdevice\n" + source
    known = decide(lowered, {"interpret": interp, "cuda-compile": built}, imported)
    assert (known.who, known.limit) == ("triton-ascend", "ascend-generic-libdevice"), known
    assert "triton-ascend/issues/2363" in known.evidence and plan_drafts({"owner": known}).kind == "tier"
    # negative controls: triton-ascend's own libdevice is no such bug; the same None on an upstream tier too is
    # the kernel's
    own = imported.replace("triton.language.extra.libdevice", "triton.language.extra.ascend.libdevice")
    assert decide(lowered, {"interpret": interp, "cuda-compile": built}, own).limit is None
    upstream = {**built, "status": "failed", "reason": text, "compile": {"ok": False, "message": text}}
    assert decide(lowered, {"cuda-compile": upstream}, imported).who == "author"
    # negative controls: no libdevice in the source is no such limit; and without the limit's verdict on the
    # interpreter's record the two tiers fail the same way (the author's)
    assert decide(interp, {}, "tl.store(y + o, 1.0 + tl.erf(tl.load(x + o)))").limit != "interpret-libdevice"
    del interp["owner"]
    assert decide(lowered, {"interpret": interp, "cuda-compile": built}, source).who == "author"


def test_the_known_triton_ascend_libdevice_bug_retires_once_its_backend_maps_the_module(monkeypatch):
    """The probe reads the installed backend's module map: an empty map holds the entry, a mapped module retires
    it (the negative control), and no triton-ascend at all cannot tell."""
    import sys
    import types

    probe = next(x for x in lim.LIMITS if x.id == "ascend-generic-libdevice").probe
    package, compiler = types.ModuleType("triton.backends.ascend"), types.ModuleType("triton.backends.ascend.compiler")
    package.compiler = compiler  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "triton.backends.ascend", package)
    monkeypatch.setitem(sys.modules, "triton.backends.ascend.compiler", compiler)
    compiler.AscendBackend = type("AscendBackend", (), {"get_module_map": lambda self: {}})  # type: ignore[attr-defined]
    assert probe() is True
    mapped = {"triton.language.extra.libdevice": types.ModuleType("libdevice")}
    compiler.AscendBackend = type("AscendBackend", (), {"get_module_map": lambda self: mapped})  # type: ignore[attr-defined]
    assert probe() is False
    monkeypatch.setitem(sys.modules, "triton.backends.ascend.compiler", None)  # absent: an ImportError
    monkeypatch.delattr(package, "compiler")
    assert probe() is None


def test_a_retired_limit_matches_no_more(monkeypatch):
    from parity.backends.interpret import InterpretBackend

    retired = replace(lim.LIMITS[0], probe=lambda: False, id="retired-for-test")  # its own probe cache entry
    monkeypatch.setattr(InterpretBackend, "own_limits", (*InterpretBackend.own_limits, retired.id))
    record = numeric("interpret", params={"dtype": "bf16"})
    record["params"] = {"dtype": "bf16"}
    assert retired.matches(record, "tl.dot(a, b)") and not retired.holds()
    assert lim.LIMITS[0].matches(record, "tl.dot(a, b)")


@pytest.mark.parametrize("limit_id", ["interpret-int-to-bf16", "interpret-libdevice", "interpret-float-arg",
                                      "interpret-loop-var", "interpret-constexpr-arg"])
def test_interpreter_probes_answer_on_the_installed_triton(limit_id, tmp_path, monkeypatch):
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))
    limit = next(x for x in lim.LIMITS if x.id == limit_id)
    assert limit.probe() in (True, False)  # it can tell, on this version


def test_a_library_kernel_hands_the_authors_verdict_to_its_library():
    class Lib:
        name = "FlagGems"

    owner = decide(numeric("interpret"), {"ascend-lowered": numeric("ascend-lowered")}, library=Lib())
    assert (owner.who, owner.name) == ("library", "FlagGems")
    # the vendor's verdict stays the vendor's
    owner = decide(numeric("ascend-lowered"), {"interpret": {**PASS, "backend": "interpret"}}, library=Lib())
    assert owner.who == "triton-ascend"


def test_key_line_keeps_the_compilers_error_not_dumps():
    text = ("%3 = linalg.yield %2 : f32 warning: linalg.yield something\n"
            "loc(\"k.py\":5:10): error: expected offsets to be non-negative, but got -16\n"
            "%4 = tensor<16x16xf32> tensor<16xf32> tensor<16xi1>\n")
    assert key_line(text) == "expected offsets to be non-negative, but got -16"
    dump = "ValueError: operands could not be broadcast together with shapes (4,) (8,)\n[1. 2. 3.]\n[0. 0. 0.]"
    assert key_line(dump).startswith("ValueError: operands could not be broadcast")


def test_a_long_compile_message_keeps_its_key_line_when_trimmed():
    from parity.compile.tools import trim_message

    text = "first line\n" + "%1 = tensor<4xf32> tensor<4xf32> tensor<4xf32>\n" * 100 + \
        "error: expected offsets to be non-negative, but got -16\n" + "warning: linalg.yield\n" * 200
    assert "expected offsets to be non-negative, but got -16" in trim_message(text, 600)


def test_sibling_results_dirs_are_the_evidence_and_the_report_step_retriages(tmp_path):
    (tmp_path / "interpret").mkdir()
    (tmp_path / "ascend-lowered" / ".running").mkdir(parents=True)
    from parity.results import empty_record

    full = {**empty_record("interpret", "interpret", "k", "N=8", {"N": 8}), **numeric("interpret")}
    (tmp_path / "interpret" / "results.jsonl").write_text(json.dumps(full) + "\n")
    mine = numeric("ascend-lowered")
    dirs = sibling_dirs(tmp_path / "ascend-lowered" / ".running")
    assert [d.name for d in dirs] == ["interpret"]
    others = others_for(mine, dirs)
    assert set(others) == {"interpret"} and decide(mine, others).who == "author"
    # the report step: a provisional vendor guess made alone becomes the author's once the dirs are merged
    alone = {**compiled("ascend-compile", False, "error: x", "mlir_error", "ttir")}
    alone["owner"] = decide(alone, {})
    upstream = compiled("cuda-compile", False, "error: x", "mlir_error", "ttir")
    assert retriage([alone, upstream]) >= 1 and alone["owner"].who == "author"


def test_an_import_path_in_a_clone_named_parity_is_not_machinery(tmp_path):
    from parity.errors import is_machinery_file

    mine = tmp_path / "src" / "parity" / "kernels" / "mine.py"  # a user's kernel in a clone named parity
    mine.parent.mkdir(parents=True)
    mine.write_text("")
    assert not is_machinery_file(str(mine))
    assert is_machinery_file(str(Path(lim.__file__)))  # parity's own install is


def test_a_tail_only_failure_names_the_last_program_and_the_unmasked_load(tmp_path):
    from parity.backends import get_backend
    from parity.repro import run_repro
    from parity.run.refcache import ReferenceCache
    from parity.run.runner import run_case
    from tests import planted_tail

    spec = planted_tail.SPECS[0]
    case = spec.cases("quick")[0]
    backend, cache = get_backend("interpret"), ReferenceCache(enabled=False)
    record, _ = run_case(spec, case, backend, seed=0, cache=cache)
    assert record["status"] == "failed", record["reason"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(run_repro.SHRINK_SECONDS, "failed", 0.0)
        pipeline.judge_and_repro(record, spec, case, backend, seed=0, cache=cache, results_dir=tmp_path)
    where = record["where"]
    assert where["class"].startswith("tail of the grid only"), where
    assert where["program"]["pid0"] == 15 and where["program"]["last_program"], where  # cdiv(1000, 64) - 1
    assert any(planted_tail.BUGGY_LOAD.split("  #")[0] in line for line in where["likely_missing_mask"]), where
    note = (tmp_path / record["repro"] / "AUTHOR.md").read_text()
    assert "Likely missing mask" in note and "pid0=15" in note


def test_where_classes_have_their_controls():
    from parity.repro.where import classify, program_of

    assert classify({"nan_count": 3}, "fp32") == "NaN/Inf"
    assert classify({"max_rel_err": 3e-7, "region": "everywhere"}, "fp32").startswith("precision drift")
    assert classify({"max_rel_err": 0.5, "region": "everywhere"}, "fp32") == "everywhere"  # control: not drift
    assert program_of([130, 5], [256, 64], [4, 1], {"BT": 64}) == {"pid0": 2, "pid0_tiles": "dim 0 by BT=64",
                                                                    "last_program": False}


def test_a_dead_run_process_is_not_a_compiler_verdict_but_a_dead_compiler_is():
    died = {"backend": "interpret", "kernel": "k", "case": "N=8", "status": "crashed", "params": {},
            "reason": "the worker process died: signal SIGSEGV"}
    assert decide(died, {}).who == "author" and decide(died, {}).provisional
    crash = compiled("cuda-compile", False, "Segmentation fault", "crash", None)
    assert decide(crash, {}).who == "triton" and not decide(crash, {}).provisional


def test_a_sibling_results_dir_of_another_schema_is_no_evidence_and_no_raise(tmp_path):
    from parity.triage.evidence import others_for, sibling_dirs

    own, other = tmp_path / "interpret", tmp_path / "old-tier"
    own.mkdir()
    other.mkdir()
    (other / "results.jsonl").write_text('{"schema": 999, "backend": "cuda", "kernel": "k", "case": "n=1"}\n')
    record = {"backend": "interpret", "kernel": "k", "case": "n=1", "status": "failed"}
    assert sibling_dirs(own) == [other]
    assert others_for(record, sibling_dirs(own)) == {}


LINEAR_LAYOUT = ("crash in the code generator: python: lib/Tools/LinearLayout.cpp:562: Assertion "
                 "`getTotalOutDimSize() == ...' failed.")


def test_a_compiler_crash_that_a_newer_release_passes_is_fixed_there_and_gets_no_upstream_draft():
    old = compiled("cuda-compile", False, LINEAR_LAYOUT, "crash", "ttgir")
    newer = {"3.8.0": compiled("cuda-compile", True), "3.9.0": compiled("cuda-compile", True)}
    owner = decide(old, {}, version="3.2.0", versions=newer)
    assert (owner.who, owner.provisional) == ("triton", False)
    assert owner.evidence.startswith("fixed in 3.8.0; upgrade") and "LinearLayout" in owner.evidence
    assert plan_drafts({"owner": owner}).kind == "tier"  # a note to upgrade, never a fresh ISSUE.md
    from parity.triage.drafts import render_tier

    note = render_tier({**old, "owner": owner}, "cuda-compile", "python repro.py")
    assert "a Triton bug already fixed in 3.8.0: upgrade" in note and "do not file it" in note
    # negative controls: the newest release fails the same way (a live bug), or only an older one passes (a
    # regression): both are still drafted to Triton
    for versions in ({"3.9.0": compiled("cuda-compile", False, LINEAR_LAYOUT, "crash", "ttgir")},
                     {"3.1.0": compiled("cuda-compile", True)}):
        live = decide(old, {}, version="3.2.0", versions=versions)
        assert live.who == "triton" and not live.evidence.startswith("fixed in")
        plan = plan_drafts({"owner": live})
        assert (plan.kind, plan.trackers) == ("vendor", ["triton"])


def test_the_report_step_and_a_matrix_run_find_the_fix_in_the_newer_releases_results_dir(tmp_path, monkeypatch):
    import parity.triage.evidence as evidence
    from parity.results import empty_record
    from parity.triage import RunEvidence, triage
    from parity.triage.merged import annotate

    dirs = {"cuda-compile": ("3.8.0", True), "cuda-compile@triton-3.2.0": ("3.2.0", False)}
    records = {}
    for label, (version, ok) in dirs.items():
        (tmp_path / label).mkdir()
        (tmp_path / label / "env.json").write_text(json.dumps({"backend": "cuda-compile", "triton": version}))
        r = {**empty_record("cuda-compile", "compile", "k", "N=8", {"N": 8}),
             **compiled("cuda-compile", ok, "" if ok else LINEAR_LAYOUT, None if ok else "crash", "ttgir")}
        (tmp_path / label / "results.jsonl").write_text(json.dumps(r) + "\n")
        records[label] = [r]
    monkeypatch.setattr(evidence, "installed_version", lambda: "3.2.0")  # the matrix session's own triton
    old = records["cuda-compile@triton-3.2.0"][0]
    assert triage(old, RunEvidence(tmp_path / label)).evidence.startswith("fixed in 3.8.0")
    old["owner"] = decide(old, {})  # as if the newer dir had not been there at run time
    assert annotate(records, {label: tmp_path / label for label in dirs}) == 1
    assert old["owner"].evidence.startswith("fixed in 3.8.0; upgrade")


def test_other_tiers_are_read_at_the_records_own_release_and_only_within_its_compiler_family(tmp_path):
    from parity.results import empty_record
    from parity.triage.evidence import others_for, others_in_dirs

    def interp(status):
        return {**empty_record("interpret", "interpret", "k", "N=8", {"N": 8}), **numeric("interpret", status=status)}

    default, newest, old = interp("passed"), interp("failed"), interp("failed")
    tagged = [("interpret", "3.8.0", default), ("interpret@triton-3.9.0", "3.9.0", newest),
              ("interpret@triton-3.2.0", "3.2.0", old)]
    on_39 = compiled("cuda-compile", False, "error: x", "mlir_error", "ttir")
    assert others_in_dirs(on_39, "3.9.0", tagged)["interpret"] is newest  # the same release
    assert others_in_dirs(on_39, "3.8.0", tagged)["interpret"] is default
    # triton-ascend 3.2.0 is not upstream 3.2.0: an Ascend record reads the interpreter's default dir
    assert others_in_dirs(numeric("ascend-lowered"), "3.2.0", tagged)["interpret"] is default
    for label, version, r in tagged:  # the same from results dirs on disk (a run's own triage)
        (tmp_path / label).mkdir()
        (tmp_path / label / "env.json").write_text(json.dumps({"backend": "interpret", "triton": version}))
        (tmp_path / label / "results.jsonl").write_text(json.dumps(r) + "\n")
    dirs = sorted(tmp_path.iterdir())
    assert others_for(on_39, dirs, "3.9.0")["interpret"]["status"] == "failed"
    assert others_for(numeric("ascend-lowered"), dirs, "3.2.0")["interpret"]["status"] == "passed"


@pytest.mark.parametrize("reason", [
    "RuntimeError: Triton Error [CUDA]: out of memory (raised at kernels/gdn/kkt.py:70, in chunk_scaled_dot_kkt)",
    "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 139.80 GiB",
])
def test_a_device_out_of_memory_at_run_time_is_the_environments_not_the_authors(reason):
    record = {**numeric("cuda", status="error"), "reason": reason, "metrics": None}
    owner = decide(record, {})
    assert owner.who == "environment" and "alone" in owner.evidence, owner
    assert plan_drafts({"owner": owner}).kind != "vendor"
    # negative control: a config the GPU cannot hold (shared memory) stays the author's
    held = {**record, "reason": "OutOfResources: out of resource: shared memory, Required: 262144, "
                                "Hardware limit: 232448"}
    assert decide(held, {}).who == "author"


def test_a_case_its_own_author_documents_is_theirs_and_drafts_nothing():
    known = {"reason": "the test returns early for this case itself", "link": "https://github.com/Ascend/triton-ascend/x",
             "expected_by": "triton-ascend's own test"}
    record = {**compiled("ascend-compile", False, "ub overflow, requires 2359296 bits", "ub_overflow"),
              "status": "xfailed", "known_divergence": known,
              "finding_of": {"name": "triton-ascend tests", "repo": "https://github.com/Ascend/triton-ascend"}}
    owner = decide(record, {})
    assert (owner.who, owner.name) == ("library", "triton-ascend tests")
    assert "expected by triton-ascend's own test" in owner.evidence
    assert plan_drafts({**record, "owner": owner}).kind == "none"
    # negative control: the same divergence without its author's word is the linked compiler's, with a note
    # pointing at the link (TIER.md), never a draft inviting a new report
    compilers = {**record, "known_divergence": {**known, "expected_by": None}}
    assert decide(compilers, {}).who == "triton-ascend"
    assert plan_drafts({**compilers, "owner": decide(compilers, {})}).kind == "tier"


def test_a_library_fallback_for_a_module_the_installed_triton_ascend_lacks_is_the_environments():
    """FlagGems 5.0.2 asks for triton.language.extra.cann and, without it, compiles against stubs that give None."""
    reason = ("TypeError: unsupported operand type(s) for +: 'int' and 'NoneType' (in gelu_none) (raised at "
              "flag_gems/utils/libentry.py:721, in run)")
    library = {"name": "FlagGems", "version": "5.0.2", "missing": ["triton.language.extra.cann"]}
    record = {**numeric("ascend-lowered", status="error"), "reason": reason, "metrics": None, "library": library}
    owner = decide(record, {})
    assert (owner.who, owner.name) == ("environment", "triton-ascend version"), owner
    assert "313dccecfc36" in owner.evidence and "NoneType" in owner.evidence, owner
    assert plan_drafts({**record, "owner": owner}).kind == "tier"  # a note, no draft to FlagGems or triton-ascend
    # negative controls: nothing missing; a failure that is no None value (wrong results); an upstream tier
    assert decide({**record, "library": {**library, "missing": []}}, {}).who != "environment"
    assert decide({**numeric("ascend-lowered"), "library": library}, {}).who != "environment"
    assert decide({**record, "backend": "cuda-compile"}, {}).who != "environment"


def test_a_launch_option_newer_than_the_installed_triton_ascend_is_the_environments():
    reason = ("KeyError: 'Keyword argument enable_ubuf_saving was specified but unrecognised'; `enable_ubuf_saving` "
              "is not a launch option of this Triton backend")
    record = {**numeric("ascend-lowered", status="error"), "reason": reason, "metrics": None,
              "finding_of": {"name": "fla", "repo": "https://github.com/fla-org/flash-linear-attention"}}
    owner = decide(record, {})
    assert owner.who == "environment" and "fcfe7e710b2b" in owner.evidence, owner
    assert plan_drafts({**record, "owner": owner}).kind == "tier"  # a note: neither fla's nor triton-ascend's bug
    # negative controls: an option no triton-ascend has, and the same option on an upstream tier
    unknown = {**record, "reason": reason.replace("enable_ubuf_saving", "enable_foo")}
    assert decide(unknown, {}).who != "environment"
    assert decide({**record, "backend": "cuda-compile"}, {}).who != "environment"


def test_a_known_divergence_linking_the_vendors_report_gets_a_note_with_the_link_not_a_new_draft(tmp_path):
    """A spec's known divergence that links an upstream report: TIER.md naming the link, never an ISSUE.md that
    invites "File at …/issues/new/choose" for a bug the record itself says is reported."""
    from parity.repro.run_repro import write_drafts

    link = "https://github.com/triton-lang/triton-ascend/issues/2332"
    record = {**compiled("ascend-compile", False, "expected offsets to be non-negative, but got -16"),
              "status": "xfailed", "known_divergence": {"reason": "masked lanes below the base", "link": link,
                                                        "expected_by": None}}
    record["owner"] = decide(record, {})
    assert record["owner"].who == "triton-ascend" and plan_drafts(record).kind == "tier"
    files = write_drafts(tmp_path, record, "ascend-compile", "python repro.py", lambda t: "File at: new", {})
    assert files == ["TIER.md"]
    note = (tmp_path / "TIER.md").read_text()
    assert link in note and "issues/new" not in note and "not a new bug report" in note
    # negative control: the same failure without the link is the vendor's own finding, drafted to it
    fresh = {**compiled("ascend-compile", False, "expected offsets to be non-negative, but got -16")}
    fresh["owner"] = decide(fresh, {"cuda-compile": {**compiled("cuda-compile", True)}})
    assert fresh["owner"].who == "triton-ascend" and plan_drafts(fresh).kind == "vendor", fresh["owner"]


def test_an_interpreter_builder_gap_is_the_interpreters_with_its_link_not_the_authors():
    gap = errored("interpret", "InterpreterError: AttributeError(\"'InterpreterBuilder' object has no attribute "
                               "'get_bf16'\")")
    owner = decide(gap, {})
    assert (owner.who, owner.limit, owner.provisional) == ("tier", "interpret-builder-gap", False), owner
    assert "triton/runtime/interpreter.py" in owner.evidence and plan_drafts({"owner": owner}).kind == "tier"
    semantic = errored("interpret", "InterpreterError: NotImplementedError('inline_asm not supported in interpreter "
                                    "mode')")
    assert decide(semantic, {}).limit == "interpret-builder-gap"
    # negative controls: the kernel's own attribute error under the interpreter, and the builder's message on
    # another tier, are no gap of the interpreter
    own = errored("interpret", "InterpreterError: AttributeError(\"'tensor' object has no attribute 'foo'\")")
    assert decide(own, {}).limit is None and decide(own, {}).who == "author"
    elsewhere = {**gap, "backend": "ascend-lowered"}
    assert decide(elsewhere, {}).limit != "interpret-builder-gap"


def test_a_tensor_method_on_a_float_argument_under_the_interpreter_is_the_interpreters_not_the_library():
    """Liger-Kernel's rms_norm calls `eps.to(...)` on a float argument: it compiles and runs on the GPU, and only the
    interpreter (which hands a float argument over as a Python float) raises."""
    class Lib:
        name = "Liger-Kernel"

    source = "eps = eps.to(tl.float32)"
    interp = errored("interpret", "InterpreterError: AttributeError(\"'float' object has no attribute 'to'\")")
    built = {**compiled("cuda-compile", True), "backend": "cuda-compile"}
    owner = decide(interp, {"cuda-compile": built}, source, library=Lib())
    assert (owner.who, owner.limit, owner.provisional) == ("tier", "interpret-float-arg", False), owner
    # negative controls: the same error on a tier that compiles is not the interpreter's; nor is another object's
    elsewhere = {**interp, "backend": "ascend-lowered"}
    assert decide(elsewhere, {"cuda-compile": built}, source).limit != "interpret-float-arg"
    tensor = errored("interpret", "InterpreterError: AttributeError(\"'tensor' object has no attribute 'foo'\")")
    assert decide(tensor, {"cuda-compile": built}, source).limit is None


def test_a_tensor_method_on_a_loop_variable_under_the_interpreter_is_the_interpreters_not_the_author():
    """fla's chunk_gated_delta_rule_fwd_kernel_h calls `i_t.to(tl.int64)` on a `for i_t in range(NT)` variable: it
    compiles and runs on the H200, and only the interpreter (which loops over Python ints) raises."""
    source = "for i_t in range(NT):\n        i_t_int64 = i_t.to(tl.int64)\n"
    interp = errored("interpret", "InterpreterError: AttributeError(\"'int' object has no attribute 'to'\")")
    built = {**compiled("cuda-compile", True), "backend": "cuda-compile"}
    owner = decide(interp, {"cuda-compile": built}, source)
    assert (owner.who, owner.limit, owner.provisional) == ("tier", "interpret-loop-var", False), owner
    # negative controls: the same error on a tier that compiles is not the interpreter's; nor one where no loop
    # variable has a method called on it (an int the kernel made itself), nor a static_range's constexpr variable
    elsewhere = {**interp, "backend": "ascend-lowered"}
    assert decide(elsewhere, {"cuda-compile": built}, source).limit != "interpret-loop-var"
    own = "n = 4\n    for i in range(n):\n        acc += i\n    m = n.to(tl.int64)\n"
    assert decide(interp, {"cuda-compile": built}, own).limit != "interpret-loop-var"
    static = "for i in tl.static_range(4):\n        j = i.to(tl.int64)\n"
    assert decide(interp, {"cuda-compile": built}, static).limit != "interpret-loop-var"


def test_flaggems_generated_kernels_under_the_interpreter_meet_its_limits_not_flaggems():
    """Replaying FlagGems' H200 launches under the interpreter: a libdevice function imported from its module, and a
    builder gap reported inside a nested InterpreterError (escaped quotes), are the interpreter's; each was owned
    "author (provisional)" before. A block pointer's `.type.element_ty` is not: Triton 3.8's compiled path (an
    `_aggregate` `_block_ptr`) fails the same way, so it stays the kernel's (a release difference, not a limit)."""
    built = {**compiled("cuda-compile", True), "backend": "cuda-compile"}
    forgot = errored("interpret", "InterpreterError: InterpreterError(\"ValueError('Did you forget to add "
                                  "@triton.jit ? (`_semantic` argument must be provided outside of JIT "
                                  "functions.)')\")")
    libdevice = "from triton.language.extra.cuda.libdevice import erf\n    y = erf(x)"
    assert decide(forgot, {"cuda-compile": built}, libdevice).limit == "interpret-libdevice"
    nested = errored("interpret", "InterpreterError: InterpreterError('AttributeError(\"\\'InterpreterBuilder\\' "
                                  "object has no attribute \\'get_bf16\\'\")')")
    assert decide(nested, {}).limit == "interpret-builder-gap"
    # nested quotes in any limit's message: FlagGems' pow passes its float exponent, which the interpreter keeps a float
    floated = errored("interpret", "InterpreterError: InterpreterError('AttributeError(\"\\'float\\' object has no "
                                   "attribute \\'to\\'\")')")
    assert decide(floated, {"cuda-compile": built}, "y = s.to(tl.float32)").limit == "interpret-float-arg"
    # a tl.dtype handed to a jit helper (FlagGems' get_dtype_min: `dtype.value`) is a constexpr only when compiled
    dtype = errored("interpret", "InterpreterError: InterpreterError('AttributeError(\"\\'dtype\\' object has no "
                                 "attribute \\'value\\'\")')")
    owner = decide(dtype, {"cuda-compile": built}, "dtype_ = dtype.value")
    assert (owner.who, owner.limit, owner.provisional) == ("tier", "interpret-constexpr-arg", False), owner
    assert decide({**dtype, "backend": "ascend-lowered"}, {}).limit != "interpret-constexpr-arg"
    # negative controls: the same errors on another tier, and a plain Python helper the author forgot to jit (no
    # libdevice), are no limit of the interpreter
    assert decide(forgot, {"cuda-compile": built}, "def helper(x):\n    return tl.exp(x)").limit is None
    assert decide({**nested, "backend": "ascend-lowered"}, {}).limit != "interpret-builder-gap"


def test_a_block_pointers_element_type_on_triton_3_8_is_the_authors_to_port():
    """FlagGems' generated pointwise kernels read `out_bptr.type.element_ty`: Triton 3.6 ran them on the H200; 3.8's
    emulated block pointer has no such attribute, compiled (cuda-compile) and interpreted alike."""
    text = "AttributeError: '_aggregate_type' object has no attribute 'element_ty'"
    source = "q = tl.make_block_ptr(y, (n,), (1,), (0,), (B,), order=(0,))\ntl.store(q, v.to(q.type.element_ty))"
    owner = decide(errored("interpret", text), {"cuda-compile": errored("cuda-compile", text)}, source)
    assert (owner.who, owner.limit, owner.provisional) == ("author", "upstream-block-ptr-emulated", False)
    assert "pull/9667" in owner.evidence
    # negative controls: no block pointer in the source, and a tier whose language keeps block pointers
    assert decide(errored("interpret", text), {}, "x = tl.load(p)").limit is None
    assert decide(errored("ascend-lowered", text), {}, source).limit != "upstream-block-ptr-emulated"


def _rank_mismatch(line: str, value: str, pointer: str) -> str:
    """The frontend's CompilationError as triton-ascend 3.2 raises it: the source, a caret under the failing line."""
    return (f"at 6:4:\ndef kernel(Z, X, SIZE: tl.constexpr):\n    z = x[None, :, :]\n    {line}\n    ^\n"
            f"ValueError('Cannot broadcast, rank mismatch: [{value}], [{pointer}]')")


def test_a_store_of_a_lower_rank_value_is_the_languages_version_never_triton_ascends():
    """Upstream's test_index1d stores a [1, 32, 32] value through a 4-D pointer block: Triton 3.6 broadcasts it
    (triton#8661), triton-ascend 3.2 refuses it as Triton 3.5 did. Drafting that to triton-ascend was wrong."""
    store = "tl.store(Z + a[None, None, None, :] + b[:, None, None, None] * 32768, z)"
    text = _rank_mismatch(store, "1, 32, 32", "32, 32, 32, 32")
    built = {**PASS, "backend": "cuda-compile"}
    for tier in ("ascend-compile", "ascend-lowered"):
        owner = decide(errored(tier, text), {"cuda-compile": built})
        assert (owner.who, owner.limit, owner.provisional) == ("author", "store-value-rank", False), owner
        assert "pull/8661" in owner.evidence and plan_drafts({"owner": owner}).kind == "author"
    # the same frontend on an older upstream (the version matrix's Triton 3.2.0) is the same rule
    assert decide(errored("interpret", text), {}).limit == "store-value-rank"
    # negative controls: a value of higher rank than its pointer is wrong on every version, a rank mismatch in
    # another operation is no store's, and without the caret's line nothing says where it was raised
    higher = _rank_mismatch(store, "32, 32, 32", "32, 32")
    other_op = _rank_mismatch("y = tl.broadcast_to(x, (32, 32, 32))", "1, 32", "32, 32, 32")
    bare = "ValueError('Cannot broadcast, rank mismatch: [1, 32], [32, 32, 32]')"
    for wrong in (higher, other_op, bare):
        owner = decide(errored("ascend-compile", wrong), {"cuda-compile": built})
        assert owner.limit != "store-value-rank", (wrong, owner)
    assert decide(errored("ascend-compile", other_op), {"cuda-compile": built}).who == "triton-ascend"


def test_tf32_rounding_of_an_fp32_dot_on_nvidia_is_a_precision_class_with_its_advice():
    dot = "acc = tl.dot(a, b, acc)"
    rounded = numeric("cuda", metrics={"worst_index": [3], "max_abs_err": 4e-3, "err_ratio": 2e-3, "nan_count": 0,
                                       "mismatch_frac": 0.66, "region": "scattered (66.0%)"})
    owner = decide(rounded, {}, dot)
    assert (owner.who, owner.limit, owner.provisional) == ("author", "cuda-tf32-dot", False), owner
    assert 'input_precision="ieee"' in owner.evidence and "tolerance" in owner.evidence
    assert "hf32" in owner.evidence and plan_drafts({"owner": owner}).kind == "author"
    # negative controls: a dot pinned to ieee, an error far beyond TF32's rounding, NaN, a bf16 case, the
    # interpreter (no TF32 there) and a kernel with no dot are not TF32's doing
    assert decide(rounded, {}, 'acc = tl.dot(a, b, acc, input_precision="ieee")').limit is None
    wrong = {**rounded, "metrics": {**rounded["metrics"], "err_ratio": 0.4}}
    assert decide(wrong, {}, dot).limit is None
    nan = {**rounded, "metrics": {**rounded["metrics"], "nan_count": 3}}
    assert decide(nan, {}, dot).limit is None
    assert decide({**rounded, "params": {"N": 8, "dtype": "bf16"}}, {}, dot).limit is None
    assert decide({**rounded, "backend": "interpret"}, {}, dot).limit is None
    assert decide(rounded, {}, "acc += tl.sum(a * b, 1)").limit is None
    # ... and a few wrong elements, whose err_ratio over a large output is as small, are a bug, not rounding
    few = {**rounded, "metrics": {**rounded["metrics"], "mismatch_frac": 0.001, "region": "scattered (0.1%)"}}
    tile = {**rounded, "metrics": {**rounded["metrics"], "region": "tail rows m>=96 only"}}
    assert decide(few, {}, dot).limit is None and decide(tile, {}, dot).limit is None


def test_the_tf32_class_reaches_author_md_with_its_advice(tmp_path):
    from parity.repro.run_repro import write_drafts

    rounded = numeric("cuda", metrics={"worst_index": [3], "max_abs_err": 4e-3, "err_ratio": 2e-3, "nan_count": 0,
                                       "mismatch_frac": 0.66, "region": "scattered (66.0%)"})
    rounded["owner"] = decide(rounded, {}, "acc = tl.dot(a, b, acc)")
    assert write_drafts(tmp_path, rounded, "cuda", "python repro.py", lambda t: "", {}) == ["AUTHOR.md"]
    text = (tmp_path / "AUTHOR.md").read_text()
    assert "the kernel's to handle" in text and 'input_precision="ieee"' in text and "hf32" in text
    # control: a wrong value with no limit behind it reads as a bug in the kernel
    plain = {**rounded, "owner": decide({**rounded, "metrics": {**rounded["metrics"], "err_ratio": 0.5}}, {}, "")}
    write_drafts(tmp_path / "plain", plain, "cuda", "python repro.py", lambda t: "", {})
    assert "a bug in the kernel" in (tmp_path / "plain" / "AUTHOR.md").read_text()


def test_every_tier_limit_is_claimed_by_a_tier_or_a_language_and_every_claim_names_one():
    """A tier's own limits are declared on its Backend class (own_limits); a typo there, or a limit no tier
    claims, would silently never apply."""
    from parity.backends import BACKENDS, backend_class

    ids = {x.id for x in lim.LIMITS}
    claimed = {i for name in BACKENDS for i in backend_class(name).own_limits}
    assert claimed <= ids, f"Backend.own_limits names no limit: {claimed - ids}"
    unclaimed = {x.id for x in lim.LIMITS if x.language is None} - claimed
    assert unclaimed == set(), f"no tier claims these limits (add them to a Backend's own_limits): {unclaimed}"
    interp = next(x for x in lim.LIMITS if x.id == "interpret-bf16-dot")
    assert interp.on("interpret") and not interp.on("cuda") and not interp.on("no-such-tier")  # the control


TF32_REFUSAL = ("AssertionError(\"input_precision == tf32 or tf32x3 is invalid, please use input_precision='hf32' on "
                "Ascend instead.\")")


def test_an_nvidia_tf32_dot_refused_by_triton_ascend_is_the_authors_not_the_vendors():
    """fla's solve_tril kernel recorded on the H200 asks tf32; triton-ascend refuses it, naming hf32. That is no
    vendor bug and no 'asks for hf32' (the message names hf32 as the fix): the author picks the precision per device."""
    from parity.compile.ascend_only import language_finding

    dot = "b = tl.dot(a, c, input_precision=SOLVE_TRIL_DOT_PRECISION)"
    refused = compiled("ascend-compile", False, TF32_REFUSAL, kind="CompilationError")
    owner = decide(refused, {"cuda-compile": {**compiled("cuda-compile", True)}}, dot)
    assert (owner.who, owner.limit) == ("author", "ascend-rejects-tf32"), owner
    assert language_finding(TF32_REFUSAL) is None
    # negative controls: a kernel that really asks hf32 is still named so, and the refusal on a kernel with no dot
    # (nothing the limit describes) is not this limit's
    assert language_finding("ValueError: input_precision must be one of ('tf32', 'ieee'), got 'hf32'")
    assert decide(refused, {"cuda-compile": compiled("cuda-compile", True)}, "x = a + c").limit is None


def test_a_replayed_fp32_dot_is_no_case_of_the_interpreters_bf16_dot_limit():
    """A replay's case has no dtype parameter but names the dtype it is judged at (`out`): test_core's fp32 tf32 dots
    replayed under the interpreter were matched to the bf16-dot limit through the source's `dot(` alone."""
    dot = "qk = tl.dot(q, k, input_precision=INPUT_PRECISION)"
    replayed = numeric("interpret", params={"launch": 0, "grid": [1], "out": "fp32"},
                       metrics={"worst_index": [5], "max_abs_err": 4e-4, "err_ratio": 1e-3, "nan_count": 0,
                                "mismatch_frac": 0.5, "region": "scattered (50.0%)"})
    assert decide(replayed, {}, dot).limit != "interpret-bf16-dot"
    # negative control: the same replay judged at bf16 is that limit's case
    bf16 = {**replayed, "params": {**replayed["params"], "out": "bf16"}}
    assert decide(bf16, {}, dot).limit == "interpret-bf16-dot"


def test_an_overflow_of_a_block_pointer_with_an_argument_order_is_the_authors_only_provisionally():
    """FlagGems' generated kernels pass each block pointer's order as arguments; triton-ascend 3.2.0 needs 8,454,144
    bits of UB for a 1x16x8x2 fp32 tile with order (0, 1, 2, 3) and fits it with (3, 2, 1, 0)."""
    overflow = compiled("ascend-compile", False, "ub overflow, requires 8454144 bits while 1572864 bits available!",
                        "ub_overflow", "ttadapter")
    overflow["fit"] = {"searched": 1, "fitting": []}
    permuted = "p = tl.make_block_ptr(x, (s0, s1), (st0, st1), (o0, o1), (T0, T1), order=(ord0, ord1))"
    owner = decide(overflow, {}, permuted)
    assert owner.who == "author" and owner.provisional and "order=(n-1" in owner.settle, owner
    # controls: a literal order, or a smaller config the advisor proved, is the tile's: the author's for sure
    literal = permuted.replace("order=(ord0, ord1)", "order=(1, 0)")
    assert not decide(overflow, {}, literal).provisional
    proved = {**overflow, "fit": {"searched": 4, "fitting": [{"T1": 8}]}}
    assert not decide(proved, {}, permuted).provisional


def test_a_limit_of_wrong_values_does_not_explain_an_out_of_bounds_write_whose_values_were_right():
    """A bf16 case under the interpreter whose values matched but which wrote past its output: the interpreter's bf16
    arithmetic limit cannot be why it failed, and the write is the author's."""
    oob = {"writes": [{"kernel": "k", "tensor": "y", "dtype": "bfloat16", "numel": 64, "elements": [64, 1024],
                       "unmasked_stores": []}], "guarded": 2}
    right = {"backend": "interpret", "kernel": "k", "case": "N=8", "status": "failed",
             "params": {"N": 8, "dtype": "bf16"},
             "reason": "out-of-bounds write by k: elements [64, 1024) of argument `y`", "oob": oob,
             "metrics": {"max_abs_err": 1e-3, "mismatch_frac": 0.0, "passed": True}}
    assert lim.matching_limit(right, "") is None
    assert decide(right, {}).who == "author"
    # the negative control: the same case with wrong values is the limit's
    wrong = {**right, "oob": None, "metrics": {"max_abs_err": 3.0, "mismatch_frac": 0.5, "passed": False}}
    assert lim.matching_limit(wrong, "").id == "interpret-bf16-arith"


def test_fp8_refused_by_triton_ascend_is_the_targets_limit_for_the_author_not_a_vendor_bug():
    """LightLLM's destindex_copy_kv_fp8 compiles on cuda-compile and not on ascend-compile: the odd one out would
    name triton-ascend, but A2/A3 have no fp8 in triton-ascend's frontend (its own tests expect the refusal)."""
    refused = compiled("ascend-compile", False, "ValueError: unexpected type fp8.", kind="CompilationError")
    owner = decide(refused, {"cuda-compile": compiled("cuda-compile", True)}, "tl.store(o + i, x.to(tl.float8e4nv))")
    assert (owner.who, owner.limit) == ("author", "ascend-no-fp8"), owner
    # control: another frontend ValueError with cuda-compile passing is still the vendor's odd one out
    other = compiled("ascend-compile", False, "ValueError: fail to convert <x> to ir type", kind="CompilationError")
    assert decide(other, {"cuda-compile": compiled("cuda-compile", True)}, "tl.store(o + i, x)").limit is None


def test_an_fp8_replay_the_interpreter_rounds_differently_is_its_limit_not_the_authors():
    """LightLLM's fp8 quantizers recorded on an H100 replayed under the interpreter: -64 where the GPU wrote -128 (the
    interpreter's float -> fp8 downcast drops the rounding carry), owned by the author as 'the reference semantics'."""
    quant = "y_q = tl.clamp(y / y_s, fp8_min, fp8_max).to(y_q_ptr.dtype.element_ty)"
    metrics = {"worst_index": [113], "max_abs_err": 64.0, "err_ratio": 0.5, "nan_count": 0, "mismatch_frac": 0.026,
               "region": "scattered (2.6%)"}
    fp8 = numeric("interpret", params={"launch": 0, "grid": [3], "out": "fp8"}, metrics=metrics)
    owner = decide(fp8, {}, quant)
    assert (owner.who, owner.limit) == ("tier", "interpret-fp8-downcast"), owner
    # controls: the same mismatch judged at fp16 is not this limit's, nor is an fp8 case on another tier
    assert decide({**fp8, "params": {**fp8["params"], "out": "fp16"}}, {}, quant).limit != "interpret-fp8-downcast"
    lowered = {**fp8, "backend": "ascend-lowered"}
    assert decide(lowered, {}, quant).limit != "interpret-fp8-downcast"
