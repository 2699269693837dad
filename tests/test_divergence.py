"""DIVERGENCE.md from results dirs of different machines, built from synthetic records."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import torch

from parity import cli
from parity.report import divergence
from parity.results import Status
from parity.results import outputs_store as store
from tests.synthetic_records import rec, write_dir

UB_MESSAGE = "ub overflow, requires 3145728 bits while 1572864 bits available | at `loc(x)` <here>"


def compiled(ok, **extra):
    return {"ok": ok, "stage_reached": "bishengir" if ok else "ttir", "error_kind": None if ok else "ub_overflow",
            "message": None if ok else UB_MESSAGE, "ub_bits": None if ok else 3145728,
            "ub_limit_bits": 1572864, **extra}


def machines(tmp_path: Path) -> list[Path]:
    h200 = {"machine": "h200-node", "device_name": "NVIDIA H200", "target_arch": "sm_90", "triton": "3.6.0"}
    cpu = {"machine": "cpu-box", "triton": "3.6.0"}
    perf_fast = {"ms": 0.1, "baseline_ms": 0.4}
    cuda = write_dir(tmp_path, "cuda", {"backend": "cuda", **h200}, [
        rec("cuda", "run", "softmax", "N=100", Status.PASSED, compiles=1, perf=perf_fast),
        rec("cuda", "run", "softmax", "N=781", Status.PASSED, compiles=1),
        rec("cuda", "run", "matmul", "M=100", Status.PASSED, compiles=1),
    ])
    interp = write_dir(tmp_path, "interpret", {"backend": "interpret", **cpu}, [
        rec("interpret", "interpret", "softmax", "N=100", Status.PASSED, perf={"ms": 0.1, "baseline_ms": 0.01}),
        rec("interpret", "interpret", "softmax", "N=781", Status.FAILED, reason="output 'out': 3% outside | tol",
            repro="repros/softmax__N=781"),
        rec("interpret", "interpret", "matmul", "M=100", Status.XFAILED, reason="known divergence: bf16 dot"),
    ])
    cuda_compile = write_dir(tmp_path, "cuda-compile", {"backend": "cuda-compile", **cpu}, [
        rec("cuda-compile", "compile", "matmul", "BM=256", Status.PASSED, compile=compiled(True)),
        rec("cuda-compile", "compile", "vector_add", "N=1<<20", Status.PASSED, compile=compiled(True)),
        rec("cuda-compile", "compile", "tril_mask", "T=100", Status.PASSED, compile=compiled(True), compiles=2),
    ])
    ascend_compile = write_dir(tmp_path, "ascend-compile", {"backend": "ascend-compile", "cann": None, **cpu}, [
        rec("ascend-compile", "compile", "matmul", "BM=256", Status.FAILED, compile=compiled(False),
            repro="repros/matmul__BM=256"),
        rec("ascend-compile", "compile", "vector_add", "N=1<<20", Status.FAILED,
            compile=compiled(True, launch_error="grid should be less than 65536!")),
        rec("ascend-compile", "compile", "tril_mask", "T=100", Status.PASSED, compile=compiled(True), compiles=5),
    ])
    return [cuda, interp, cuda_compile, ascend_compile]


def test_report_merges_machines_and_names_every_kind(tmp_path, monkeypatch):
    dirs = machines(tmp_path / "reports")
    summary = tmp_path / "step_summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out = tmp_path / "reports" / "DIVERGENCE.md"
    assert cli.main(["report", *map(str, dirs), "--out", str(out)]) == 0
    text = out.read_text()
    header = next(line for line in text.splitlines() if line.startswith("|  ") and "cuda" in line)
    assert [c.strip() for c in header.strip("|").split("|")][1:] == ["cuda", "interpret", "cuda-compile",
                                                                      "ascend-compile"]
    assert "NVIDIA H200" in text and "h200-node" in text and "cpu-box" in text  # environments side by side
    for kind in ("numeric", "compile", "launch", "specialization", "perf"):
        assert f"### {kind} (" in text, kind
    assert "[interpret](interpret/repros/softmax__N=781)" in text  # repro links relative to the report
    assert "[ascend-compile](ascend-compile/repros/matmul__BM=256)" in text
    assert "(known: known divergence: bf16 dot)" in text  # xfailed on one, passed on another: marked known
    # compiler text cannot break a table: every row of a table has the same number of cells
    for block in re.split(r"\n\s*\n", text):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        cells = {len(re.findall(r"(?<!\\)\|", r)) for r in rows}
        assert len(cells) <= 1, block
    step = summary.read_text()
    assert step.startswith("# earlier step\n") and "parity: does each kernel port?" in step
    assert (out.parent / "divergence.png").exists() or "No heatmap" in text


def test_same_results_everywhere_is_no_divergence(tmp_path):
    records = [rec("interpret", "interpret", "softmax", "N=100", Status.PASSED, compiles=None)]
    a = write_dir(tmp_path, "a", {"backend": "interpret", "machine": "one"}, records)
    b = write_dir(tmp_path, "b", {"backend": "interpret", "machine": "two"}, records)
    out = tmp_path / "D.md"
    assert cli.main(["report", str(a), str(b), "--out", str(out)]) == 0
    text = out.read_text()
    assert "0 divergence(s) across 2 results dir(s)" in text and "interpret@a" in text and "interpret@b" in text


def test_numeric_divergence_needs_a_pass_and_a_fail():
    cols = [divergence.Column("a", "cuda", "run", {}), divergence.Column("b", "interpret", "interpret", {})]
    both_fail = {"a": [rec("cuda", "run", "k", "c", Status.FAILED)], "b": [rec("interpret", "interpret", "k", "c",
                                                                           Status.FAILED)]}
    assert divergence.find(cols, both_fail) == []
    split = {"a": [rec("cuda", "run", "k", "c", Status.PASSED)],
             "b": [rec("interpret", "interpret", "k", "c", Status.FAILED)]}
    (d,) = divergence.find(cols, split)
    assert d.kind == "numeric"
    assert d.summary.startswith("computes the fp64 answer on a; runs but fails the fp64 check on b")


def test_cross_output_divergence_from_stored_outputs(tmp_path):
    cols = [divergence.Column("a", "cuda", "run", {}), divergence.Column("b", "ascend", "run", {})]
    records = {c.label: [rec(c.backend, "run", "k", "c", Status.PASSED)] for c in cols}
    x = torch.linspace(-1, 1, 50)
    stored = {("a", "k", "c"): store.load(store.save(tmp_path / "a.npz", store.payload({"o": x}, "d"))),
              ("b", "k", "c"): store.load(store.save(tmp_path / "b.npz", store.payload({"o": x + 0.1}, "d")))}
    (d,) = divergence.find(cols, records, stored)
    assert d.kind == "cross-output" and "b vs a" in d.summary
    # a column that passed within rounding may differ from another by their rounding: no divergence
    records["b"][0]["rounding"] = {"judged": True, "within": True, "sentence": "within fp32 rounding"}
    assert divergence.find(cols, records, stored) == []
    stored[("b", "k", "c")] = stored[("a", "k", "c")]
    del records["b"][0]["rounding"]
    assert divergence.find(cols, records, stored) == []


def test_cli_errors_name_the_dir_and_the_fix(tmp_path, capsys, monkeypatch):
    # the default --out is reports/DIVERGENCE.md under the working directory, and a failed report removes
    # a stale one there: run from tmp_path, so the suite never deletes a user's own report
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "DIVERGENCE.md").write_text("an earlier report")
    assert cli.main(["report", str(tmp_path / "missing")]) == 2
    assert "no such directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli.main(["report", str(tmp_path / "empty")]) == 2
    assert "holds no results.jsonl" in capsys.readouterr().err
    (tmp_path / "blank").mkdir()
    (tmp_path / "blank" / "results.jsonl").write_text("")
    assert cli.main(["report", str(tmp_path / "blank")]) == 2
    err = capsys.readouterr().err
    assert "holds no records" in err and "holds a readable record" in err
    assert not (tmp_path / "reports" / "DIVERGENCE.md").exists()  # the stale report went, here in tmp_path
    assert cli.main(["report", "--out", str(tmp_path / "nothing" / "D.md")]) == 2
    assert "no results dirs" in capsys.readouterr().err


def test_error_classification():
    assert divergence.classify_error("TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'") == \
        "runtime"  # an interpreter error is neither a refused launch nor a failed compile
    assert divergence.classify_error("RuntimeError: grid should be less than 65536!") == "launch"
    assert divergence.classify_error("CompilationError: at 3:4: unsupported") == "compile"
    assert divergence.classify_error("MLIRCompilationError: ub overflow, requires 1 bits") == "compile"


def test_without_matplotlib_the_report_says_how_to_get_the_picture(tmp_path, monkeypatch):
    import builtins

    from parity.report import heatmap
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    g = heatmap.grid(["a"], {"a": [rec("cuda", "run", "k", "c", Status.PASSED)]})
    assert g.values == [[0.1]] and not heatmap.draw(g, tmp_path / "x.png")
    a = write_dir(tmp_path, "a", {"backend": "cuda"}, [rec("cuda", "run", "k", "c", Status.PASSED)])
    assert cli.main(["report", str(a), "--out", str(tmp_path / "D.md")]) == 0
    assert "No heatmap: matplotlib is not installed" in (tmp_path / "D.md").read_text()
    assert not (tmp_path / "divergence.png").exists()


def test_heatmap_separates_new_compile_failures_from_expected_and_known_ones():
    from parity.report import heatmap

    def compile_rec(status: Status, expected: str | None = None) -> dict:
        r = rec("ascend-compile", "compile", "k", "c", status)
        r["compile"] = {"ok": False}
        r["expected_compile_error"] = expected
        return r

    assert heatmap._cell([compile_rec(Status.FAILED)])[1] == "C"
    assert heatmap._cell([compile_rec(Status.XFAILED)])[1] == "K"
    assert heatmap._cell([compile_rec(Status.PASSED, expected="Did you forget")])[1] == "E"


def test_report_skips_bad_files_and_lines_and_still_writes_the_rest(tmp_path, capsys):
    good = write_dir(tmp_path, "cuda", {"backend": "cuda"}, [rec("cuda", "run", "k", "c", Status.PASSED)])
    with (good / "results.jsonl").open("a") as fh:
        fh.write('[1,2,3]\n{"schema": 1, "kernel": "x"}\n')
    empty = write_dir(tmp_path, "interpret", {"backend": "interpret"}, [])  # what `--kernels probes` writes
    noise = write_dir(tmp_path, "noise", {}, [])
    (noise / "results.jsonl").write_bytes(bytes(range(128, 256)) * 4)
    (noise / "env.json").write_bytes(b"\xff\xfe")
    out = tmp_path / "D.md"
    assert cli.main(["report", str(good), str(empty), str(noise), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"{good}/results.jsonl:2: skipped a results line: a JSON list" in err
    assert f"{good}/results.jsonl:3: skipped a results line: missing key(s)" in err
    assert f"{empty}/results.jsonl: skipped, it holds no records" in err
    assert f"{noise}/results.jsonl:1: skipped a results line: not UTF-8" in err
    assert "1 results dir(s)" in out.read_text()  # the rest is still reported


def test_a_failed_report_leaves_no_stale_divergence_md(tmp_path, capsys):
    out = tmp_path / "D.md"
    out.write_text("# an earlier, now stale, report\n")
    (tmp_path / "divergence.png").write_bytes(b"old")
    blank = write_dir(tmp_path, "blank", {"backend": "interpret"}, [])
    assert cli.main(["report", str(blank), "--out", str(out)]) == 2
    assert not out.exists() and not (tmp_path / "divergence.png").exists()
    assert "removed the previous" in capsys.readouterr().err
    good = write_dir(tmp_path, "good", {"backend": "cuda"}, [rec("cuda", "run", "k", "c", Status.PASSED)])
    assert cli.main(["report", str(good), "--out", str(out)]) == 0 and out.exists()  # control


def test_column_labels_name_the_dir_only_when_a_backend_repeats():
    labels = divergence.column_labels([("interpret", "vm"), ("interpret", "user-idxlocal"), ("cuda", "cuda"),
                                       ("cuda-compile", "x"), ("cuda-compile", "x")])
    assert labels == ["interpret@vm", "interpret@user-idxlocal", "cuda", "cuda-compile@x", "cuda-compile@x-2"]


def test_heatmap_marks_an_interpreter_type_error_as_a_runtime_error_not_a_refused_launch():
    from parity.report import heatmap
    r = rec("interpret", "interpret", "k", "c", Status.ERROR, reason="TypeError: 'NoneType' object is not callable")
    assert heatmap._cell([r])[1] == "R"
    r["reason"] = "RuntimeError: grid should be less than 65536!"
    assert heatmap._cell([r])[1] == "L"  # control: a real launch refusal keeps its mark


def test_the_cli_has_one_console_script_entry_point():
    import tomllib

    scripts = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, func = scripts["parity"].partition(":")
    # parity.__main__ hands `record` on before the report stack loads, and everything else to parity.cli.main
    assert (module, func) == ("parity.__main__", "main") and callable(getattr(importlib.import_module(module), func))


def test_divergences_under_a_table_without_a_cross_say_they_are_known_and_no_new_failure():
    from parity.report.divergence_md import headline

    cols = [divergence.Column("a", "cuda", "run", {}), divergence.Column("b", "interpret", "interpret", {})]
    known = {"reason": "declared", "link": "https://example.org/issue/1"}
    declared = {"a": [rec("cuda", "run", "k", "c", Status.PASSED)],
                "b": [rec("interpret", "interpret", "k", "c", Status.XFAILED, known_divergence=known,
                          reason="known divergence: declared (https://example.org/issue/1); observed: x")]}
    divs = divergence.find(cols, declared)
    assert divs and all(d.known for d in divs)
    text = headline(cols, divs, declared)
    assert "None is a new failure (the table above has no ✗): 1 declared known in the specs" in text, text
    # the planted contrast: an undeclared failure is a ✗ and the headline claims nothing of the kind
    failing = {"a": declared["a"], "b": [rec("interpret", "interpret", "k", "c", Status.FAILED)]}
    text = headline(cols, divergence.find(cols, failing), failing)
    assert "None is a new failure" not in text and "known" not in text, text
