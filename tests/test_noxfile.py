"""The noxfile's install plan, checked without network: CPU tiers get torch's CPU build, run tiers
check for their device before installing anything, and pytest gets time to save an interrupted run."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
nox = pytest.importorskip("nox", reason="the noxfile needs nox: `pip install nox` (the tests session installs it)")
sys.path.insert(0, str(ROOT))
import noxfile  # noqa: E402

sys.path.remove(str(ROOT))


class FakeSession:
    """Records what a session would install and run."""

    venv_backend = "virtualenv"
    virtualenv = object()
    bin = "/fake/venv/bin"

    def __init__(self, name: str) -> None:
        self.name, self.posargs = name, []
        self.installed: list[str] = []
        self.ran: list[tuple[tuple, dict]] = []

    def install(self, *packages: str) -> None:
        self.installed += packages

    def run(self, *args: str, **kwargs: object) -> None:
        self.ran.append((args, kwargs))

    def log(self, *_: object) -> None:
        pass

    def error(self, message: str) -> None:
        raise SystemExit(message)


CPU_SESSIONS = {"tests": noxfile.tests, "venv-upstream": noxfile.venv_upstream}


@pytest.mark.parametrize("name", sorted(CPU_SESSIONS))
@pytest.mark.parametrize("reachable", [True, False])
def test_cpu_tiers_install_torch_cpu_build_only(name, reachable, monkeypatch):
    monkeypatch.setattr(noxfile, "index_reachable", lambda url: reachable)
    monkeypatch.setattr(noxfile, "STACK_PYTHON", {})
    session = FakeSession(name)
    CPU_SESSIONS[name](session)
    torches = [p for p in session.installed if p.startswith("torch")]
    assert torches == [noxfile.TORCH_CPU] and noxfile.TORCH_CPU.endswith("+cpu"), session.installed
    has_index = "--extra-index-url" in session.installed
    assert has_index == reachable  # an unreachable index would cost minutes of pip retries
    if reachable:
        assert session.installed[session.installed.index("--extra-index-url") + 1] == noxfile.TORCH_CPU_INDEX


def test_cpu_build_needs_no_particular_triton():
    """torch's CPU build pins no triton, so our triton pin cannot conflict with it (PyPI's CUDA
    torch 2.13.0 requires triton 3.7.1, which made `torch==2.13.0 triton==3.6.0` unresolvable)."""
    from importlib import metadata

    try:
        requires = metadata.requires("torch") or []
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        pytest.skip("torch is not installed in this environment")
    if "+cpu" not in version:
        pytest.skip(f"this environment's torch is {version}, not a CPU build")
    assert not [r for r in requires if r.startswith("triton") and "extra" not in r], requires


@pytest.mark.parametrize(("session_fn", "tool"), [(noxfile.cuda, "nvidia-smi"), (noxfile.ascend, "npu-smi")])
def test_run_tiers_check_the_device_before_installing(session_fn, tool, monkeypatch):
    monkeypatch.setattr(noxfile.shutil, "which", lambda name: None)
    session = FakeSession(session_fn.__name__)
    with pytest.raises(SystemExit, match=tool):
        session_fn(session)
    assert session.installed == [] and session.ran == []


@pytest.mark.parametrize(("session_fn", "tool"), [(noxfile.cuda, "nvidia-smi"), (noxfile.ascend, "npu-smi")])
def test_run_tiers_pin_their_stack(session_fn, tool, monkeypatch):
    monkeypatch.setattr(noxfile.shutil, "which", lambda name: f"/usr/bin/{name}")
    session = FakeSession(session_fn.__name__)
    session_fn(session)
    stack = [p for p in session.installed if p.split("==")[0] in ("torch", "triton", "torch_npu", "triton-ascend")]
    assert stack and all("==" in p for p in stack), stack


def test_pytest_gets_time_to_save_an_interrupted_run(monkeypatch):
    monkeypatch.setitem(noxfile.STACK_PYTHON, "venv-upstream", "/v/bin/python")
    session = FakeSession("interpret")
    noxfile.interpret(session)
    (args, kwargs), = session.ran
    # nox sends pytest SIGTERM after interrupt_timeout (parity takes it as Ctrl-C) and kills it after
    # terminate_timeout more: that is the time left to merge what the workers wrote (nox's default is 0.2 s)
    assert "pytest" in args and kwargs["terminate_timeout"] >= 30


@pytest.mark.parametrize("session_fn", [noxfile.interpret_matrix, noxfile.cuda_compile_matrix])
@pytest.mark.parametrize("version", noxfile.TRITON_VERSIONS)
def test_matrix_sessions_pin_their_triton_check_the_shims_first_and_keep_their_own_results(session_fn, version,
                                                                                         monkeypatch):
    monkeypatch.setattr(noxfile, "index_reachable", lambda url: False)
    session = FakeSession(session_fn.__name__)
    session_fn(session, version)
    assert f"triton=={version}" in session.installed and noxfile.TORCH_CPU in session.installed
    (controls, _), (tier, kwargs) = session.ran
    assert "tests/test_counter_versions.py" in controls  # the counter must count before a tier trusts it
    tier_name = "interpret" if session_fn is noxfile.interpret_matrix else "cuda-compile"
    assert f"--backend={tier_name}" in tier and f"--results-dir=reports/{tier_name}@triton-{version}" in tier
    assert (kwargs["env"] or {}).get("TRITON_INTERPRET") == ("1" if tier_name == "interpret" else None)
    assert kwargs["success_codes"] == [0, 1] and kwargs["terminate_timeout"] >= 30  # exit 5 (nothing ran) fails


def test_plain_nox_runs_the_default_triton_only_and_the_matrix_holds_it():
    def key(v: str) -> tuple[int, ...]:
        return tuple(map(int, v.split(".")))

    assert list(noxfile.TRITON_VERSIONS) == sorted(noxfile.TRITON_VERSIONS, key=key)
    assert noxfile.TRITON == f"triton=={noxfile.TRITON_DEFAULT}" and noxfile.TRITON_DEFAULT in noxfile.TRITON_VERSIONS
    assert noxfile.TRITON_NEWEST == noxfile.TRITON_VERSIONS[-1]
    assert not [s for s in noxfile.nox.options.sessions if "matrix" in s]
    assert {"3.2.0", "3.4.0", "3.6.0"} <= set(noxfile.TRITON_VERSIONS)  # triton-ascend's base, knobs, hardware


def test_the_matrix_session_runs_both_tiers_in_one_venv_after_the_version_controls(monkeypatch):
    monkeypatch.setattr(noxfile, "index_reachable", lambda url: False)
    session = FakeSession("matrix")
    noxfile.matrix(session, "3.2.0")
    assert "triton==3.2.0" in session.installed
    (controls, _), (interp, interp_kw), (compile_, _) = session.ran
    assert "tests/test_counter_versions.py" in controls
    assert "--backend=interpret" in interp and interp_kw["env"] == {"TRITON_INTERPRET": "1"}
    assert "--backend=cuda-compile" in compile_ and "--results-dir=reports/cuda-compile@triton-3.2.0" in compile_


def test_the_tests_session_installs_flag_gems_for_a_users_own_plugin(monkeypatch):
    """tests/test_user_library.py runs in CI: flag-gems without the exact numpy/packaging pins it declares."""
    monkeypatch.setattr(noxfile, "index_reachable", lambda url: False)
    calls: list[tuple[str, ...]] = []
    session = FakeSession("tests")
    session.install = lambda *packages: calls.append(packages)  # type: ignore[method-assign]
    noxfile.tests(session)
    pin = noxfile.PINS["flag_gems"]
    assert ("--no-deps", pin.dist) in calls and tuple(pin.deps) in calls, calls


@pytest.mark.parametrize(("backend", "xdist", "steals"), [
    ("virtualenv", None, True),  # a venv installs the newest pytest-xdist
    ("none", "3.8.0", True),
    ("none", "3.1.0", False),  # an accelerator node's older xdist has no --dist=worksteal: not asked for
])
def test_run_tiers_steal_work_where_the_installed_xdist_can(monkeypatch, backend, xdist, steals):
    from importlib import metadata

    session = FakeSession("cuda")
    session.venv_backend = backend
    monkeypatch.setattr(metadata, "version", lambda dist: xdist)
    args = noxfile.run_tier_defaults(session)
    assert args[:2] == ["-n", "auto"] and ("--dist=worksteal" in args) == steals
    session.posargs = ["-n", "4"]  # the caller's own -n: nothing added
    assert noxfile.run_tier_defaults(session) == []


def test_ascend_standin_runs_the_ascend_sessions_own_pytest_on_the_stand_in(monkeypatch):
    """ascend-standin is `nox -s ascend`'s pytest run (same backend, same arguments first) with the stand-in torch_npu
    on PYTHONPATH and its npu-smi found on the stand-in's PATH, not on the machine's."""
    monkeypatch.setattr(noxfile, "index_reachable", lambda url: False)
    monkeypatch.setattr(noxfile, "llvm19_missing", lambda: [])
    monkeypatch.setattr(noxfile.sys, "version_info", (3, 11))
    real_which = noxfile.shutil.which
    looked: list = []

    def which(name, path=None):
        looked.append((name, path))
        return real_which(name, path=path) if path else None  # no npu-smi on this machine

    monkeypatch.setattr(noxfile.shutil, "which", which)
    ascend, standin = FakeSession("ascend"), FakeSession("ascend-standin")
    monkeypatch.setitem(noxfile.STACK_PYTHON, "venv-ascend", "/a/bin/python")  # it runs in venv-ascend
    monkeypatch.setattr(noxfile.shutil, "which", lambda name, path=None: "/usr/bin/npu-smi")
    noxfile.ascend(ascend)
    monkeypatch.setattr(noxfile.shutil, "which", which)
    noxfile.ascend_standin(standin)
    assert ("npu-smi", None) not in looked and looked[0][0] == "npu-smi"
    (real_args, _), = ascend.ran
    runs = [args for args, _ in standin.ran]
    tier = next(args for args in runs if "suites" in args)
    # nox -s ascend's own command (in venv-ascend's python), then the stand-in's selection
    assert tier[0] == "/a/bin/python" and tier[1:len(real_args)] == real_args[1:]
    env = dict(standin.ran[runs.index(tier)][1]["env"])
    assert env["PYTHONPATH"] == noxfile.STANDIN_DIR and (Path(noxfile.STANDIN_DIR) / "torch_npu").is_dir()
    assert env["PATH"].split(os.pathsep)[:2] == [os.path.join(noxfile.STANDIN_DIR, "bin"), "/a/bin"]
    assert not [p for p in standin.installed if p.startswith("torch_npu")]  # the stand-in is never installed
    assert any("tests.standin_npu.check" in args for args in runs)  # and the run must prove what it exercised


def test_the_tiers_of_one_stack_share_its_venv_and_run_its_python(monkeypatch):
    """interpret, cuda-compile and report run in venv-upstream's python; ascend-compile and ascend-lowered in
    venv-ascend's, with its bin/ first on PATH (bishengir-compile lives there); none installs anything itself."""
    monkeypatch.setattr(noxfile, "llvm19_missing", lambda: [])
    monkeypatch.setitem(noxfile.STACK_PYTHON, "venv-upstream", "/u/bin/python")
    monkeypatch.setitem(noxfile.STACK_PYTHON, "venv-ascend", "/a/bin/python")
    for fn, stack in [(noxfile.interpret, "/u"), (noxfile.cuda_compile, "/u"), (noxfile.report, "/u"),
                      (noxfile.ascend_compile, "/a"), (noxfile.ascend_lowered, "/a")]:
        session = FakeSession(fn.__name__)
        fn(session)
        assert session.installed == [] and session.ran, fn.__name__
        for args, kwargs in session.ran:
            assert args[0] == f"{stack}/bin/python", (fn.__name__, args)
            assert kwargs["env"]["PATH"].startswith(f"{stack}/bin"), fn.__name__
    assert noxfile.interpret.requires == noxfile.cuda_compile.requires == noxfile.report.requires == ["venv-upstream"]
    assert noxfile.ascend_compile.requires == noxfile.ascend_lowered.requires == ["venv-ascend"]
    assert noxfile.interpret.python is False  # no venv of its own


def test_plain_nox_is_the_tiers_and_the_report_not_the_self_tests():
    sessions = noxfile.nox.options.sessions
    assert "tests" not in sessions and sessions[-1] == "report"
    assert {"interpret", "cuda-compile", "ascend-compile"} <= set(sessions)
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "nox -s tests" in ci and "nox -s tests" in readme  # the test command stays where it was


def test_a_stack_session_without_a_venv_leaves_the_tiers_the_machines_python():
    session = FakeSession("venv-upstream")
    session.venv_backend = "none"
    noxfile.venv_upstream(session)
    assert noxfile.STACK_PYTHON.pop("venv-upstream") == "python"
    assert noxfile.stack_env("python") == {}
