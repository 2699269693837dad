"""The "Ascend performance" section and the verdict's "perf: N notes", from synthetic records (and without)."""

from __future__ import annotations

from parity.report import ascend_perf_md, backend_md, divergence_md, verdict
from parity.report.divergence import Column
from parity.results import Status
from tests import synthetic_records

HARD = {"rule": "cores.hard_coded", "line": "npu/fa.py:253",
        "evidence": "the grid has 20 programs and the loop steps by 20: both hard-coded; 20 of Ascend910B1's 24 "
                    "cube cores busy, 4 idle", "change": "read num_aicore"}
CV = {"rule": "cv.mix", "line": "npu/fa.py:88", "evidence": "a cube-and-vector kernel", "change": "advice only"}


def _compile(case, findings, arch="Ascend910B1"):
    advice = {"arch": arch, "findings": findings, "not_checked": {}}
    return synthetic_records.rec("ascend-compile", "compile", "fa", case, Status.PASSED, compile={"ok": True},
                                 ascend_perf=advice)


def _plain(case):
    return synthetic_records.rec("ascend-compile", "compile", "fa", case, Status.PASSED, compile={"ok": True})


def test_notes_are_distinct_findings_counted_over_compiles():
    records = [_compile("BM=128", [HARD, CV]), _compile("BM=64", [HARD, CV]), _compile("BM=32", [])]
    found = ascend_perf_md.notes(records)
    assert len(found) == 2 and [e["compiles"] for e in found.values()] == [2, 2]
    assert ascend_perf_md.kernel_rows(records) == [["fa", "Ascend910B1", 3, 2, "cores.hard_coded, cv.mix"]]
    assert ascend_perf_md.cell_note(records, "ascend-compile/") == \
        "[perf: 2 notes](ascend-compile/REPORT.md#ascend-performance)"


def test_a_clean_kernel_gets_a_line_but_no_note_and_a_non_ascend_dir_no_section():
    clean = [_compile("BM=128", [])]
    assert ascend_perf_md.cell_note(clean) is None
    assert ascend_perf_md.kernel_rows(clean) == [["fa", "Ascend910B1", 1, 0, "none"]]
    assert ascend_perf_md.sections([_plain("BM=128")]) == []


def test_report_and_verdict_carry_the_notes():
    records = [_compile("BM=128", [HARD, CV])]
    env = {"backend": "ascend-compile", "target_arch": "Ascend910B1"}
    text = backend_md.render_report(records, env)
    assert "## Ascend performance" in text and "hard-coded" in text
    cols = [Column("ascend-compile", "ascend-compile", "compile", env, "ascend-compile/")]
    cell = verdict.build(cols, {"ascend-compile": records}).rows[0][1][0]
    assert cell.startswith("build ✓") and "[perf: 2 notes](ascend-compile/REPORT.md#ascend-performance)" in cell
    built = verdict.build(cols, {"ascend-compile": records})
    assert "| build ✓ · [perf: 2 notes](ascend-compile/REPORT.md#ascend-performance)" in verdict.render_md(built)
    assert "build ✓ · perf: 2 notes" in verdict.render_text(built) and "](" not in verdict.render_text(built)
    plain = verdict.build(cols, {"ascend-compile": [_plain("BM=128")]}).rows[0][1][0]
    assert "perf" not in plain
    div = divergence_md.render(cols, {"ascend-compile": records}, [], None)
    assert "## Ascend performance (ascend-compile)" in div
