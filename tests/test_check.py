"""`parity check NAMES`: a module anywhere goes through each tier with its root on PYTHONPATH, a tier that cannot run
here is an honest skip naming its fix, a misspelt name gets the module near it (never a shared kernel), and the
check's own DIVERGENCE.md leaves the full run's alone."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from parity.backends import backend_class
from parity.cli import check
from parity.spec import SpecError, registry

ROOT = Path(__file__).resolve().parents[1]
L2NORM = ROOT / "examples" / "user_kernels" / "l2norm.py"


def test_a_path_outside_the_clone_becomes_a_module_with_its_root_and_one_inside_needs_none(tmp_path):
    pkg = tmp_path / "proj" / "mykernels"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "rows.py").write_text("SPECS = []\n")
    assert check.resolve("proj/mykernels/rows.py", tmp_path) == check.Target("mykernels.rows", tmp_path / "proj")
    assert check.resolve(str(L2NORM), tmp_path) == check.Target("examples.user_kernels.l2norm", None)
    assert check.resolve("vector_add", tmp_path) == check.Target("vector_add", None)  # a name stays a name
    env = check.child_env([check.Target("mykernels.rows", tmp_path / "proj")], {"PYTHONPATH": "/x"}, {"A": "1"})
    assert env["PYTHONPATH"] == os.pathsep.join([str(tmp_path / "proj"), "/x"]) and env["A"] == "1"


def test_a_misspelt_path_names_the_file_beside_it(tmp_path):
    (tmp_path / "rows.py").write_text("SPECS = []\n")
    with pytest.raises(SystemExit, match=r"no such file.*did you mean .*rows\.py"):
        check.resolve("rowz.py", tmp_path)


def test_the_folder_is_named_after_what_was_checked():
    assert check.slug(["examples.user_kernels.l2norm"]) == "l2norm"
    assert check.slug(["/tmp/a/mine.py", "vector_add"]) == "mine+vector_add"


def test_a_tier_without_its_venv_or_tools_is_a_skip_that_names_the_command(tmp_path, monkeypatch):
    interpret, ascend, lowered = (backend_class(n) for n in ("interpret", "ascend-compile", "ascend-lowered"))
    python, why = check.python_for(interpret, tmp_path)
    assert python is None and "nox -s venv-upstream" in why and "3.11" not in why  # no venv_note: none said
    python, why = check.python_for(ascend, tmp_path)
    assert python is None and "nox -s venv-ascend" in why and "3.11" in why
    monkeypatch.setattr(lowered, "host_missing", classmethod(lambda cls: "missing: mlir-opt-19; apt-get ..."))
    assert check.python_for(lowered, tmp_path) == (None, "missing: mlir-opt-19; apt-get ...")
    venv = tmp_path / ".nox" / "venv-upstream" / "bin"
    venv.mkdir(parents=True)
    (venv / "python").write_text("")
    assert check.python_for(backend_class("cuda-compile"), tmp_path) == (str(venv / "python"), "")
    assert list(check.hardware_free()) == ["interpret", "cuda-compile", "ascend-compile", "ascend-lowered"]


def test_no_tier_here_means_no_verdict_and_says_how_to_get_one(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(check, "REPO", tmp_path)  # no .nox there
    monkeypatch.setattr(backend_class("ascend-lowered"), "host_missing", classmethod(lambda cls: None))
    monkeypatch.chdir(tmp_path)
    assert check.main(["examples.user_kernels.l2norm"]) == 2
    out = capsys.readouterr()
    assert out.out.count(" skipped: no venv") == 2 * len(check.hardware_free()) and "no tier ran" in out.err
    assert check.CREATE_HINT in out.err.strip().splitlines()[-1]  # here a venv is what is missing
    assert not (tmp_path / "reports" / "DIVERGENCE.md").exists()


def test_a_misspelt_module_gets_the_module_beside_it_not_a_shared_kernel(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "softmax_np2.py").write_text("SPECS = []\n")
    with pytest.raises(SpecError, match="did you mean the module 'softmax_np2'") as info:
        registry.build(["softmax_np22"])
    assert "did you mean 'softmax'" not in str(info.value)
    (tmp_path / "softmax_np2.py").unlink()  # control: nothing near it, and a shared kernel is no guess either
    with pytest.raises(SpecError) as info:
        registry.build(["softmax_np22"])
    assert "did you mean" not in str(info.value)
    with pytest.raises(SpecError, match="did you mean 'softmax'"):  # a misspelt kernel still gets its kernel
        registry.build(["softmx"])


def test_a_module_outside_the_clone_runs_on_a_tier_and_gets_its_own_verdict(tmp_path, monkeypatch, capsys):
    pytest.importorskip("triton")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "mine.py").write_text(L2NORM.read_text().replace("user_l2norm_rows", "outside_l2norm"))
    reports = tmp_path / "reports"
    (reports / "DIVERGENCE.md").parent.mkdir()
    (reports / "DIVERGENCE.md").write_text("the full run's report\n")
    monkeypatch.setattr(check, "python_for", lambda tier, repo: (sys.executable, "") if tier.name == "interpret"
                        else (None, "not in this test"))
    monkeypatch.chdir(tmp_path)
    code = check.main([str(outside / "mine.py"), "--tiers", "interpret,cuda-compile", "--out", str(reports),
                       "-n", "0"])
    out = capsys.readouterr().out
    assert code == 0, out[-3000:]
    assert "cuda-compile  skipped: not in this test" in out, out
    assert "outside_l2norm  interp ✓" in out.split("parity check: tiers")[1]  # the verdict comes last
    assert (reports / "check-mine" / "DIVERGENCE.md").exists()
    assert (reports / "DIVERGENCE.md").read_text() == "the full run's report\n"


def test_a_misspelt_name_while_the_venvs_exist_ends_on_the_name_not_on_building_venvs(tmp_path, monkeypatch,
                                                                                         capsys):
    pytest.importorskip("triton")
    monkeypatch.setattr(check, "python_for", lambda tier, repo: (sys.executable, ""))  # every venv is there
    monkeypatch.chdir(tmp_path)
    assert check.main(["l2nrm", "--tiers", "interpret,cuda-compile", "--out", str(tmp_path), "-n", "0"]) == 2
    out = capsys.readouterr()
    last = out.err.strip().splitlines()[-1]
    assert "unknown kernel or family 'l2nrm'" in last and "did you mean" in last and "interpret broke" in last, last
    assert "venv" not in last and "kernels: " not in last  # no venv advice, and not the whole kernel list
    assert "cuda-compile" not in out.out.split("parity check: tiers")[1]  # the same names: no second tier tried


def test_the_closing_line_suggests_venvs_only_where_one_is_missing():
    no_venv = check.Outcome("interpret", "skipped", "no venv /x/.nox/venv-upstream; create it with `nox -s ...`")
    host = check.Outcome("ascend-lowered", "skipped", "missing: mlir-opt-19; apt-get install mlir-19-tools")
    assert check.CREATE_HINT in check.closing([no_venv, host]) and "mlir-opt-19" in check.closing([no_venv, host])
    assert "venv" not in check.closing([host])  # control: a host tool missing is said, and no venv is suggested
    broke = check.Outcome("interpret", "broke", "pytest exited 3: RuntimeError: boom")
    assert check.closing([broke, no_venv]) == "interpret broke: pytest exited 3: RuntimeError: boom"


def test_first_error_reads_pytests_refusal_up_to_its_hint():
    text = "noise\nERROR: unknown kernel or family 'x'; did you mean 'y'? kernels: a, b, c\n"
    assert check.first_error(text) == "unknown kernel or family 'x'; did you mean 'y'?"
    assert check.first_error("ERROR: file or directory not found: nowhere\n") == "file or directory not found: nowhere"
    assert check.first_error("") == ""
