"""record.py: per-worker parts, merging, corrupt lines and schema checks."""

from __future__ import annotations

import json

import pytest

from parity.results import SCHEMA, ResultWriter, SchemaError, empty_record, load_results, merge_parts, read_records


def rec(kernel: str, case: str) -> dict:
    r = empty_record("interpret", "interpret", kernel, case, {"N": 1})
    r["status"] = "passed"
    return r


def test_parts_merge_into_one_sorted_file(tmp_path):
    for worker, kernel in (("gw1", "b"), ("gw0", "a")):
        w = ResultWriter(tmp_path, worker)
        w.write(rec(kernel, "N=1"))
        w.close()
    merged = merge_parts(tmp_path)
    assert [r["kernel"] for r in merged] == ["a", "b"]
    assert not list(tmp_path.glob("results-*.jsonl"))
    assert [r["kernel"] for r in load_results(tmp_path)] == ["a", "b"]


def test_truncated_last_line_is_skipped_with_a_warning_naming_file_and_line(tmp_path):
    w = ResultWriter(tmp_path, "gw0")
    w.write(rec("a", "N=1"))
    w.close()
    with w.path.open("a") as fh:
        fh.write('{"schema": 1, "kernel": "b", "sta')
    with pytest.warns(UserWarning, match=r"results-gw0.jsonl:2"):
        records = list(read_records(w.path))
    assert [r["kernel"] for r in records] == ["a"]


def test_schema_mismatch_is_a_clear_error(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({**rec("a", "N=1"), "schema": SCHEMA + 1}) + "\n")
    with pytest.raises(SchemaError, match="re-run"):
        list(read_records(path))


def test_missing_results_dir_names_the_fix(tmp_path):
    with pytest.raises(FileNotFoundError, match="nox -s interpret"):
        load_results(tmp_path / "nothing")


def test_non_finite_floats_stay_standard_json(tmp_path):
    w = ResultWriter(tmp_path, "main")
    r = rec("a", "N=1")
    r["metrics"] = {"err_ratio": float("inf")}
    w.write(r)
    w.close()
    line = w.path.read_text()
    assert "Infinity" not in line and '"inf"' in line


def test_every_malformed_line_is_skipped_with_one_warning_naming_file_line_and_why(tmp_path):
    path = tmp_path / "results.jsonl"
    good = json.dumps(rec("a", "N=1")).encode()
    lines = [good, b"[1,2,3]", b'{"schema": 1, "kernel": "x"}', bytes(range(128, 256)), b'{"schema": 1, "ke',
             json.dumps({**rec("b", "N=1"), "status": "fine"}).encode(), good, b'{"schema": 1, "kernel": "c", "st']
    path.write_bytes(b"\n".join(lines))
    with pytest.warns(UserWarning) as caught:
        records = list(read_records(path))
    assert [r["kernel"] for r in records] == ["a", "a"]  # control: the good lines come through
    messages = [str(w.message) for w in caught]
    assert len(messages) == 6, messages
    for lineno, why in ((2, "JSON list, not a record"), (3, "missing key(s) backend, mode, case"), (4, "not UTF-8"),
                        (5, "the file is corrupt here"), (6, "unknown status 'fine'"), (8, "probably interrupted")):
        assert any(m.startswith(f"{path}:{lineno}: ") and why in m for m in messages), (lineno, messages)
    assert "interrupted" not in " ".join(m for m in messages if ":5:" in m)  # a middle line is damage


def test_record_problem_accepts_a_complete_record():
    from parity.results import record_problem
    assert record_problem(rec("a", "N=1")) is None
    assert record_problem({**rec("a", "N=1"), "kernel": 3}) == "kernel and case must be strings"
