"""Who a failing case belongs to when its kernel ships in a library: the library, or the compiler.

A kernel lives in a library when the spec's family names one, or when one of its kernels is defined in
that library's package, as its adapter declares (parity.spec.library; the known ones in libraries/adapters.py).
For such a kernel:

The library's finding (the draft goes to the library's tracker):
- a wrong result: the output differs from the fp64 reference;
- a config the library chose that the target cannot hold: UB overflow on Ascend, out of resources on CUDA;
- the library fails to import on the tier;
- the library uses an API the backend lacks (an attribute, module or name triton does not have there, an
  argument type the backend does not take, a triton-ascend-only keyword or launch option).

The compiler's finding (the vendor drafts stay, naming the library version the kernel came from):
- a compiler crash or hang;
- a frontend or lowering error on code the library's other backends accept;
- anything already linked as a known divergence.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from parity.backends import backend_class
from parity.compile.ascend_only import language_finding
from parity.compile.counter import kernel_id
from parity.results import OwnerKind, Record, Status
from parity.spec.library import LibraryAdapter, for_family, for_package

# a library's identity and tracker come from its adapter (parity.spec.library), registered beside its specs
LibraryInfo = LibraryAdapter


# an API the backend lacks: a missing attribute/module/name inside triton, or an argument it cannot take
# (an object of the library's own lacking a method under the interpreter is no triton API: not matched)
MISSING_API = re.compile(r"module '?triton[\w.]*'? has no attribute|cannot import name '?[\w.]+'? from '?triton|"
                         r"No module named '?triton|tensor look-alike")
LAUNCH_OPTION = re.compile(r"Keyword argument \w+ was specified but unrecognised")  # Triton's own wording
COMPILER_KINDS = ("crash", "timeout", "mlir_error", "unsupported")
CONFIG_KINDS = ("ub_overflow", "cc_overflow", "out_of_resources")
# statuses that are no library's finding: a crash (the compiler's, or the kernel's stray access), or no failure
NOT_THE_LIBRARYS = (Status.CRASHED, Status.XFAILED, Status.XPASSED, Status.PASSED, Status.SKIPPED)


def _module_of(kernel: Any) -> str:
    return kernel_id(kernel) if not isinstance(kernel, str) else kernel.split(":", 1)[0]


def library_of(family: str | None, kernels: Iterable[Any] = ()) -> LibraryInfo | None:
    """The library a spec's kernels come from, by family or by the package they are defined in."""
    found = for_family(family)
    if found is not None:
        return found
    for kernel in kernels:
        found = for_package(_module_of(kernel).split(".", 1)[0])
        if found is not None:
            return found
    return None


def library_version(info: LibraryInfo) -> str | None:
    """The installed version: the distribution's metadata (with the git commit pip recorded for a git
    install), else the commit of the git checkout its package sits in, else the package's `__version__`
    (where a spec module records the snapshot commit it loaded, as libraries/mojo_opset.py does); None when
    none of these says."""
    try:
        version = importlib.metadata.version(info.dist)
    except importlib.metadata.PackageNotFoundError:
        version = None
    if version is not None:
        commit = _pip_vcs_commit(info.dist)
        return f"{version} (git {commit})" if commit else version
    for package in info.packages:
        commit = git_commit(_package_dir(package))
        if commit:
            return f"git {commit}"
    for package in info.packages:
        declared = getattr(sys.modules.get(package), "__version__", None)
        if isinstance(declared, str) and declared:
            return declared
    return None


def _pip_vcs_commit(dist: str) -> str | None:
    """The commit pip wrote into direct_url.json for `pip install git+...`, if it was installed so."""
    try:
        text = importlib.metadata.distribution(dist).read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None
    try:
        commit = json.loads(text or "{}").get("vcs_info", {}).get("commit_id")
    except (ValueError, AttributeError):
        return None
    return commit if isinstance(commit, str) else None


def _package_dir(package: str) -> Path | None:
    """Where an import name lives: the imported module's path, else where the import system would find it."""
    module = sys.modules.get(package)
    paths = list(getattr(module, "__path__", None) or [])
    if not paths:
        try:
            found = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            found = None
        paths = list(found.submodule_search_locations or []) if found is not None else []
    return Path(paths[0]) if paths else None


def git_commit(directory: Path | None) -> str | None:
    """HEAD of the git checkout that contains `directory` (None outside one, or without git)."""
    if directory is None or not directory.is_dir():
        return None
    # the package must be tracked by that repository: a venv or an ignored snapshot inside some other
    # checkout (.nox/ in this one) is not that checkout's code
    tracked = _git(directory, "ls-files", "--", ".")
    commit = _git(directory, "rev-parse", "HEAD") if tracked else None
    return commit if commit and re.fullmatch(r"[0-9a-f]{40}", commit) else None


def _git(directory: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True, timeout=10,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def library_owns(record: Record) -> str | None:
    """Why this failure is the library's (one line), or None where it stays the compiler's."""
    status, reason = record.get("status"), str(record.get("reason") or "")
    kind = (record.get("compile") or {}).get("error_kind")
    if status in NOT_THE_LIBRARYS or kind in ("crash", "timeout"):
        return None
    if kind in CONFIG_KINDS or "ub overflow" in reason.lower():
        return "a config the library chose does not fit the target (" + (kind or "ub_overflow") + ")"
    if kind == "launch_option" or record.get("error_kind") == "launch_option" or LAUNCH_OPTION.search(reason):
        return "the library passes a launch option this Triton backend does not take"
    if "import error:" in reason or "LibraryImportError" in reason:
        return "the library fails to import on this tier"
    if MISSING_API.search(reason) or language_finding(reason):  # incl. a triton-ascend-only keyword upstream
        return "the library uses an API this backend lacks"
    if kind in COMPILER_KINDS:
        return None  # a frontend or lowering error on code other backends take: the compiler's
    if status == Status.FAILED and not record.get("compile"):
        return "its result differs from the fp64 reference"
    return None


def mark(record: Record, family: str | None, kernels: Iterable[Any], why: str | None = None
         ) -> dict[str, Any] | None:
    """Record `finding_of` on a failure its library owns; returns it (None where the compiler keeps it).
    `why` says it for a failure the caller already knows to be the library's (a recompile storm)."""
    info = library_of(family, kernels)
    if info is None:
        return None
    missing = missing_needs(info, str(record.get("backend") or ""))
    why = why or library_owns(record)
    if why is None or missing:
        library = record.setdefault("library", {"name": info.name, "version": library_version(info),
                                                "repo": info.repo})
        if missing:  # the run's own evidence, kept for the report's triage (which runs without the compiler)
            library["missing"] = missing
    if why is None:
        return None
    finding = {"name": info.name, "version": library_version(info), "repo": info.repo, "why": why}
    record["finding_of"] = finding
    return finding


def missing_needs(info: LibraryInfo, tier: str) -> list[str]:
    """The modules of the library's Ascend path (LibraryAdapter.ascend_needs) that the installed triton-ascend
    lacks, on a triton-ascend tier; [] elsewhere."""
    try:
        if not info.ascend_needs or backend_class(tier).tracker.owner is not OwnerKind.TRITON_ASCEND:
            return []
    except (ImportError, KeyError, ValueError):  # a record of no known tier
        return []
    return [name for name in info.ascend_needs if not _importable(name)]


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package that is absent or fails to import
        return False
