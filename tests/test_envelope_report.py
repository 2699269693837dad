"""`parity report`'s envelope section: the table and sentences of a results dir's envelope.jsonl, in DIVERGENCE.md
and index.html, read without touching the dir; a dir without one says "not run" (the negative control)."""

from __future__ import annotations

import html
import warnings
from pathlib import Path

import parity.envelope.limits as limits
import parity.report.envelope_md as envelope_md
from parity import cli
from parity.envelope.limits import Observation
from parity.results import ResultsDir, Status
from tests.synthetic_records import rec, write_dir

MAX = 1 << 20
TAKEN = "2026-12-06T21:00:00+00:00"


def grid_row() -> dict:
    bad = limits.crossings(Observation("ascend", {}, grids=[["env_grid_kernel", [2048, 32, 1]]],
                                       launch_errors=[["env_grid_kernel", "grid should be less than 65536!"]]))
    return {"kernel": "env_grid_bh", "target": "ascend", "target_name": "Ascend (triton-ascend)",
            "axis": {"name": "T", "low": 1000, "high": MAX}, "params": {"B": 1, "H": 32, "T": 1000},
            "last_ok": 131008, "first_bad": 131009, "crossings": [c.__dict__ for c in bad], "bad_probe": {},
            "ok_probe": {"offsets": "i32"}, "storm": {"sizes": [1008, 1024, 1040], "compiles": 1}}


def results_dir(root: Path) -> Path:
    return write_dir(root, "ascend-compile", {"backend": "ascend-compile", "machine": "cpu-box"}, [
        rec("ascend-compile", "compile", "env_grid_bh", "T=1000", Status.PASSED,
            compile={"ok": True, "stage_reached": "bishengir"})])


def snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def report(tmp_path: Path, d: Path) -> tuple[str, str]:
    out = tmp_path / "out" / "DIVERGENCE.md"
    assert cli.main(["report", str(d), "--out", str(out)]) == 0
    return out.read_text(encoding="utf-8"), (out.parent / "index.html").read_text(encoding="utf-8")


def test_a_results_dir_with_an_envelope_shows_its_table_and_sentence_and_is_not_rewritten(tmp_path):
    d = results_dir(tmp_path / "reports")
    ResultsDir(d).envelope.write_text(envelope_md.dumps([grid_row()], TAKEN), encoding="utf-8")
    before = snapshot(d)
    md, page = report(tmp_path, d)
    assert snapshot(d) == before, "report time rewrote the results dir"
    assert f"## {envelope_md.TITLE}" in md and f"taken {TAKEN}" in md
    assert "| env_grid_bh | Ascend (triton-ascend) | T | 131,008 | 131,009 | grid | 1 |" in md
    sentence = "env_grid_bh ports on Ascend (triton-ascend) up to T = 131,008 (B=1, H=32); at T >= 131,009"
    assert sentence in md and envelope_md.NOT_RUN not in md
    assert "<td>131,009</td>" in page and html.escape(sentence) in page and "grid should be less than 65536!" in page


def test_a_results_dir_without_an_envelope_says_not_run(tmp_path):
    md, page = report(tmp_path, results_dir(tmp_path / "reports"))
    assert envelope_md.NOT_RUN in md and "131,009" not in md
    assert envelope_md.TITLE in page and "not run" in page.lower() and "<td>131,009</td>" not in page


def test_the_file_round_trips_and_a_bad_line_is_a_warning_not_a_lost_section():
    text = envelope_md.dumps([grid_row()], TAKEN) + "not json\n" + '{"no": "kernel"}\n'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = envelope_md.loads(text, "envelope.jsonl")
    assert [r["kernel"] for r in rows] == ["env_grid_bh"] and rows[0]["taken"] == TAKEN
    assert len(caught) == 2 and "envelope.jsonl:2" in str(caught[0].message)
    skipped = {"kernel": "k2", "target": "cuda", "skipped": "T: not checked: the search passed its 300 s budget"}
    idle = [{"kernel": k, "target": t, "skipped": "no axis to grow: the spec has no dynamic_args"}
            for k in ("m1", "m2") for t in ("ascend", "cuda")]
    md = envelope_md.markdown([envelope_md.Envelope("cuda-compile", [*rows, skipped, *idle])])
    assert "| k2 | cuda | – | not checked |" in md and "k2 on cuda: not checked: T: not checked" in md
    assert "2 kernel(s) have no axis to grow (no dynamic_args; `--grow` names one): m1, m2." in md
    assert "| m1 |" not in md  # one line for them, not a row each


def test_the_envelope_file_is_no_run_file_so_a_run_leaves_it_in_place():
    from parity.results.dirs import ENVELOPE, RUN_FILES

    assert ENVELOPE not in RUN_FILES
