"""A spec whose fp64 reference raises: an `error` of that case, owned by the spec's author, never a pass, never
absent, never "kernel fix"; its good twin beside it still passes (tests/planted_reference.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from parity.backends import get_backend
from parity.report.verdict import owner_tag, result
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from parity.triage import drafts
from parity.triage.decide import decide
from parity.triage.owner import SPEC_AUTHOR
from tests import planted_reference

ROOT = Path(__file__).resolve().parents[1]
RAISES_AT, INPUTS_AT = (next(n for n, line in enumerate(Path(planted_reference.__file__).read_text().splitlines(), 1)
                             if line.strip() == wanted)
                        for wanted in (planted_reference.RAISING_LINE, planted_reference.INPUTS_LINE))


def _run(name: str) -> dict:
    spec = next(s for s in planted_reference.SPECS if s.name == name)
    record, _ = run_case(spec, spec.cases("quick")[0], get_backend("interpret"), seed=0,
                         cache=ReferenceCache(enabled=False))
    return record


def test_a_raising_reference_is_an_error_naming_its_file_line_and_exception():
    record = _run("planted_reference_raises")
    assert record["status"] == "error" and record["error_kind"] == "reference"
    assert f"tests/planted_reference.py:{RAISES_AT}" in record["reason"], record["reason"]
    assert "KeyError: 'scale'" in record["reason"] and record["reason"].startswith("the spec's reference raised")
    assert _run("planted_reference_good")["status"] == "passed"  # control: the same kernel, a good reference


class _Library:
    name = "somelib"


def test_the_spec_author_owns_it_even_for_a_librarys_kernel_and_the_words_never_say_kernel():
    record = _run("planted_reference_raises")
    owner = decide(record, {}, "", library=_Library())
    assert owner is not None and owner.who == "author" and owner.name == SPEC_AUTHOR
    assert not owner.provisional and "reference raised" in owner.evidence
    assert owner_tag(owner) == "spec fix"
    note = drafts.input_note({**record, "owner": owner}, "interpret")
    assert note is not None and note[0] == "AUTHOR.md" and "the spec's reference raised" in note[1]
    assert "bug in the kernel" not in note[1]
    # control: an ordinary launch error of the same case keeps the usual rules (the kernel's, then the library's)
    plain = decide({**record, "error_kind": None, "reason": "ValueError: bad launch"}, {}, "", library=_Library())
    assert plain is not None and plain.name != SPEC_AUTHOR and plain.who == "library"


def test_the_verdict_cell_is_a_cross_with_spec_fix_never_a_check():
    record = {**_run("planted_reference_raises"), "suite": "accuracy"}
    record["owner"] = decide(record, {}, "")
    cell = result("interp", [record], "NVIDIA (Triton)", "", {})
    assert cell.mark == "✗" and "spec fix" in cell.text and "kernel fix" not in cell.text
    good = {**_run("planted_reference_good"), "suite": "accuracy"}
    assert result("interp", [good], "NVIDIA (Triton)", "", {}).mark == "✓"  # control


def _tier_run(tier: str, out: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, dict]]:
    """tests.planted_reference through one tier in a fresh process: its output and its accuracy/compile records."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "suites", "-q", "-p", "no:cacheprovider", "-n", "0",
                           f"--backend={tier}", "--kernels=tests.planted_reference", f"--results-dir={out}"],
                          cwd=ROOT, env={**os.environ, "TRITON_INTERPRET": "1" if tier == "interpret" else "0"},
                          capture_output=True, text=True, timeout=600)
    lines = (out / "results.jsonl").read_text().splitlines()
    return proc, {r["kernel"]: r for r in map(json.loads, lines) if r.get("suite") in ("accuracy", "compile")}


def test_a_run_with_a_raising_reference_writes_its_record_and_exits_nonzero(tmp_path):
    out = tmp_path / "interpret"
    proc, records = _tier_run("interpret", out)
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert records["planted_reference_good"]["status"] == "passed"
    bad = records["planted_reference_raises"]
    assert bad["status"] == "error" and bad["owner"]["name"] == SPEC_AUTHOR
    assert (out / bad["repro"] / "AUTHOR.md").is_file() and not (out / bad["repro"] / "repro.py").exists()
    assert "interp ✗ spec fix" in proc.stdout and "✗ kernel fix" not in proc.stdout
    inputs = records["planted_inputs_raise"]  # make_inputs raised: the same, never a missing record
    assert inputs["status"] == "error" and inputs["error_kind"] == "inputs" and inputs["owner"]["name"] == SPEC_AUTHOR
    assert inputs["reason"].startswith(f"the spec's make_inputs raised at tests/planted_reference.py:{INPUTS_AT}")
    assert "the spec's make_inputs raised" in (out / inputs["repro"] / "AUTHOR.md").read_text()


def test_a_raising_make_inputs_on_a_compile_tier_is_an_error_record_too(tmp_path):
    proc, records = _tier_run("cuda-compile", tmp_path / "cuda-compile")
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert records["planted_reference_good"]["status"] == "passed"  # control: the same kernel builds
    bad = records["planted_inputs_raise"]
    assert bad["status"] == "error" and bad["error_kind"] == "inputs" and bad["owner"]["name"] == SPEC_AUTHOR
