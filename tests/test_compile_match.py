"""A failing compile record finds its compile in the describing re-run by what it is, not by its index.

The end-to-end control (tests/compile_match_controls.py, cuda-compile in a fresh process with the
interpreter off) plants a launcher whose compile order flips between the tier and the re-run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from parity.repro.compile_match import match, rejected_option
from tests.fresh_controls import run_controls

CONTROLS = Path(__file__).with_name("compile_match_controls.py")
REJECTED = "KeyError: 'Keyword argument enable_ubuf_saving was specified but unrecognised'"


def _comp(kernel: str, ok: bool = True, **extra) -> dict:
    return {"kernel": kernel, "variant": {}, "config": {}, "ok": ok, "stage_reached": "ttir" if ok else "ast",
            "error_kind": None if ok else "unsupported", "launch_error": None, "message": None, **extra}


def _entry(kernel: str, **values) -> dict:
    return {"kernel": kernel, "source": "...", "values": values}


def test_the_index_is_kept_where_it_agrees():
    compiles = [_comp("a", config={"BLOCK": 32}), _comp("b", ok=False)]
    assert match(compiles, [_entry("a", BLOCK=32), _entry("b")]) == [0, 1]


def test_a_re_run_in_another_order_matches_by_kernel_and_config():
    """Negative control: the bare index pairs each record with the other kernel's compile."""
    compiles = [_comp("a", ok=False), _comp("b", config={"BLOCK": 64}), _comp("b", ok=False, config={"BLOCK": 32})]
    entries = [_entry("b", BLOCK=32), _entry("b", BLOCK=64), _entry("a")]
    found = match(compiles, entries)
    assert found == [2, 1, 0]
    assert [entries[i]["kernel"] for i in range(3)] != [c["kernel"] for c in compiles]  # what the index gave


def test_equal_records_take_equal_compiles_in_order_of_occurrence():
    compiles = [_comp("a", ok=False, config={"B": 1})] * 3
    assert match(compiles, [_entry("a", B=1), _entry("x"), _entry("a", B=1), _entry("a", B=1)]) == [0, 2, 3]


def test_a_rejected_launch_option_before_a_failing_compile():
    """cuda-compile: the rejected launch and its retry are two records; the re-run may list more first."""
    option = _comp("a", ok=False, stage_reached=None, error_kind="launch_option", message=REJECTED)
    compiles = [option, _comp("a", ok=False)]
    entries = [_entry("x"), {"kernel": "a", "launch_option": "enable_ubuf_saving"}, _entry("a")]
    assert rejected_option(option) == "enable_ubuf_saving"
    assert match(compiles, entries) == [1, 2]


def test_a_launchers_raise_over_an_option_matches_the_kernel_that_was_rejected():
    """ascend-compile records a launcher's KeyError under the spec's first kernel, whatever raised it."""
    raised = _comp("listed_first", ok=False, stage_reached=None, error_kind=None, launch_error=REJECTED)
    compiles = [_comp("cumsum"), raised]
    entries = [_entry("cumsum"), {"kernel": "npu_only_kernel", "launch_option": "enable_ubuf_saving"}]
    assert match(compiles, entries) == [0, 1]


def test_a_record_the_re_run_never_compiled_is_unmatched():
    assert match([_comp("a", ok=False)], [_entry("b")]) == [None]
    assert match([_comp("a", ok=False, config={"BLOCK": 32})], [_entry("a", BLOCK=64)]) == [None]


def test_planted_flipping_launcher_gets_its_repro_in_a_clean_process(tmp_path):
    from parity.backends.cuda.compile import CudaCompileBackend

    reason = CudaCompileBackend().unavailable()
    if reason:
        pytest.skip(reason)
    run_controls(CONTROLS, tmp_path, "compile-match controls", timeout_s=900)
