"""Classic kernel mistakes are named in plain words, with line and fix, on every tier.

Negative controls: tests/planted_mistakes.py's `mistake_*` kernels, each with one mistake.
Positive control: `control_wrong_numbers`, correct Triton that fails on its numbers, keeps
its own message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.run import mistakes
from tests import planted_mistakes as planted

ROOT = Path(__file__).resolve().parents[1]
SPECS = {s.name: s for s in planted.SPECS}
EXPECTED = {"mistake_index": ("tile_index", "b_x[2]", "tl.where"),
            "mistake_slice": ("tile_slice", "b_x[:B // 2]", "tl.split"),
            "mistake_arange": ("runtime_arange", "tl.arange(0, n)", "n: tl.constexpr"),
            "mistake_typo": ("misspelt_tl", "tl.laod", "did you mean tl.load?")}


def planted_line(kernel: str) -> int:
    marker = "# MISTAKE"
    source = Path(planted.__file__).read_text().splitlines()
    start = next(i for i, line in enumerate(source) if f"def {kernel}_kernel" in line)
    return next(i for i in range(start, len(source)) if marker in source[i]) + 1


def run_tier(backend: str, out: Path) -> dict[str, dict]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                           f"--backend={backend}", "--kernels=tests.planted_mistakes", f"--results-dir={out}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "TRITON_INTERPRET": "0"})  # tests/conftest.py sets it for this process
    lines = (out / "results.jsonl").read_text().splitlines() if (out / "results.jsonl").exists() else []
    assert lines, proc.stdout + proc.stderr
    return {r["kernel"]: r for r in map(json.loads, lines) if r.get("suite") in ("accuracy", "compile")}


@pytest.mark.parametrize("backend", ["interpret", "cuda-compile"])
def test_each_planted_mistake_is_named_with_line_and_fix(backend, tmp_path):
    records = run_tier(backend, tmp_path / backend)
    for kernel, (name, code, fix) in EXPECTED.items():
        r = records[kernel]
        d = r.get("diagnosis")
        assert d and d["mistake"] == name, (kernel, r["reason"])
        assert d["line"] == f"tests/planted_mistakes.py:{planted_line(kernel)}"
        assert code in d["code"] and fix in d["fix"]
        assert r["reason"].startswith(d["what"])  # plain words first, Triton's message after
    control = records["control_wrong_numbers"]
    assert "diagnosis" not in control and not (control["reason"] or "").startswith("a register")
    report = (tmp_path / backend / "REPORT.md").read_text()
    assert "## Mistakes in the kernel source" in report and "did you mean tl.load?" in report


def test_a_correct_kernel_with_a_matching_message_gets_no_diagnosis():
    # the message alone is not enough: the construct must be in the source
    text = "InterpreterError: TypeError(\"'int' object is not iterable\")"
    assert mistakes.diagnose(text, SPECS["control_wrong_numbers"].kernels) is None
    assert mistakes.diagnose(text, SPECS["mistake_index"].kernels)["mistake"] == "tile_index"


def test_a_full_slice_spelt_with_none_is_not_a_tile_slice():
    # upstream's test_slice keeps an axis with `data[None, None:]`: a full slice, no mistake (control: `[:B // 2]`)
    import ast

    def finds(source: str) -> list[str]:
        fn = ast.parse(f"def k(data, B):\n    return {source}\n").body[0]
        return [ast.unparse(node) for node, _ in mistakes._find_slice(fn)]

    assert finds("data[None, None:]") == [] and finds("data[None:None, :]") == []
    assert finds("data[:B // 2]") == ["data[:B // 2]"]


def test_a_compiler_line_elsewhere_is_not_this_mistake():
    # "at 2:8" points at the tl.arange line, not the subscript: a non-jit helper call, say
    text = "at 2:8:\ndef mistake_index_kernel(x, out, B: tl.constexpr):\nDid you forget to add @triton.jit ?"
    assert mistakes.diagnose(text, SPECS["mistake_index"].kernels) is None


def test_a_decorator_lambda_that_indexes_args_is_not_a_tile_index():
    # the interpreter's "forget to add @triton.jit" (a module-level `exp = tl.exp` alias, say) names no
    # line; the heuristics lambda's args["B"] is host code, so nothing in the kernel body matches
    text = "InterpreterError: Did you forget to add @triton.jit ? (`exp` is not a JIT function)"
    assert mistakes.diagnose(text, [planted.control_heuristic_kernel]) is None
    assert mistakes.diagnose(text, SPECS["mistake_index"].kernels)["mistake"] == "tile_index"
