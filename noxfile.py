"""Sessions: tests, interpret, cuda, ascend, cuda-compile, ascend-compile, report.

Each backend runs in its own virtualenv because upstream triton and triton-ascend
both install the package `triton`. On an offline accelerator node, reuse the
machine's own packages: `nox --no-venv --no-install -s cuda`.
"""

from __future__ import annotations

import shutil
import sys

import nox

# The CPU build of torch 2.13.0 is what the hardware-free tiers are tested with; pip takes it
# from the local wheel cache in CI. GPU/NPU hosts install the torch that matches their driver.
TORCH_CPU = "torch==2.13.0"
# triton 3.6's interpreter calls int() on 1-element arrays, which numpy 2.4 rejects
NUMPY = "numpy<2.4"
RUNNER = [NUMPY, "tabulate", "pytest>=8", "pytest-xdist", "pytest-timeout"]
ASCEND_TOOLCHAIN = ["triton-ascend==3.2.0", "ascendnpu-ir", "pybind11"]

# reinstalling torch into a fresh venv on every call costs minutes; pip upgrades in place instead
nox.options.reuse_venv = "yes"
nox.options.sessions = ["tests", "interpret", "cuda-compile", "ascend-compile"]
if shutil.which("nvidia-smi"):
    nox.options.sessions.append("cuda")
if shutil.which("npu-smi"):
    nox.options.sessions.append("ascend")
nox.options.sessions.append("report")


def install(session: nox.Session, *packages: str) -> None:
    """Install into the session's venv; with --no-venv the machine's own packages are used."""
    if session.venv_backend == "none" or getattr(session, "virtualenv", None) is None:
        session.log(f"--no-venv: using the installed packages, not installing {' '.join(packages)}")
        return
    session.install(*packages)


def pytest_args(session: nox.Session, backend: str, *defaults: str) -> list[str]:
    # a hung case becomes an `error` record with reason "timeout" instead of stalling the tier
    return ["python", "-m", "pytest", "suites", f"--backend={backend}", "--timeout=900", *defaults, *session.posargs]


@nox.session
def tests(session: nox.Session) -> None:
    """The engine's self-tests (CPU only), plus ruff."""
    install(session, TORCH_CPU, "triton==3.6.0", *RUNNER, "ruff")
    session.run("ruff", "check", ".")
    session.run("python", "-m", "pytest", "tests", "-n", "2", *session.posargs)


@nox.session
def interpret(session: nox.Session) -> None:
    """Every kernel under TRITON_INTERPRET=1 against fp64, on the CPU."""
    install(session, TORCH_CPU, "triton==3.6.0", *RUNNER)
    session.run(*pytest_args(session, "interpret", "-n", "2"), env={"TRITON_INTERPRET": "1"})


def run_tier_defaults(session: nox.Session) -> list[str]:
    """xdist workers for a device tier, unless the caller passed -n.

    Compiles and fp64 references are CPU work, so the accuracy pass runs one worker per core,
    worker i on device i mod N; the perf pass afterwards times each case alone.
    """
    given = any(a == "-n" or a.startswith(("-n", "--numprocesses")) for a in session.posargs)
    return [] if given else ["-n", "auto"]


# autotune picks go to Triton's disk cache: xdist workers and warm re-runs reuse them
RUN_ENV = {"TRITON_CACHE_AUTOTUNING": "1"}


@nox.session
def cuda(session: nox.Session) -> None:
    """Every kernel on an NVIDIA GPU, at level full."""
    install(session, "torch", "triton", *RUNNER)
    session.run(*pytest_args(session, "cuda", "--level=full", *run_tier_defaults(session)), env=RUN_ENV)


@nox.session
def ascend(session: nox.Session) -> None:
    """Every kernel on an Ascend NPU (needs CANN, torch_npu and triton-ascend), at level full."""
    install(session, "torch", "torch_npu", "triton-ascend", *RUNNER)
    session.run(*pytest_args(session, "ascend", "--level=full", *run_tier_defaults(session)), env=RUN_ENV)


@nox.session(name="cuda-compile")
def cuda_compile(session: nox.Session) -> None:
    """Compile every kernel variant for a named SM with upstream triton's ptxas; no GPU needed."""
    install(session, TORCH_CPU, "triton==3.6.0", *RUNNER)
    session.run(*pytest_args(session, "cuda-compile", "-n", "2"))


@nox.session(name="ascend-compile")
def ascend_compile(session: nox.Session) -> None:
    """Lower every kernel through triton-ascend and bishengir-compile; no NPU needed."""
    if sys.version_info >= (3, 12) and session.venv_backend != "none":
        session.error("triton-ascend 3.2.0 publishes wheels for CPython 3.10 and 3.11 only; "
                      "run this session with Python 3.11 (e.g. `python3.11 -m nox -s ascend-compile`)")
    install(session, TORCH_CPU, *ASCEND_TOOLCHAIN, *RUNNER)
    # the checker's own controls (UB overflow, grid limit, crash isolation) need this toolchain too
    session.run("python", "-m", "pytest", "tests/test_ascend_compile.py", "-q")
    session.run(*pytest_args(session, "ascend-compile", "-n", "2"))


@nox.session
def report(session: nox.Session) -> None:
    """reports/DIVERGENCE.md across results dirs (default: every reports/*/)."""
    # torch: `import parity` needs it; matplotlib draws reports/divergence.png
    install(session, TORCH_CPU, "tabulate", NUMPY, "matplotlib")
    session.run("python", "-m", "parity.cli", "report", *session.posargs)
