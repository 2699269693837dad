"""Every `PARITY_*` environment variable, declared once: its name, type, default and what it does.

`current()` is the settings of this process: the environment read through the declarations, with the
command line's options laid over it (`configure`, called by the pytest plugin for `--no-fit`). It is
built once per distinct environment (a test that sets a variable gets a fresh one) and is the one
accessor the engine reads: the readers sit deep in the backends and in child processes' entry points,
where threading an argument through every call would change a dozen signatures for one flag each.
A child process gets the settings through `child_env` only, so an option travels the same way as its
variable. `docs/reference.md`'s table of variables is checked against `VARIABLES` (tests/test_settings.py).

Stdlib only: `parity record` arms its recorder in processes that never import torch.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

FALSE_WORDS = ("0", "no", "off", "false")


@dataclass(frozen=True)
class Variable:
    """One environment variable: `field` is its attribute on Settings; `read_by` names a reader outside parity/."""

    name: str
    field: str
    kind: type  # bool, int, float, str or Path
    default: Any
    doc: str
    read_by: str = ""


VARIABLES: tuple[Variable, ...] = (
    Variable("PARITY_CACHE_DIR", "cache_dir", Path, None,
             "parity's cache (fp64 references, Triton caches per tier, fit plans); default "
             "`$XDG_CACHE_HOME/parity`, else `~/.cache/parity`"),
    Variable("PARITY_COMPILE_TIMEOUT_S", "compile_timeout_s", float, 300.0,
             "seconds one compile may take on a compile tier before it is recorded as a timeout"),
    Variable("PARITY_CASE_TIMEOUT_S", "case_timeout_s", float, 1800.0,
             "seconds a forked compile-tier case (every compile included) may take before its child is killed"),
    Variable("PARITY_HANG_GRACE_S", "hang_grace_s", float, 60.0,
             "seconds past `--timeout` before the xdist controller kills a worker still in the same case and "
             "records it as a timeout (parity.run.watchdog)"),
    Variable("PARITY_WORKER_START_S", "worker_start_s", float, 600.0,
             "seconds (at least `--timeout`, plus the grace) an xdist worker may take from its spawn to its first "
             "case before the controller kills it"),
    Variable("PARITY_NO_WATCHDOG", "no_watchdog", bool, False,
             "`1`: no controller-side bound; only each worker's own `--timeout` ends a case"),
    Variable("PARITY_FORK", "fork", bool, True,
             "`0` runs each library case in the worker instead of a forked child on the compile tiers"),
    Variable("PARITY_NO_FIT", "no_fit", bool, False,
             "`1` (or `--no-fit`) turns the fit advisor off: no search for configs that fit on chip"),
    Variable("PARITY_NO_PROOF", "no_proof", bool, False,
             "`1`: the fit advisor's configs are compiled but not run on a tier that computes; its advice then "
             "says \"not proven\""),
    Variable("PARITY_NO_PERF_ADVICE", "no_perf_advice", bool, False,
             "`1`: no Ascend performance advice on ascend-compile"),
    Variable("PARITY_NO_UB_ADVICE", "no_ub_advice", bool, False,
             "`1`: keep the other advice, skip UB use (\"larger tiles fit\": compiles larger configs and runs one "
             "on ascend-lowered)"),
    Variable("PARITY_NO_COMPILE_MEMO", "no_compile_memo", bool, False,
             "`1`: ascend-compile runs bishengir-compile for every call, not once per distinct input and flags "
             "(parity.backends.ascend.bishengir_memo)"),
    Variable("PARITY_REPRO_VERIFY_S", "repro_verify_s", float, 120.0,
             "seconds a written repro may run when it is verified standalone"),
    Variable("PARITY_SANITIZE_TIMEOUT_S", "sanitize_timeout_s", float, 1800.0,
             "seconds one `--sanitize` child (compute-sanitizer over a case) may run"),
    Variable("PARITY_LLVM_BIN", "llvm_bin", str, None,
             "a directory holding LLVM/MLIR 19's tools for ascend-lowered, where they are not on PATH"),
    Variable("PARITY_GIT_COMMIT", "git_commit", str, None,
             "the commit a report names where the checkout was copied without `.git`"),
    Variable("PARITY_RECORD_DIR", "record_dir", Path, None,
             "set by `parity record` for the recorded command's processes: where their launches go"),
    Variable("PARITY_RECORD_KEEP", "record_keep", int, 2,
             "set by `parity record --keep`: launches kept per dedupe key (parity.record.keys)"),
    Variable("PARITY_RECORD_BUDGET", "record_budget", int, 2 << 30,
             "set by `parity record --budget`: bytes of tensors a recording may keep"),
    Variable("PARITY_LIBRARIES", "libraries", str, None,
             "libraries by name, comma-separated (libraries/pins.py), or `all`: a tier session installs them "
             "at their pins and runs their specs (docs/libraries.md)", read_by="noxfile.py"),
    Variable("PARITY_TORCH_INDEX", "torch_index", str, None,
             "a mirror of PyTorch's CPU index for the nox sessions", read_by="noxfile.py"),
)
BY_NAME = {v.name: v for v in VARIABLES}
# GitHub repository variables (`vars.NAME`) that examples/ci/github-actions.yml reads: not the environment of any
# parity process, so not settings; named here so a doc that mentions one is not taken for an undeclared variable
REPOSITORY_VARIABLES = {
    "PARITY_GPU_RUNNER": "the labels of a self-hosted runner with an NVIDIA GPU, as JSON",
    "PARITY_NPU_RUNNER": "the labels of a self-hosted runner with an Ascend NPU, as JSON",
}


@dataclass(frozen=True)
class Settings:
    """The values of VARIABLES for one process (see their docs there)."""

    cache_dir: Path | None = None
    compile_timeout_s: float = 300.0
    case_timeout_s: float = 1800.0
    hang_grace_s: float = 60.0
    worker_start_s: float = 600.0
    no_watchdog: bool = False
    fork: bool = True
    no_fit: bool = False
    no_proof: bool = False
    no_perf_advice: bool = False
    no_ub_advice: bool = False
    no_compile_memo: bool = False
    repro_verify_s: float = 120.0
    sanitize_timeout_s: float = 1800.0
    llvm_bin: str | None = None
    git_commit: str | None = None
    record_dir: Path | None = None
    record_keep: int = 2
    record_budget: int = 2 << 30
    libraries: str | None = None
    torch_index: str | None = None


def parse(variable: Variable, raw: str | None) -> Any:
    """The variable's value from its raw text; an error names the variable and what it takes."""
    if raw is None or raw.strip() == "":  # set but empty: as if unset
        return variable.default
    if variable.kind is bool:
        return raw.strip().lower() not in FALSE_WORDS
    try:
        return Path(raw).expanduser() if variable.kind is Path else variable.kind(raw)
    except ValueError:
        raise ValueError(f"{variable.name}={raw!r} is not a {variable.kind.__name__}: {variable.doc}") from None


def from_environ(env: Mapping[str, str]) -> Settings:
    return Settings(**{v.field: parse(v, env.get(v.name)) for v in VARIABLES})


_OPTIONS: dict[str, Any] = {}


def configure(**options: Any) -> None:
    """Lay command-line options over the environment for this process and its children (`--no-fit`)."""
    unknown = set(options) - {f.name for f in fields(Settings)}
    if unknown:
        raise TypeError(f"no setting {sorted(unknown)}; declared: {[f.name for f in fields(Settings)]}")
    _OPTIONS.update(options)


@functools.lru_cache(maxsize=8)
def _built(raw: tuple[tuple[str, str | None], ...], options: tuple[tuple[str, Any], ...]) -> Settings:
    return replace(from_environ({k: v for k, v in raw if v is not None}), **dict(options))


def current() -> Settings:
    """This process's settings: the environment's PARITY_* variables, then the options laid over them."""
    raw = tuple((v.name, os.environ.get(v.name)) for v in VARIABLES)
    return _built(raw, tuple(sorted(_OPTIONS.items())))


def child_env(base: Mapping[str, str] | None = None, settings: Settings | None = None) -> dict[str, str]:
    """A child process's environment: `base` (default: this process's), with every setting that differs from
    its default written as its variable, so the child's `current()` equals this one's."""
    env = dict(os.environ if base is None else base)
    settings = settings or current()
    for v in VARIABLES:
        value = getattr(settings, v.field)
        if value == v.default:
            env.pop(v.name, None)  # the default, whatever `base` said (a settings object may override it)
        else:
            env[v.name] = ("1" if value else "0") if v.kind is bool else str(value)
    return env


def reference_table() -> str:
    """The markdown table of variables docs/reference.md holds (tests/test_settings.py keeps them equal)."""
    rows = ["| variable | type | default | what it does |", "|---|---|---|---|"]
    for v in VARIABLES:
        default = "unset" if v.default is None else ("`1`" if v.default is True else
                                                     "`0`" if v.default is False else f"`{v.default}`")
        read = f" (read by `{v.read_by}`)" if v.read_by else ""
        rows.append(f"| `{v.name}` | {v.kind.__name__} | {default} | {v.doc}{read} |")
    return "\n".join(rows)
