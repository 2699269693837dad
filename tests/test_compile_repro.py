"""Compile-failure repros end to end: a kernel that cannot compile gives a standalone repro.py
that exits 1 with the compiler's message, and 0 once the kernel is fixed.

The repros are generated in a fresh process with the interpreter off (tests/conftest.py turns
it on here), by the python of each tier's venv; a missing tier is a skip naming the venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from parity.repro.compile_repro import key_source, option_sources, value_source
from parity.repro.run_repro import is_standalone
from parity.repro.source import SourceError
from tests.tier_python import tier_python

ROOT = Path(__file__).parent.parent
PYTHONS = {b: tier_python(b) for b in ("cuda-compile", "ascend-compile")}


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTHON") and k != "TRITON_INTERPRET"}


def _generate(backend: str, out: Path) -> list[dict]:
    python = PYTHONS[backend] if PYTHONS[backend].exists() else Path(sys.executable)
    proc = subprocess.run([str(python), "-m", "tests.compile_repro_controls", str(out), backend], cwd=ROOT,
                          env=_clean_env(), capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
        if "No module named 'triton" in proc.stderr or "No module named 'torch'" in proc.stderr:
            pytest.skip(f"{backend}: {python} lacks triton/torch; run `nox -s {backend}`")
        pytest.fail(f"generating {backend} repros failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    records = json.loads(proc.stdout.strip().splitlines()[-1])
    if records and "skip" in records[0]:
        pytest.skip(records[0]["skip"])
    return records


def _run(backend: str, script: Path) -> subprocess.CompletedProcess[str]:
    """The repro in a fresh process where parity cannot be imported: -I, cwd is the repro dir."""
    python = PYTHONS[backend] if PYTHONS[backend].exists() else Path(sys.executable)
    return subprocess.run([str(python), "-I", script.name], cwd=script.parent, env=_clean_env(),
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def cuda_repros(tmp_path_factory) -> tuple[Path, dict[str, dict]]:
    out = tmp_path_factory.mktemp("cuda-compile")
    return out, {r["kernel"]: r for r in _generate("cuda-compile", out)}


def test_parity_is_not_importable_where_the_repro_runs(cuda_repros):
    out, records = cuda_repros
    probe = out / records["ctl_index"]["repro"] / "probe.py"
    probe.write_text("import parity\n")
    assert _run("cuda-compile", probe).returncode != 0


def test_the_repro_re_run_launches_on_the_tiers_device_type(cuda_repros):
    """A launcher that checks its tensors' device type still gets its compile described and a repro."""
    out, records = cuda_repros
    record = records["ctl_device_typed"]
    assert record["repro"], record.get("repro_error")
    assert (out / record["repro"] / "repro.py").exists()


def test_a_known_mistake_gets_an_author_note_not_a_vendor_draft(cuda_repros):
    out, records = cuda_repros
    assert records["ctl_index"]["diagnosis"]["mistake"] == "tile_index"
    assert (out / records["ctl_index"]["repro"] / "AUTHOR.md").exists()
    # out of resources: a config the target cannot hold is the author's to change, never a vendor draft
    big = records["ctl_big_tile"]
    assert big["owner"]["who"] == "author" and "cannot hold" in big["owner"]["evidence"]
    assert (out / big["repro"] / "AUTHOR.md").exists() and not list((out / big["repro"]).glob("ISSUE*.md"))


@pytest.mark.parametrize(("kernel", "message", "fix"), [
    ("ctl_index", "forget to add @triton.jit", ("b_x[o])", "b_x)")),
    ("ctl_big_tile", "requires 262144 bytes while 232448", ("'num_stages': 4", "'num_stages': 1")),
])
def test_cuda_compile_repro_fails_then_passes_once_fixed(cuda_repros, kernel, message, fix):
    out, records = cuda_repros
    record = records[kernel]
    assert record["status"] == "failed" and record["repro"], record.get("repro_error")
    folder = out / record["repro"]
    script = folder / "repro.py"
    text = script.read_text()
    assert is_standalone(text) and "import parity" not in text and "GPUTarget(\"cuda\", ARCH, 32)" in text
    # a known kernel mistake, a config sm_90 cannot hold: a note for the author, no vendor draft
    assert not list(folder.glob("ISSUE*.md"))
    note = (folder / "AUTHOR.md").read_text()
    assert message in note and "File at:" not in note and "python repro.py" in note
    run = _run("cuda-compile", script)
    assert run.returncode == 1, run.stdout + run.stderr
    assert message in run.stdout + run.stderr and "FAIL" in run.stdout
    assert fix[0] in text
    script.write_text(text.replace(*fix))
    fixed = _run("cuda-compile", script)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert fixed.stdout.startswith("ok: compiled")


def test_ascend_compile_repro_fails_on_ub_overflow_then_passes_once_fixed(tmp_path):
    records = [r for r in _generate("ascend-compile", tmp_path) if r["status"] == "failed"]
    assert records, "the UB-overflow control compiled"
    record = records[0]
    assert record["repro"], record.get("repro_error")
    script = tmp_path / record["repro"] / "repro.py"
    text = script.read_text()
    assert is_standalone(text.replace("import importlib.util\n", ""))  # stdlib: finds ascendnpu-ir's bin/
    assert "class CompileOnlyDriver" in text and 'GPUTarget("npu", ARCH, 0)' in text
    run = _run("ascend-compile", script)
    # the 256x256 tile overflows a local buffer (cc or ub, by arch); the compiler's bits are printed
    assert run.returncode == 1 and "overflow, requires" in run.stdout + run.stderr, run.stdout + run.stderr
    tiles = "'BM': 256, 'BN': 256, 'BK': 256"
    assert tiles in text
    script.write_text(text.replace(tiles, "'BM': 128, 'BN': 128, 'BK': 128"))
    fixed = _run("ascend-compile", script)
    assert fixed.returncode == 0 and fixed.stdout.startswith("ok:"), fixed.stdout + fixed.stderr


# --- pure rendering rules ---------------------------------------------------------------------

def test_specialization_values_render_as_source_or_are_refused():
    assert key_source((3,)) == "(3,)" and key_source("BLOCK") == "'BLOCK'"
    assert value_source(True) == "True" and value_source(None) == "None"
    with pytest.raises(SourceError):
        key_source(1.5)
    with pytest.raises(SourceError):
        value_source(object())
    # machine paths and defaults stay out; what differs is kept
    assert option_sources({"num_warps": 8, "num_stages": 3, "extern_libs": (("libdevice", "/x"),)},
                          {"num_warps": 4, "num_stages": 3}) == {"num_warps": "8"}
