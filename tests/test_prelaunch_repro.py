"""A library op that raises before any Triton launch still gets a repro: ISSUE.md to the library, repro.py.

Negative control: the same launcher loaded as one of parity's own kernels keeps today's behaviour (no
repro, `repro_error` says nothing was launched).
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from parity.backends import get_backend
from parity.driver import pipeline
from parity.repro import prelaunch
from parity.repro import run_repro as repro
from parity.run.refcache import ReferenceCache
from parity.run.runner import run_case
from tests import planted_prelaunch as planted


def _attach(spec, results: Path) -> dict:
    backend, cache = get_backend("interpret"), ReferenceCache(enabled=False)
    case = spec.cases("quick")[0]
    record, _ = run_case(spec, case, backend, seed=0, cache=cache)
    assert record["status"] == "error" and "cannot be interpreted as an integer" in record["reason"], record
    pipeline.judge_and_repro(record, spec, case, backend, seed=0, cache=cache, results_dir=results)
    return record


@pytest.fixture(scope="module")
def library_repro(tmp_path_factory):
    results = tmp_path_factory.mktemp("results")
    record = _attach(planted.in_library, results)
    return record, results / record["repro"]


def test_a_library_raise_before_any_launch_gets_a_library_draft(library_repro):
    record, folder = library_repro
    assert "repro_error" not in record and record["finding_of"]["name"] == "planted_lib"
    line = inspect.getsourcelines(planted.library.num_cores)[1] + 2  # the `return len(range(device))` line
    draft = (folder / "ISSUE.md").read_text()
    assert f"planted_lib.py:{line}, in num_cores" in draft
    assert "TypeError: 'str' object cannot be interpreted as an integer" in draft
    assert "before launching any Triton kernel" in draft and "in scale" in draft  # the library frames
    assert "python repro.py" in draft and "suites/test_accuracy.py::test_accuracy[scale_in_library[N=" in draft


def _standalone(script: Path) -> subprocess.CompletedProcess[str]:
    """Run repro.py where only the library is importable: no parity, no PYTHON* settings but its path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(TRITON_INTERPRET="1", PYTHONPATH=str(planted.SITE))
    return subprocess.run([sys.executable, script.name], cwd=script.parent, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def test_the_repro_raises_standalone_and_passes_once_fixed(library_repro, tmp_path):
    _, folder = library_repro
    script = (folder / "repro.py").read_text()
    assert repro.is_standalone(script.replace("import importlib.machinery", "").replace("import importlib.util", "")
                               .replace("import importlib", "").replace("import types", ""))
    done = _standalone(folder / "repro.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL: planted_lib.scale raised TypeError" in done.stdout and "in num_cores" in done.stderr
    # the same call against a fixed library returns: exit 0
    site = tmp_path / "site"
    site.mkdir()
    fixed = (planted.SITE / "planted_lib.py").read_text().replace("len(range(device))", "8")
    (site / "planted_lib.py").write_text(fixed)
    (tmp_path / "repro.py").write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(TRITON_INTERPRET="1", PYTHONPATH=str(site))
    done = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0 and "ok: planted_lib.scale returned" in done.stdout, done.stdout + done.stderr


def test_a_call_recorded_on_a_device_this_machine_lacks_runs_on_cpu_tensors(library_repro, tmp_path):
    # a CPU tier's stand-in device (the compile tiers present cuda:0 / npu:0): the same call, its tensors on
    # the CPU, still fails the library's way (exit 1, FAIL line) instead of crashing in torch's .to("cuda")
    _, folder = library_repro
    script = (folder / "repro.py").read_text()
    assert "'cpu')" in script
    for kind in ("cuda", "npu"):
        if kind == "cuda" and torch.cuda.is_available():
            continue
        (tmp_path / "repro.py").write_text(script.replace("'cpu')", f"'{kind}')"))
        done = _standalone(tmp_path / "repro.py")
        assert done.returncode == 1, done.stdout + done.stderr
        assert "FAIL: planted_lib.scale raised TypeError" in done.stdout, done.stdout + done.stderr
        assert f"no {kind} device here, so its tensors are on the CPU" in done.stdout


def test_a_library_that_cannot_be_imported_here_is_refused_not_crashed(library_repro, tmp_path):
    # FlagGems and mojo stop in their device detection at import on a machine without the device: exit 2 with a
    # REFUSED line that says so (verify then records "refuses to run: ..."), not a traceback read as a crash
    _, folder = library_repro
    site = tmp_path / "site"
    site.mkdir()
    (site / "planted_lib.py").write_text('raise RuntimeError("No device were detected on your machine")\n')
    (tmp_path / "repro.py").write_text((folder / "repro.py").read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(TRITON_INTERPRET="1", PYTHONPATH=str(site))
    done = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "REFUSED: planted_lib cannot be imported here (RuntimeError: No device were detected" in done.stdout


def test_parity_s_own_kernel_raising_before_any_launch_keeps_no_repro(tmp_path):
    record = _attach(planted.in_parity, tmp_path)
    assert not record.get("repro") and "finding_of" not in record
    assert record["repro_error"].startswith("ReproError: ") and "no Triton launch was recorded" in record["repro_error"]


def test_ownership_reads_the_raising_frame():
    try:
        planted.library.num_cores()
    except TypeError as exc:
        owned = prelaunch.owning_library(planted.in_library, exc)
        assert owned is not None and owned[0].name == "planted_lib" and "num_cores" in owned[1]
    try:
        planted.own.num_cores()
    except TypeError as exc:
        assert prelaunch.owning_library(planted.in_parity, exc) is None


def test_a_raise_inside_triton_is_named_as_triton_s_on_the_library_s_kernel():
    """A compile error of the library's kernel raises in Triton's frames, called from the launcher: the reason
    says so, not that the library's own code raised. Negative control: the library's own raise keeps its words."""
    compiler: dict = {}
    exec("def compile_kernel():\n    raise TypeError(\"unsupported operand type(s) for +: 'int' and 'NoneType'\")",
         {"__name__": "triton.compiler.planted"}, compiler)
    launcher: dict = {"__name__": "planted_lib", "compile_kernel": compiler["compile_kernel"]}
    exec("def launch():\n    compile_kernel()", launcher)
    with pytest.raises(TypeError) as raised:
        launcher["launch"]()
    owned = prelaunch.owning_library(planted.in_library, raised.value)
    assert owned is not None and owned[1].startswith("Triton raised on the library's kernel"), owned
    with pytest.raises(TypeError) as own:
        planted.library.num_cores()
    assert "in the library's own code" in prelaunch.owning_library(planted.in_library, own.value)[1]


def test_the_leftover_debugging_scan_is_drafted_to_its_library_with_the_parity_command(tmp_path):
    from dataclasses import replace

    from libraries._debug_lint import source_check_launch

    spec = replace(planted.in_library, name="scan_in_library", family="gdn_npu",
                   launch=source_check_launch(lambda: [planted.library.debug_kernel]),
                   reference=lambda i, p: {"debug_calls": torch.zeros(1, dtype=torch.float64)})
    backend, cache = get_backend("interpret"), ReferenceCache(enabled=False)
    case = spec.cases("quick")[0]
    record, _ = run_case(spec, case, backend, seed=0, cache=cache)
    assert "LeftoverDebug" in record["reason"], record["reason"]
    pipeline.judge_and_repro(record, spec, case, backend, seed=0, cache=cache, results_dir=tmp_path)
    assert "repro_error" not in record and record["finding_of"]["name"].startswith("gdn-tri-inverse")
    folder = tmp_path / record["repro"]
    draft = (folder / "ISSUE.md").read_text()
    assert "leftover debugging" in draft and "device_print (planted_lib.py:" in draft
    assert "suites/test_accuracy.py::test_accuracy[scan_in_library[N=1000]]" in draft
    assert not (folder / "repro.py").exists() and "re-run through parity" in record["repro_note"]


def test_the_parity_command_names_the_module_that_holds_the_spec(monkeypatch):
    import types

    holder = types.ModuleType("planted_specs")
    holder.SPECS = [planted.in_library]
    monkeypatch.setitem(sys.modules, "planted_specs", holder)
    record = {"kernel": "scale_in_library", "case": "N=1000"}
    assert prelaunch.parity_command(planted.in_library, record, "cuda") == (
        "pytest 'suites/test_accuracy.py::test_accuracy[scale_in_library[N=1000]]' --backend=cuda --level=full "
        "--kernels=planted_specs")
