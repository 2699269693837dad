"""parity map: a planted bundle and its results on two Ascend tiers, one kernel per verdict. The negative controls: a
failing record is never shown as "ports" (the author's wrong values, a tier's own limit), and "ports" always says
what was checked and what was not."""

from __future__ import annotations

import json
from pathlib import Path

from parity.record import bundle as fmt
from parity.record import library_map as lm
from parity.results import Record, Status, empty_record, write_results
from parity.triage.owner import make_owner

SOURCE = "@triton.jit\ndef k(x, y, z):\n    v = tl.load(x)\n    old = tl.atomic_add(y, v)\n    tl.store(z, old)\n"


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def plant_bundle(root: Path) -> Path:
    fmt.write_header(root, ["pytest"], {}, {})
    (root / "sources" / "a1.py").write_text(SOURCE, encoding="utf-8")
    lines = [{"type": "process", "pid": 7, "argv": ["pytest/__main__.py", "-q", "tests/test_abs.py"],
              "env": {"device": "NVIDIA H100 80GB HBM3", "interpret": False}},
             {"type": "process", "pid": 8, "argv": ["pytest/__main__.py", "-q", "tests/test_div.py"]}]
    for i, (pid, name) in enumerate([(7, "k_pass"), (7, "k_wrong"), (8, "k_tier"), (8, "k_newer"), (8, "k_build")]):
        lines.append({"type": "launch", "id": f"{pid}-{i}", "order": i, "key": name, "specialization": "s",
                      "kernel": {"id": f"id{i}", "name": name, "module": "m", "qualname": name,
                                 "source": "sources/a1.py"},
                      "grid": [1], "args": [], "kwargs": {}, "buffers": {}, "views": {}, "pointers": {},
                      "outputs": [], "tensors": f"tensors/{pid}-{i}.safetensors"})
    (root / "manifest-7.jsonl").write_text("".join(json.dumps({"schema": fmt.SCHEMA, **e}) + "\n" for e in lines),
                                           encoding="utf-8")
    return root


def rec(backend: str, mode: str, kernel: str, status: Status, owner: tuple[str, str, str] | None = None) -> Record:
    r = empty_record(backend, mode, kernel, "launch=0", {"launch": 0})
    r["status"] = status
    r["suite"] = "compile" if mode == "compile" else "accuracy"
    if owner is not None:
        r["owner"] = make_owner(*owner)
        r["repro"] = f"repros/{kernel}"
    return r


def plant_results(tmp: Path) -> list[Path]:
    lowered, compiled = tmp / "lowered", tmp / "compiled"
    lowered.mkdir()
    compiled.mkdir()
    write_results(lowered, [
        rec("ascend-lowered", "run", "k_pass", Status.PASSED),
        rec("ascend-lowered", "run", "k_wrong", Status.FAILED, ("author", "kernel author", "12% of outputs differ")),
        rec("ascend-lowered", "run", "k_tier", Status.FAILED, ("tier", "ascend-lowered", "the lowering's own limit")),
        rec("ascend-lowered", "run", "k_newer", Status.XFAILED,
            ("triton-ascend", "triton-ascend", "fixed in 3.2.1; upgrade triton-ascend")),
        rec("ascend-lowered", "run", "k_build", Status.PASSED),
    ])
    write_results(compiled, [
        rec("ascend-compile", "compile", "k_pass", Status.PASSED),
        rec("ascend-compile", "compile", "k_wrong", Status.PASSED),
        rec("ascend-compile", "compile", "k_build", Status.FAILED,
            ("author", "kernel author", "ub overflow, requires 8454144 bits")),
    ])
    return [compiled, lowered]


def test_the_map_gives_each_planted_kernel_its_verdict(tmp_path: Path, capsys: object) -> None:
    bundle = plant_bundle(tmp_path / "b")
    tests = tmp_path / "tests.tsv"
    tests.write_text("tests/test_abs.py\t3\t0\t1 passed\t1\ntests/test_cos.py\t3\t0\tnothing was recorded\t0\n",
                     encoding="utf-8")
    assert lm.main(bundle, plant_results(tmp_path), tests) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    rows = {c[1]: c for c in (cells(line) for line in out.splitlines() if line.startswith("| test_"))}
    assert rows["k_pass"][2].startswith("ports. Checked: ascend-compile: compiled")
    assert "outputs compared with the outputs recorded on NVIDIA H100 80GB HBM3" in rows["k_pass"][2]
    assert "Not checked: the NPU's own arithmetic" in rows["k_pass"][2]
    assert ("ascend-compile and ascend-lowered cannot see this known NPU bug: https://github.com/flagos-ai/FlagTree/"
            "issues/1083") in rows["k_pass"][2], "the used atomic return's known NPU bug is named, not a bare pass"
    # negative controls: a failing record is never "ports"
    assert rows["k_wrong"][2] == "wrong on Ascend" and rows["k_wrong"][7] == "wrong on Ascend (0/1)"
    assert rows["k_tier"][2] == "not checked" and "the lowering's own limit" in rows["k_tier"][4]
    assert rows["k_newer"][2] == "needs a newer triton-ascend"
    assert rows["k_build"][2] == "does not build on Ascend" and rows["k_build"][5].endswith("k\\_build")
    assert rows["—"][0] == "test_cos" and rows["—"][2] == "not checked", "an op with no launch is listed"
    assert "Ops (test files; an op's verdict is its worst kernel's): 3" in out


def test_an_interpreter_recording_is_never_called_a_gpus() -> None:
    said = lm.recorded_outputs({"device": "cpu", "interpret": True})
    assert "interpreter's" in said and "GPU" not in said.replace("no GPU", "")
    assert lm.recorded_outputs({"device": "NVIDIA H200", "interpret": False}) == "the outputs recorded on NVIDIA H200"
    assert lm.recorded_outputs(None) == "the recorded outputs"  # no env line: nothing claimed


def test_the_html_page_holds_the_same_map(tmp_path: Path, capsys: object) -> None:
    bundle = plant_bundle(tmp_path / "b")
    page = tmp_path / "map.html"
    assert lm.main(bundle, plant_results(tmp_path), None, page) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    text = page.read_text(encoding="utf-8")
    md_rows = [line for line in out.splitlines() if line.startswith("| test_")]
    assert text.count("<tr>") == len(md_rows) + 1, "one row per markdown row, and the header"
    assert "k_wrong" in text and "wrong on Ascend (0/1)" in text and "does not build on Ascend" in text
    assert "k\\_build" not in text, "markdown escapes are undone in the page"
    # control: without --html no page is written
    again = tmp_path / "again"
    again.mkdir()
    before = set(tmp_path.rglob("*.html"))
    assert lm.main(bundle, plant_results(again), None, None) == 0 and set(tmp_path.rglob("*.html")) == before


def test_record_verdicts() -> None:
    assert lm.record_verdict(rec("ascend-lowered", "run", "k", Status.SKIPPED)) == lm.UNCHECKED
    assert lm.record_verdict(rec("ascend-lowered", "run", "k", Status.FAILED)) == lm.UNCHECKED, "no owner: no pass"
    crash = rec("ascend-lowered", "run", "k", Status.CRASHED, ("triton-ascend", "triton-ascend", "SIGFPE"))
    assert lm.record_verdict(crash) == lm.WRONG
    build = rec("ascend-lowered", "run", "k", Status.ERROR, ("triton-ascend", "triton-ascend", "MLIR pass failed"))
    assert lm.record_verdict(build) == lm.NO_BUILD
    replay = rec("ascend-compile", "compile", "k", Status.ERROR, ("author", "kernel author", "provisional"))
    replay["reason"] = "launch: parity.record.replay.NotReplayable: not replayable here: pointer table(s)"
    assert lm.record_verdict(replay) == lm.UNCHECKED, "the replay's own limit is no verdict on the kernel"
    empty = rec("ascend-compile", "compile", "k", Status.ERROR, ("author", "kernel author", "coreDim = 0"))
    empty["reason"] = "launch: grid (0, 1, 1) has no blocks"
    assert lm.record_verdict(empty) == lm.WRONG


def test_op_of() -> None:
    assert lm.op_of(["x", "--quick", "tests/test_FLA/test_fused.py"], "m") == "test_fused"
    assert lm.op_of(["pytest/__main__.py", "-q", "tests/tet_silu_and_mul.py"], "m") == "tet_silu_and_mul"
    assert lm.op_of(["pytest/__main__.py", "-q"], "lightllm.k") == "lightllm.k"


def test_a_kernel_without_a_known_npu_bugs_pattern_gets_no_note() -> None:
    assert lm.npu_bugs("@triton.jit\ndef k(x, y):\n    tl.atomic_add(y, tl.load(x))\n") == (), \
        "a bare atomic_add only accumulates, which FlagTree#1083 found right"
    row = lm.Row("test_abs", "k", {"ascend-lowered": lm.TierCell(lm.PORTS, launches=1, checked=1)})
    assert "cannot see" not in lm.ports_text(row) and "Not checked: the NPU's own arithmetic" in lm.ports_text(row)
    assert "its source was not kept, so the known silent NPU bugs were not looked for" in lm.ports_text(row)
    row.source_read = True
    assert "its source has the pattern of none of the 4 known silent NPU bugs no CPU tier" in lm.ports_text(row)
