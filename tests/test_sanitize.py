"""--sanitize (parity.run.sanitize): memcheck's report is read, a case with invalid accesses fails and is the
author's, a clean one passes; the child runs with torch's caching allocator off. A stand-in compute-sanitizer
(it runs the child and prints what memcheck prints) exercises the plumbing here; the H200 run checks memcheck."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from parity.results import OwnerKind
from parity.run import sanitize

# memcheck's words for the H200 measurement issue 39 quotes: a 700-element tail past a BLOCK of 512
MEMCHECK = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at tail_scale_kernel+0x1d0
=========     by thread (188,0,0) in block (1,0,0)
=========     Address 0x7f0a2c000af0 is 1 bytes after the nearest allocation at 0x7f0a2c000000 of size 2,800 bytes
=========
========= ERROR SUMMARY: 24 errors
"""

FAKE = """#!{python}
import os, subprocess, sys
args = sys.argv[1:]
assert args[:2] == ["--tool", "memcheck"], args
child = args[args.index("--print-limit") + 2:]
assert os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING") == "1", "the caching allocator must be off"
code = subprocess.run(child).returncode
bad = child[child.index("--kernel") + 1] == os.environ["FAKE_BAD_KERNEL"]
print({report!r} if bad else "========= ERROR SUMMARY: 0 errors")
sys.exit(86 if bad else int(os.environ.get("FAKE_EXIT", code)))
"""


def test_memchecks_report_is_read():
    report = sanitize.parse_report(MEMCHECK)
    assert report["errors"] == 24
    (first,) = report["first"]
    assert first.startswith("Invalid __global__ read of size 4 bytes; tail_scale_kernel+0x1d0")
    assert "1 bytes after the nearest allocation" in first
    assert sanitize.parse_report("========= ERROR SUMMARY: 0 errors") == {"errors": 0, "first": []}
    assert sanitize.parse_report("no sanitizer here")["errors"] is None


def test_a_case_with_invalid_accesses_fails_as_the_authors_and_its_twin_passes(tmp_path, monkeypatch):
    fake = tmp_path / "compute-sanitizer"
    fake.write_text(FAKE.format(python=sys.executable, report=MEMCHECK))
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_BAD_KERNEL", "oob_tail_scale_masked")
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    assert sanitize.missing() is None
    from parity.backends import get_backend
    from parity.triage import decide
    from tests.planted_oob import SPECS

    backend = get_backend("interpret")  # the child's tier: the plumbing is the same as on cuda
    specs = {s.name: s for s in SPECS}

    def run(name: str) -> dict:
        spec = specs[name]
        (case,) = spec.cases("quick")
        return sanitize.sanitized_case(spec, case, backend, seed=0, level="quick", kernels="tests.planted_oob")[0]

    # values right, accesses wrong: the pass is overruled
    record = run("oob_tail_scale_masked")
    assert record["status"] == "failed" and record["reason"].startswith("compute-sanitizer memcheck: 24 invalid")
    assert record["sanitizer"]["errors"] == 24 and record["sanitizer"]["exit"] == 86
    # with the kernel's unmasked store in sight, the author owns it on memcheck's word alone
    monkeypatch.setenv("FAKE_BAD_KERNEL", "oob_tail_store")
    record = run("oob_tail_store")
    assert "planted_oob.py:32" in " ".join(record["oob"]["unmasked"]), record["oob"]
    owner = decide(record, {}, "")
    assert owner is not None and owner.who is OwnerKind.AUTHOR, owner
    assert not owner.provisional and "memcheck" in owner.evidence, owner
    monkeypatch.setenv("FAKE_BAD_KERNEL", "none")  # control: memcheck finds nothing, the clean twin passes
    record = run("oob_tail_scale_masked")
    assert record["status"] == "passed" and record["sanitizer"]["errors"] == 0 and "oob" not in record, record
    # the H200's finding: a child that wrote a pass and then exited 11, with memcheck's summary at 0 errors
    monkeypatch.setenv("FAKE_EXIT", "11")  # (the interpreter's red zones fail the unmasked kernels themselves)
    record = run("oob_tail_scale_masked")
    assert record["status"] == "crashed" and "exited 11" in record["reason"], record
    assert record["sanitizer"]["exit"] == 11 and "ERROR SUMMARY: 0 errors" in record["sanitizer"]["output_tail"]


def test_sanitize_on_a_cpu_tier_is_a_usage_error_that_names_the_red_zones():
    done = subprocess.run([sys.executable, "-m", "pytest", "suites/test_accuracy.py", "--backend=interpret",
                           "--sanitize", "--kernels=tests.planted_oob", "-p", "no:cacheprovider", "-q"],
                          cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=300)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]  # pytest's usage error
    assert "compute-sanitizer" in done.stderr and "red zones" in done.stderr


def _gpu_sanitizer() -> str | None:
    if not torch.cuda.is_available():
        return "needs an NVIDIA GPU"
    return sanitize.missing()


@pytest.mark.skipif(_gpu_sanitizer() is not None, reason=str(_gpu_sanitizer()))
def test_on_the_gpu_memcheck_finds_the_unmasked_tail_and_passes_its_masked_twin(tmp_path):
    """The real thing (the H200): BLOCK 1024 over N = 1000 passes the fp64 check on the GPU; memcheck, with the
    caching allocator off, finds its stray accesses."""
    done = subprocess.run([sys.executable, "-m", "pytest", "suites/test_accuracy.py", "--backend=cuda", "--sanitize",
                           "--no-perf", "--kernels=tests.planted_oob", f"--results-dir={tmp_path}",
                           "-p", "no:cacheprovider", "-q", "-n", "0"],
                          cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True, timeout=1800)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    records = {r["kernel"]: r for r in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    print({k: (r["status"], r["sanitizer"]["errors"], (r["reason"] or "")[:200]) for k, r in records.items()})
    for kernel in ("oob_tail_scale", "oob_tail_store", "oob_tail_sum"):
        r = records[kernel]
        # memcheck may let the kernel finish (failed) or stop it, which poisons the context (crashed)
        # on the H200 (CUDA 13.0's memcheck 2025.3.1) the two stray-write kernels exited 11 with memcheck's
        # summary at 0 errors: crashed, never passed; the summing one fails on its values
        assert r["status"] in ("failed", "crashed"), r
        assert r["owner"]["who"] == "author", r["owner"]
    clean = records["oob_tail_scale_masked"]
    assert clean["status"] == "passed" and clean["sanitizer"]["errors"] == 0, clean
