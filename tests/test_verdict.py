"""The porting verdict, grouped findings and one count, from synthetic records; each with a planted failure."""

from __future__ import annotations

from dataclasses import replace

import pytest

from parity import cli, reasons
from parity.report import backend_md, divergence_md, findings, heatmap, verdict
from parity.report.divergence import Column
from parity.results import OwnerKind, Status
from parity.triage.owner import make_owner
from tests import synthetic_records

UB = "ub overflow, requires 3145728 bits while 1572864 bits available"
ANNOUNCED = ("loc(\"x.py\":12:3): error: failed to legalize\n[ConvertLinalgRToBinary] encounters error:\n"
             "'hivm.hir.vbrc' op operand #0 must be ranked tensor")
LINK = "https://github.com/Ascend/triton-ascend/issues/2332"


def rec(*args, **extra):
    """A failing accuracy record here carries a huge err/tol, as an xfailed case's would."""
    return synthetic_records.rec(*args, failing_tol_ratio=5e11, **extra)


def failed_compile(case, message=UB, **extra):
    return rec("ascend-compile", "compile", "gdn_h", case, Status.FAILED, repro=f"repros/gdn_h__{case}",
               compile={"ok": False, "error_kind": "ub_overflow", "message": message}, **extra)


def columns_and_records(ascend_records):
    cols = [Column("interpret", "interpret", "interpret", {}),
            Column("cuda-compile", "cuda-compile", "compile", {"target_arch": "sm_90"}),
            Column("ascend-compile", "ascend-compile", "compile", {"target_arch": "Ascend910B3"}, "ascend-compile/")]
    records = {
        "interpret": [rec("interpret", "interpret", "gdn_h", "T=64", Status.PASSED),
                      rec("interpret", "interpret", "vadd", "N=1", Status.PASSED)],
        "cuda-compile": [rec("cuda-compile", "compile", "gdn_h", "BT=64", Status.PASSED, compile={"ok": True}),
                         rec("cuda-compile", "compile", "vadd", "N=1", Status.PASSED, compile={"ok": True})],
        "ascend-compile": [*ascend_records,
                           rec("ascend-compile", "compile", "vadd", "N=1", Status.PASSED, compile={"ok": True})],
    }
    return cols, records


def test_key_line_takes_the_compilers_verdict_and_never_ends_at_a_colon():
    assert findings.key_line(f"  12 | b = tl.load(p)\n{UB} | at loc(x)") == f"{UB} | at loc(x)"  # not the source
    line = findings.key_line(ANNOUNCED)
    assert line.startswith("failed to legalize") and not line.endswith(":")
    alone = findings.key_line("[ConvertLinalgRToBinary] encounters error:")
    assert "printed nothing after it" in alone
    assert findings.key_line("tensor([[0.1000, 0.2000], [0.3, 0.4]])\nAssertionError: mismatch") == \
        "AssertionError: mismatch"


def test_key_line_of_a_frontend_error_is_the_reason_after_the_caret_with_its_position():
    message = "at 12:4:\ndef k(x):\n    o = tl.arange(0, 37)\n        ^\narange's range must be a power of 2"
    assert findings.key_line(message) == "at 12:4: arange's range must be a power of 2"


# Triton's frontend error as parity records it: the helper's source first, the cause among the wrapper's args
SOURCE_DUMP = ("CompilationError: def gelu_tanh(x):\\n    x_fp32 = x.to(tl.float32)\\n    return 0.5 * x * "
               "(1 + tanh(x_fp32))\\n', <ast.BinOp object at 0x7f>, 'TypeError(\"unsupported operand type(s) for *: "
               "\\'float\\' and \\'NoneType\\'\")' …\n               ^\nCompilationError('def gelu_tanh(x):\\n    "
               "x_fp32 = x.to(tl.float32)\\n', <ast.BinOp object at 0x7f>, 'TypeError(\"unsupported operand type(s) "
               "for *: \\'float\\' and \\'NoneType\\'\")') (raised at flag_gems/utils/libentry.py:721, in run)")


def test_key_line_of_a_source_quoting_error_is_its_cause_and_a_plain_one_is_untouched():
    cause = "TypeError: unsupported operand type(s) for *: 'float' and 'NoneType' (in gelu_tanh)"
    assert reasons.key_line(SOURCE_DUMP) == cause
    assert findings.key_line(SOURCE_DUMP) == cause
    row = verdict.render_md(verdict.build(*columns_and_records(
        [rec("ascend-compile", "compile", "gdn_h", "BT=64", Status.ERROR, reason=SOURCE_DUMP)])))
    assert f"`{cause}` |" in row and "def gelu_tanh" not in row  # the row ends with the cause
    # control: an exception repr that wraps no source is not a cause, so the message's own line stays
    plain = "RuntimeError: launch failed after ValueError('grid too large') on 2 blocks"
    assert reasons.key_line(plain) == plain
    assert findings.key_line(plain) == plain


def test_clip_cuts_at_a_sentence_not_mid_word():
    text = "The kernel needs more UB than the arch has. It asked for 3145728 bits of 1572864 available."
    cut = findings.clip(text, 60)
    assert cut == "The kernel needs more UB than the arch has. …"
    assert findings.clip("short", 60) == "short"
    # a case id has no spaces: it is cut between parameters, never inside one
    assert findings.clip("B=1,T=128,H=1,K=64,V=64,dtype=fp16", 30) == "B=1,T=128,H=1,K=64,V=64 …"


def test_identical_failures_are_one_finding_with_a_count_and_a_planted_other_is_not():
    recs = [failed_compile(f"BT={bt}") for bt in (16, 32, 64)]
    recs.append(failed_compile("BT=128", message="error: 'tt.dot' op operand type mismatch"))  # planted: differs
    groups = findings.group(recs, "ascend-compile")
    assert [len(f.cases) for f in groups] == [3, 1]
    assert groups[0].key == UB and findings.cases_text(groups[0]).startswith("3 of 4: BT=16")


def test_verdict_names_each_check_and_target_and_what_is_not_checked():
    cols, records = columns_and_records([failed_compile("BT=64"),
                                         rec("ascend-compile", "compile", "gdn_h", "BT=16", Status.PASSED,
                                             compile={"ok": True})])
    v = verdict.build(cols, records)
    assert v.targets == ["NVIDIA (Triton)", "Ascend (triton-ascend)"]
    rows = dict(v.rows)
    nvidia, ascend = rows["gdn_h"]
    assert nvidia == "build ✓ · interp ✓" and ascend == "build ✗ undecided #1"
    assert rows["vadd"][1] == "build ✓"
    nv_checked, asc_checked = v.checked  # what each word checked, said once above the table
    assert "build = builds for sm_90" in nv_checked and "interp = the interpreter computes" in nv_checked
    assert v.missing == {"NVIDIA (Triton)": "GPU arithmetic", "Ascend (triton-ascend)": "NPU arithmetic"}
    assert "build = builds for Ascend910B3" in asc_checked and "not checked" not in nv_checked
    text = verdict.render_md(v)
    assert "No tier here sees the hardware's own arithmetic" in text and text.count("No tier here") == 1
    assert "[repro](ascend-compile/repros/gdn_h__BT=64)" in text


def test_owner_field_is_rendered_with_its_draft():
    owned = failed_compile("BT=64", owner=make_owner(OwnerKind.TRITON_ASCEND, "triton-ascend",
                                                     "upstream builds it; only the Ascend lowering rejects it"))
    tier = failed_compile("BT=32", message="error: no hivmc here",
                          owner=make_owner(OwnerKind.TIER, "ascend-compile host toolchain", "no CANN",
                                           provisional=True, settle="nox -s ascend", limit="no-hivmc"))
    cols, records = columns_and_records([owned, tier])
    text = verdict.render_md(verdict.build(cols, records))
    assert "triton-ascend bug" in text and "gdn_h__BT=64/ISSUE.md" in text
    assert "limit of this tier (ascend-compile host toolchain)" in text and "gdn_h__BT=32/TIER.md" in text
    assert "settled by nox -s ascend" in text


def test_known_divergences_are_marked_expected_with_why_and_link_even_from_reason_text():
    old_style = failed_compile("BT=64")
    old_style.update(status=Status.XFAILED, reason=f"known divergence: masked load below the base ({LINK}); "
                                              f"observed: {UB}")
    assert findings.known_of(old_style) == {"reason": "masked load below the base", "link": LINK}
    cols, records = columns_and_records([old_style])
    v = verdict.build(cols, records)
    assert dict(v.rows)["gdn_h"][1] == "build ⚠ 1 known"
    text = verdict.render_md(v)
    assert "### Known and expected" in text and f"[why]({LINK})" in text
    expected = backend_md.expected_failure_rows(records["ascend-compile"])
    assert expected[0][2] and LINK in expected[0][3]  # why expected and link filled


def test_xfailed_cases_never_show_a_worst_error_in_the_terminal():
    recs = [rec("interpret", "interpret", "matmul", "a", Status.PASSED),
            rec("interpret", "interpret", "matmul", "b", Status.XFAILED, reason="known divergence: bf16 dot")]
    recs[1]["reason"] += "; observed: output 'c': err_ratio 5e+11 > 0.005"
    text = backend_md.terminal_summary(recs, {"backend": "interpret"})
    assert "5e+11" not in text and "0.1" in text
    column = Column("interpret", "interpret", "interpret", {})
    assert "5e+11" not in backend_md.render_report(recs, {"backend": "interpret"})
    assert "5e+11" not in divergence_md.render([column], {"interpret": recs}, [], None)
    recs[1]["status"] = Status.FAILED  # planted: the same metrics, now scored
    assert "5e+11" in backend_md.terminal_summary(recs, {"backend": "interpret"})


def test_the_three_reports_state_the_same_count():
    cols, records = columns_and_records([failed_compile("BT=64")])
    recs = records["ascend-compile"]
    line = backend_md.count_line(recs)
    assert line in backend_md.render_report(recs, {"backend": "ascend-compile"})
    terminal = backend_md.terminal_summary(recs, {"backend": "ascend-compile"})
    assert line in " ".join(terminal.split())  # the same sentence, wrapped at 100 columns
    assert f"ascend-compile: {len(recs)}" in divergence_md.render(cols, records, [], None)


def test_heatmap_does_not_call_an_autotuner_dropped_config_a_compile_failure():
    dropped = rec("cuda-compile", "compile", "gdn_h", "cfg2", Status.SKIPPED,
                  reason="the Autotuner drops this config, another one fits: out of resources",
                  compile={"ok": False, "error_kind": "out_of_resources"})
    fits = rec("cuda-compile", "compile", "gdn_h", "cfg1", Status.PASSED, compile={"ok": True})
    g = heatmap.grid(["cuda-compile"], {"cuda-compile": [fits, dropped]})
    assert g.marks == [["ok"]]
    dropped["status"] = Status.FAILED  # planted: no config fits
    assert heatmap.grid(["cuda-compile"], {"cuda-compile": [fits, dropped]}).marks == [["C"]]


def test_report_of_a_file_says_so(tmp_path, capsys):
    f = tmp_path / "results.jsonl"
    f.write_text("")
    assert cli.main(["report", str(f), "--out", str(tmp_path / "D.md")]) == 2
    err = capsys.readouterr().err
    assert "is a file" in err and "INTERNALERROR" not in err


def test_misspelt_kernel_and_module_names_get_a_suggestion_and_paths_a_plain_no_such_file():
    from parity.spec import SpecError, registry

    with pytest.raises(SpecError, match="did you mean 'vector_add'"):
        registry.build(["vector_ad"])
    with pytest.raises(SpecError, match=r"did you mean 'kernels\.basics\.softmax'"):
        registry.build(["kernels.basics.softmx"])
    with pytest.raises(SpecError, match="no such file"):
        registry.build(["kernels/basics/nope.py"])


def test_a_tier_limit_is_never_the_kernels_failure_and_a_planted_kernel_failure_is():
    limit = make_owner(OwnerKind.TIER, "Triton interpreter", "bf16 dot on raw bits", limit="interp-bf16-dot")
    known = rec("interpret", "interpret", "mm", "bf16", Status.XFAILED, owner=limit,
                reason=f"known divergence: bf16 dot ({LINK}); observed: x")
    passed = rec("interpret", "interpret", "mm", "fp32", Status.PASSED)
    col = Column("interpret", "interpret", "interpret", {})
    cell = dict(verdict.build([col], {"interpret": [known, passed]}).rows)["mm"][0]
    assert cell == "interp ✓, 1 tier limit #1"
    author = replace(limit, who=OwnerKind.AUTHOR, name="kernel author", evidence="non-power-of-2 tl.arange, line 12")
    planted = rec("interpret", "interpret", "mm", "fp16", Status.FAILED, owner=author, reason="x")
    v = verdict.build([col], {"interpret": [known, passed, planted]})
    assert dict(v.rows)["mm"][0] == "interp ✗ kernel fix #1, 1 tier limit #2"
    assert "needs a change in the kernel — non-power-of-2 tl.arange, line 12" in verdict.render_md(v)


def test_the_environments_failures_are_named_so_and_a_tier_limit_beside_them_keeps_its_word():
    env = make_owner(OwnerKind.ENVIRONMENT, "triton-ascend version", "enable_ubuf_saving came later")
    failed = rec("ascend-lowered", "ascend-lowered", "fwd", "fp32", Status.ERROR, owner=env, reason="KeyError: x")
    col = Column("ascend-lowered", "ascend-lowered", "ascend-lowered", {})
    assert dict(verdict.build([col], {"ascend-lowered": [failed]}).rows)["fwd"][0] == "lowered – environment #1"
    limit = replace(env, who=OwnerKind.TIER, name="ascend-lowered", limit="lowered-cumsum-i1")
    other = rec("ascend-lowered", "ascend-lowered", "fwd", "bf16", Status.ERROR, owner=limit, reason="y")
    cell = dict(verdict.build([col], {"ascend-lowered": [failed, other]}).rows)["fwd"][0]
    assert cell.startswith("lowered – tier limit")  # negative control: a real tier limit among them


def test_a_results_dir_that_is_a_file_is_one_clear_error(tmp_path):
    import os
    import subprocess
    import sys

    target = tmp_path / "results"
    target.write_text("")
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites", "--backend=interpret", "--kernels=vector_add",
                           f"--results-dir={target}", "-q", "-p", "no:cacheprovider"], capture_output=True,
                          text=True, env={**os.environ, "TRITON_INTERPRET": "1"}, timeout=300, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 4 and "is a file, not a directory" in output and "INTERNALERROR" not in output


def test_the_block_pointer_note_names_the_kernels_that_use_one_and_no_other():
    from parity.report import notes
    from parity.spec import registry

    _, specs = registry.build(["block_ptr_tile", "vector_add"])
    note = notes.block_ptr_note(specs)
    if not notes.deprecates_block_ptr():
        assert note is None  # this triton does not warn: nothing to say
        return
    assert "block_ptr_tile" in note and "vector_add" not in note and "make_tensor_descriptor" in note
    assert notes.block_ptr_note([s for s in specs if s.name == "vector_add"]) is None
    # kernels of one module: only the probe that builds a block pointer is named, not its module's others
    _, probes = registry.build(["probes"])
    note = notes.block_ptr_note(probes)
    assert "probe_block_ptr_non_pow2" in note and "probe_index_local_tensor" not in note, note


def matrix_columns(old_status):
    """The shared kernels' tiers at the default pin (3.8.0) plus the version matrix's dirs at 3.2.0 and 3.9.0."""
    fixed = make_owner(OwnerKind.TRITON, "Triton", "fixed in 3.8.0; upgrade: cuda-compile with Triton 3.2.0 fails "
                                                    "(LinearLayout)")
    crash = {"ok": False, "error_kind": "crash", "message": "LinearLayout.cpp:562: Assertion `x' failed."}
    cols, records = columns_and_records([rec("ascend-compile", "compile", "gdn_h", "BT=64", Status.PASSED,
                                             compile={"ok": True})])
    for c in cols:
        c.env["triton"] = "3.8.0"
    for version, status in (("3.2.0", old_status), ("3.9.0", Status.PASSED)):
        for backend, mode in (("interpret", "interpret"), ("cuda-compile", "compile")):
            label = f"{backend}@triton-{version}"
            cols.append(Column(label, backend, mode, {"triton": version, "target_arch": "sm_90"}, f"{label}/"))
            records[label] = [rec(backend, mode, "vadd", "N=1", Status.PASSED, compile={"ok": True}),
                              rec(backend, mode, "gdn_h", "BT=64", Status.PASSED, compile={"ok": True})]
        if status != Status.PASSED:
            records[f"cuda-compile@triton-{version}"][1].update(
                status=status, owner=fixed, compile=crash, repro="repros/gdn_h__BT=64")
    return cols, records


def test_the_version_matrix_folds_into_one_note_per_kernel_and_every_terminal_line_fits():
    v = verdict.build(*matrix_columns(Status.FAILED))
    assert v.targets == ["NVIDIA (Triton)", "Ascend (triton-ascend)"]
    assert dict(v.rows)["gdn_h"] == ["build ✓ · interp ✓", "build ✓"]  # the table speaks of the default pin
    text = verdict.render_text(v)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "gdn_h: 3.2.0 build ✗ Triton bug, fixed in 3.8.0 #1 · 3.9.0 as 3.8.0" in text
    assert "3.2.0 Triton bug, fixed in 3.8.0 (#1): LinearLayout.cpp:562: Assertion `x' failed." in text
    md = verdict.render_md(v)
    table_lines = [line for line in md.splitlines() if line.startswith("|")]
    assert "@triton" not in md.split("### Other Triton releases")[0]
    assert max(len(line) for line in table_lines[:5]) <= 120
    other = next(line for line in table_lines if "the other 1 kernel(s)" in line)
    assert other.count("as NVIDIA (Triton) 3.8.0") == 2  # vadd: same on both releases, one row for the rest
    # negative control: the same matrix passing everywhere leaves nothing to note for gdn_h
    passing = verdict.build(*matrix_columns(Status.PASSED))
    assert "gdn_h:" not in verdict.render_text(passing) and "fixed in 3.8.0" not in verdict.render_md(passing)


def test_a_probe_rejected_as_expected_reads_so_as_its_compile_record_does():
    col = Column("cuda-compile", "cuda-compile", "compile", {"target_arch": "sm_90"})
    refused = rec("cuda-compile", "compile", "probe_x", "B=16", Status.PASSED, expected_compile_error="must be",
                  compile={"ok": False, "error_kind": "unsupported", "message": "arange's arguments must be"},
                  reason="failed as expected (upstream refuses it): arange's arguments must be")
    built = rec("cuda-compile", "compile", "vadd", "N=1", Status.PASSED, compile={"ok": True})
    v = verdict.build([col], {"cuda-compile": [refused, built]})
    cells = dict((k, c[0]) for k, c in v.rows)
    assert cells["probe_x"] == "build ✓ rejected as expected", cells  # never a bare "builds ✓": it did not build
    assert cells["vadd"] == "build ✓"  # the clean twin: built, and nothing more said
    assert "rejected as expected: the compiler refused a probe" in verdict.render_md(v)
