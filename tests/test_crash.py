"""Crashes are first-class: a dead worker's case is `crashed` whatever it wrote before dying, names its signal,
blames no tool, groups as one finding, and never reads as green or as a negative time."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from parity.report.findings import group, grouping_key
from parity.report.heatmap import grid
from parity.results import Owner, OwnerKind, Status, empty_record
from parity.results.files import retire_record
from parity.run.faults import exit_words
from parity.run.wallclock import SessionClock
from parity.triage import decide

NODE = "suites/test_accuracy.py::test_accuracy[tail_sum[N=1000,BLOCK=1024]]"


def _passed(kernel: str = "tail_sum", case: str = "N=1000,BLOCK=1024") -> dict:
    r = empty_record("ascend-lowered", "run", kernel, case, {"N": 1000})
    r.update(status="passed", suite="accuracy", metrics={"err_ratio": 0.0, "max_abs_err": 0.0})
    return r


class _Popen:
    def __init__(self, code: int) -> None:
        self.code = code

    def wait(self, timeout: float | None = None) -> int:
        return self.code


def _crash_in(tmp_path: Path, written: list[dict], returncode: int = -6, specs: list | None = None) -> list[dict]:
    """Run the controller's crash hook over a dead worker gw1 whose part holds `written`; the merged records."""
    from parity.backends import get_backend
    from parity.plugin import STATE_KEY, ParitySession, pytest_handlecrashitem
    from parity.results import merge_parts

    (tmp_path / "results-gw1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in written))
    state = ParitySession(backend=get_backend("ascend-lowered"), level="quick", seed=0, results_dir=tmp_path,
                          final_dir=tmp_path, specs=specs or [], worker="main", workers=2,
                          kernels_option="tests.planted_oob")
    config = SimpleNamespace(stash=pytest.Stash(), rootpath=Path(__file__).resolve().parents[1])
    config.stash[STATE_KEY] = state
    node = SimpleNamespace(gateway=SimpleNamespace(id="gw1", _io=SimpleNamespace(popen=_Popen(returncode))))
    pytest_handlecrashitem(crashitem=NODE, report=SimpleNamespace(node=node, longrepr="worker 'gw1' crashed"),
                           sched=SimpleNamespace(config=config))
    if state.writer is not None:
        state.writer.close()
    return merge_parts(tmp_path)


def test_a_pass_written_before_the_worker_died_is_overruled_by_the_crash(tmp_path):
    other = _passed("other_kernel", "N=4")
    records = {r["kernel"]: r for r in _crash_in(tmp_path, [other, _passed()])}
    died = records["tail_sum"]
    assert died["status"] == "crashed", died
    assert "killed by SIGABRT (signal 6)" in died["reason"] and "recorded `passed`" in died["reason"]
    assert died["crash"]["returncode"] == -6 and died["crash"]["before"]["status"] == "passed"
    assert died["owner"].who is OwnerKind.AUTHOR, died["owner"]
    assert records["other_kernel"]["status"] == "passed"  # negative control: the worker's other records stand
    assert len(records) == 2


def test_a_crash_the_worker_recorded_itself_is_kept(tmp_path):
    own = {**_passed(), "status": "crashed", "reason": "CUDA error: an illegal memory access was encountered"}
    (only,) = _crash_in(tmp_path, [own])
    assert only["reason"] == own["reason"] and "crash" not in only


def test_a_case_with_no_record_gets_one(tmp_path):
    (only,) = _crash_in(tmp_path, [], returncode=3)
    assert only["status"] == "crashed" and "exit code 3" in only["reason"] and "before" not in only["crash"]


def test_exit_words_and_retire_record(tmp_path):
    assert exit_words(-11) == "killed by SIGSEGV (signal 11)"
    assert exit_words(1) == "exit code 1" and exit_words(None) == "exit status unknown"
    part = tmp_path / "results-gw0.jsonl"
    part.write_text(json.dumps(_passed()) + "\n" + json.dumps(_passed("k2")) + "\n")
    assert retire_record(part, "tail_sum", "N=1000,BLOCK=1024", "accuracy")["status"] == "passed"
    assert [json.loads(x)["kernel"] for x in part.read_text().splitlines()] == ["k2"]
    assert retire_record(part, "tail_sum", "N=1000,BLOCK=1024", "accuracy") is None


def _who(owner: Owner | None) -> OwnerKind | None:
    return owner.who if owner is not None else None


def test_no_vendor_is_named_on_a_crash_or_on_a_compile_only_pass():
    # the false statement of issue 39: the interpreter's wrong values against a compile pass and a dead worker
    interp = {"backend": "interpret", "kernel": "k", "case": "N=8", "status": Status.FAILED, "params": {"N": 8},
              "reason": "output 'out': 1% off", "metrics": {"worst_index": [3], "max_abs_err": 1.0}}
    compiled = {"backend": "ascend-compile", "status": Status.PASSED, "compile": {"ok": True}}
    died = {"backend": "ascend-lowered", "kernel": "k", "case": "N=8", "status": Status.CRASHED, "params": {"N": 8},
            "reason": "the process running this case died (killed by SIGABRT (signal 6))"}
    owner = decide(interp, {"ascend-compile": compiled, "ascend-lowered": died})
    assert owner is not None and owner.who is OwnerKind.AUTHOR, owner
    owner = decide(died, {"cuda-compile": compiled})
    assert owner is not None and owner.who is OwnerKind.AUTHOR and "out-of-bounds" in owner.evidence, owner
    # issue 49: the red-zone tier computing the same case right settles it (parity.triage.unreproduced; controls
    # in tests/test_unreproduced.py): then the crash is not the kernel's
    owner = decide(died, {"interpret": {"status": Status.PASSED}, "cuda-compile": compiled})
    assert owner is not None and owner.who is OwnerKind.TRITON_ASCEND and "red zones" in owner.evidence, owner
    # controls: a run tier that computes the right values still makes the interpreter the odd one out, and a
    # compile tier's pass still speaks against another compiler's compile failure
    right = {"backend": "ascend-lowered", "status": Status.PASSED}
    assert _who(decide(interp, {"ascend-lowered": right})) is OwnerKind.TRITON
    ascend_err = {"backend": "ascend-compile", "kernel": "k", "case": "N=8", "status": Status.FAILED, "params": {},
                  "compile": {"ok": False, "error_kind": "mlir_error", "stage_reached": "ttadapter",
                              "message": "error: 'tt.load' op failed to legalize"}}
    assert _who(decide(ascend_err, {"cuda-compile": compiled})) is OwnerKind.TRITON_ASCEND
    # a compiler that dies while compiling is still its own evidence
    abort = {"backend": "ascend-compile", "kernel": "k", "case": "N=8", "status": Status.CRASHED, "params": {},
             "compile": {"ok": False, "error_kind": "crash", "message": "bishengir-compile: Segmentation fault"}}
    assert _who(decide(abort, {})) is OwnerKind.TRITON_ASCEND


def test_worker_ids_and_addresses_do_not_split_a_finding():
    a = {**_passed(), "status": "crashed", "case": "N=1000", "reason": "Fatal error in worker 'gw0' at 0x7f3a2c001000"}
    b = {**_passed(), "status": "crashed", "case": "N=2000", "reason": "Fatal error in worker 'gw1' at 0x7f99aa002000"}
    assert len(group([a, b], "ascend-lowered")) == 1
    c = {**b, "reason": "another error in worker 'gw1'"}
    assert len(group([a, c], "ascend-lowered")) == 2  # control: a different message is a different finding
    assert grouping_key("worker gw12 at 0xdeadbeef00") == "worker gw… at 0x…"


def test_the_heatmap_marks_a_crash_and_never_colours_it():
    died = {**_passed(), "status": "crashed", "metrics": {"err_ratio": 0.0, "max_abs_err": 0.0}}
    g = grid(["ascend-lowered"], {"ascend-lowered": [died]})
    assert g.marks == [["D"]] and g.values == [[None]]
    ok = grid(["ascend-lowered"], {"ascend-lowered": [_passed()]})
    assert "D" not in ok.marks[0][0]  # control


def test_wall_phases_are_never_negative():
    clock = SessionClock()
    clock.stamp("configured", 1_796_000_000.0)
    clock.item(0.0, 0.0)  # xdist's report of a crashed item carries no span
    clock.item(1_796_000_010.0, 1_796_000_020.0)
    clock.stamp("finish", 1_796_000_030.0)
    phases = clock.phases()
    assert all(v >= 0 for v in phases.values()), phases
    assert phases["collection and worker start (to the first item)"] == 10.0
    clock.stamp("finish", 1_796_000_000.0)  # an end stamped before its start: left out, not printed negative
    assert "after the last item (xdist shutdown)" not in clock.phases()
    from parity.report.backend_md import session_phases

    assert "-1796" not in "\n".join(session_phases({"a": -1796326031.0, "b": 2.0}))


def test_a_crash_gets_author_md_with_the_out_of_bounds_hint_and_the_unmasked_lines(tmp_path):
    from tests.planted_oob import tail_scale_kernel, tail_scale_masked_kernel

    spec = SimpleNamespace(name="tail_sum", family=None, kernels=(tail_scale_kernel,))
    (died,) = _crash_in(tmp_path, [_passed()], specs=[spec])
    folder = tmp_path / died["repro"]
    author = (folder / "AUTHOR.md").read_text()
    assert "## Out-of-bounds access" in author and "usually means an out-of-bounds access" in author
    assert "planted_oob.py:24: b_x = tl.load(x + o_x)" in author and "planted_oob.py:25: tl.store(" in author
    rerun = (folder / "rerun.py").read_text()
    assert NODE in rerun and "--backend=ascend-lowered" in rerun and "no:xdist" in rerun
    compile(rerun, "rerun.py", "exec")
    assert "not run here" in died["repro_note"]
    # control: a kernel with every access masked gets the hint, but no line is blamed
    spec = SimpleNamespace(name="tail_sum", family=None, kernels=(tail_scale_masked_kernel,))
    (tmp_path / "masked").mkdir()
    (died,) = _crash_in(tmp_path / "masked", [], specs=[spec])
    author = (tmp_path / "masked" / died["repro"] / "AUTHOR.md").read_text()
    assert "parity sees no unmasked tl.load or tl.store" in author and "planted_oob.py" not in author


@pytest.mark.parametrize(("mode", "workers", "warned"), [("run", 0, True), ("interpret", 0, True),
                                                         ("run", 2, False), ("compile", 0, False)])
def test_a_run_without_workers_says_a_crash_would_end_it(mode, workers, warned):
    """-n 0 on a tier that launches in-process: a SIGFPE or segfault takes the whole run, so the header says so;
    with workers (the crash becomes a record) or on a compile tier (compiles are forked) it says nothing."""
    from parity.plugin import STATE_KEY, pytest_report_header

    state = SimpleNamespace(workers=workers, backend=SimpleNamespace(mode=mode))
    header = pytest_report_header(SimpleNamespace(stash={STATE_KEY: state}))
    assert bool(header) is warned and (not warned or "-n 1 or more" in header)
