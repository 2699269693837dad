"""Compiles of a kernel a library generates during the launch reach parity's compile counter.

The controls run in tests/codegen_controls.py, in a fresh process with the interpreter off (compile
hooks fire only for real compiles); they skip without upstream triton's nvidia backend.
"""

from __future__ import annotations

from pathlib import Path

from tests.fresh_controls import run_controls

CONTROLS = Path(__file__).with_name("codegen_controls.py")


def test_generated_kernel_controls(tmp_path):
    out = run_controls(CONTROLS, tmp_path, "generated kernel controls")
    assert " passed" in out and "skipped" not in out.splitlines()[-1], out[-2000:]


def test_the_report_names_what_the_launches_compiled():
    from parity.report.backend_md import compile_count_rows, specialization_rows

    generated = {"kernel": "add_func_kernel_rank_1", "file": "/c/code_cache/pointwise_dynamic_ab_add.py", "compiles": 1}
    records = [{"kernel": "gems_add", "compiles": 1, "compiled_kernels": [generated]} for _ in range(2)]
    assert compile_count_rows(records) == [["gems_add", 2, 2, 1, "add\\_func\\_kernel\\_rank\\_1 x2"]]
    spec = {"arg": "M", "distinct_values": 9, "bases": 1, "compiles": 1, "per_base_max": 1, "expected_per_base": 1,
            "variants_seen": 1, "variants_declared": 1, "verdict": "ok"}
    sweep = {"kernel": "gems_add", "specialization": spec,
             "params": {"launched": "add_func_kernel_rank_1", "defined_in": generated["file"]}}
    assert "unlisted, from pointwise\\_dynamic\\_ab\\_add.py" in specialization_rows([sweep])[0][1]
