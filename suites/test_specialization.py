"""Every kernel with dynamic args: sweeping them must not add compilations.

Runs where compilations can be observed: cuda and ascend (launches), cuda-compile and
ascend-compile (warm-up through the compile-only driver). The interpreter has no
compile hooks, so an interpret run does not collect it.
"""

from __future__ import annotations

import pytest

from parity import inputs as inp
from parity.compile.keep_going import keep_going
from parity.compile.specialize import expected_per_base, ir_violations, run_sweep, verdict
from parity.run.record import empty_record
from parity.run.runner import build_inputs


@pytest.mark.parity_modes("run", "compile")  # TRITON_INTERPRET=1 cannot count compilations
def test_specialization(parity, kernel_spec):
    spec, backend = kernel_spec, parity.backend
    if not spec.dynamic_args:
        pytest.skip(f"{spec.name} declares no dynamic_args")
    if spec.unavailable is not None and spec.unavailable():
        pytest.skip(spec.unavailable())

    def run_one(case):
        cpu = build_inputs(spec, case, parity.seed)
        if backend.mode == "run":
            spec.launch(inp.to_device(cpu, backend.device), case.params)
        else:  # a launch option this Triton rejects is the compile suite's finding; count the kernel's compiles
            with keep_going(spec.kernels, lambda: 0, on_option=lambda *rejected: None):
                spec.launch(cpu, case.params)
        backend.synchronize()

    expected = expected_per_base(spec, backend.name)
    problems: list[str] = []
    for arg in spec.dynamic_args:
        for result in run_sweep(spec, arg, run_one):
            seen = len(result.variants_seen) or (1 if result.compiles else 0)
            verdict_text = verdict(result, expected)
            record = empty_record(backend.name, backend.mode, spec.name, f"sweep-{arg}-{result.kernel}",
                                  {"arg": arg, "values": result.values, "launched": result.kernel})
            record["suite"] = "specialization"
            record["compiles"] = result.compiles
            record["timing"]["compile_s"] = result.compile_s
            ir_problems = ir_violations(spec, result.ir)
            record["specialization"] = {
                "arg": arg, "distinct_values": len(result.values), "bases": result.bases,
                "compiles": result.compiles, "per_base_max": result.per_base_max,
                "expected_per_base": expected, "variants_declared": spec.variant_count,
                "variants_seen": seen, "verdict": verdict_text, "ir_checked": len(result.ir),
                "ir_problems": ir_problems,
            }
            mine: list[str] = []
            if verdict_text == "error":  # recorded, not only raised: REPORT.md and results.jsonl show it
                mine.append(f"{result.kernel}: the {arg} sweep raised at {result.error}")
                record["specialization"]["error"] = result.error
            if verdict_text == "storm":
                mine.append(f"{result.kernel}: {result.per_base_max} compilations of one variant and config across "
                            f"{arg} in {result.values} (expected {expected}): a recompile storm; mark {arg} "
                            "do_not_specialize or explain it in the spec's expected_compiles")
            # fewer is fine here (some variants need cases the sweep skips; the compile suite checks
            # coverage); more means the kernel specializes on something the spec does not declare
            if spec.variants and result.variants_seen and seen > spec.variant_count:
                mine.append(f"{result.kernel}: declared {spec.variant_count} heuristic variants "
                            f"({dict(spec.variants)}), the sweep compiled {seen}: {result.variants_seen}")
            mine += [f"{result.kernel}: {p}" for p in ir_problems]
            record["status"] = "error" if verdict_text == "error" else "failed" if mine else "passed"
            record["reason"] = "; ".join(mine) or None
            parity.write(record)
            problems += mine
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)
