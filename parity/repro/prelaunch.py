"""Repros for a library op that raises before it launches any Triton kernel.

Nothing was launched, so there is no launch to replay (parity.repro.capture raises NoLaunch). When the
raising frame lies in a library's own code (not parity's packages, torch, triton or the standard
library) the finding is the library's: the repro directory gets an ISSUE.md addressed to it (where it
raised, the exception, the traceback's library frames) and, where the op the launcher called can be
imported and its arguments written down, a standalone repro.py (templates/prelaunch_script.py) that
calls that op with seeded tensors of the same shapes and dtypes. Where it cannot, the ISSUE names the
parity command that re-runs the one case. A raise in parity's own kernels keeps the plain ReproError.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import sys
import traceback
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import Any

from parity.backends import backend_class
from parity.repro import template
from parity.repro.library_issue import render_library_issue
from parity.repro.source import SourceError, literal
from parity.results import Record
from parity.spec import Case, KernelSpec
from parity.triage import library_rule as owner

OWN_PACKAGES = ("kernels", "libraries", "suites")  # parity's kernels and specs: a raise there is parity's
SOURCE_SCAN = "LeftoverDebug"  # libraries._debug_lint's finding: raised by parity, about the library's source
TRITON_PACKAGE = "triton"  # the top-level package of a frame raised inside Triton


def _top(frame: FrameType) -> str:
    return str(frame.f_globals.get("__name__") or "").split(".")[0]


def _is_code(top: str) -> bool:
    """A frame of code under test (parity's or a library's), not torch/triton/the standard library: the
    engine and what it stands on are skipped as raised_at skips them, so a library calling into them
    (e.g. the interpreter's driver stub) raised at the library's own line."""
    from parity.errors import is_machinery

    return bool(top) and not is_machinery(top) and top != "__main__"


def code_frames(exc: BaseException) -> list[tuple[FrameType, int]]:
    """(frame, line) of the traceback's frames in code under test, outermost first."""
    out, tb = [], exc.__traceback__
    while tb is not None:
        if _is_code(_top(tb.tb_frame)):
            out.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return out


def library_frames(exc: BaseException) -> list[tuple[FrameType, int]]:
    return [(f, line) for f, line in code_frames(exc) if _top(f) not in OWN_PACKAGES]


def _info_for(top: str, spec: KernelSpec) -> owner.LibraryInfo:
    """The library a package belongs to: a known one, else what its distribution's metadata says."""
    known = owner.library_of(spec.family, spec.kernels)
    if known is not None and top in known.packages:
        return known
    known = owner.library_of(None, [f"{top}:op"])
    if known is not None:
        return known
    dist, repo = top, ""
    try:
        dist = next(iter(importlib.metadata.packages_distributions().get(top, [])), top)
        meta = importlib.metadata.metadata(dist)
        urls = [u.split(",", 1)[-1].strip() for u in meta.get_all("Project-URL") or []]
        home = next(iter(meta.get_all("Home-page") or []), None)
        repo = next((u for u in urls if "github" in u), home or (urls[0] if urls else ""))
    except importlib.metadata.PackageNotFoundError:
        pass
    return owner.LibraryInfo(top, dist, repo.rstrip("/") or f"(the {top} repository)", (top,), ())


def owning_library(spec: KernelSpec, exc: BaseException | None) -> tuple[owner.LibraryInfo, str] | None:
    """The library that owns an error raised before any launch, and why (one line); None: parity's own."""
    if exc is None:
        return None
    frames = code_frames(exc)
    if not frames:
        return None
    innermost = frames[-1][0]
    if _top(innermost) in OWN_PACKAGES:
        info = owner.library_of(spec.family, spec.kernels)
        if type(exc).__name__ == SOURCE_SCAN and info is not None:
            return info, "its kernels' source carries leftover debugging calls (parity's source scan found them)"
        return None
    from parity.errors import raised_at

    if _raised_in_triton(exc):  # its launcher called Triton, whose compiler (or launcher) raised on its kernel
        return (_info_for(_top(innermost), spec),
                f"Triton raised on the library's kernel before it ran, called from its launcher (at {raised_at(exc)})")
    return (_info_for(_top(innermost), spec),
            f"its launcher raised in the library's own code before launching any Triton kernel (at {raised_at(exc)})")


def _raised_in_triton(exc: BaseException) -> bool:
    """Whether the traceback's innermost frame is Triton's (a compile error of the kernel, say)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and _top(tb.tb_frame) == TRITON_PACKAGE


# ---------------------------------------------------------------- the standalone call


def _arg(value: Any) -> Any:
    """A value as the script rebuilds it: tensors by dtype/shape/device, plain values as they are."""
    import torch

    if isinstance(value, torch.Tensor):
        return ("tensor", str(value.dtype).split(".")[-1], tuple(value.shape), value.device.type)
    if isinstance(value, (list, tuple)):
        return type(value)(_arg(v) for v in value)
    if isinstance(value, Mapping):
        return {k: _arg(v) for k, v in value.items()}
    if type(value).__name__ == "constexpr":
        return _arg(value.value)
    literal(value)  # refuses what the script cannot write down
    return value


def _bare_parents(module: str) -> dict[str, str]:
    """Parent packages registered without their __init__ (a spec module's loader trick), name -> directory."""
    parts, out = module.split("."), {}
    for i in range(1, len(parts)):
        name = ".".join(parts[:i])
        found = sys.modules.get(name)
        spec = getattr(found, "__spec__", None)
        if found is not None and spec is not None and spec.loader is None and getattr(found, "__path__", None):
            out[name] = str(next(iter(found.__path__)))
    return out


def _call_of(frame: FrameType) -> dict[str, str]:
    """The template's fields that call this frame's function again with arguments like its own."""
    module_name, name = str(frame.f_globals.get("__name__")), frame.f_code.co_name
    try:
        fn = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as err:
        raise SourceError(f"{module_name}.{name} cannot be imported by name: {err}") from None
    if getattr(inspect.unwrap(fn), "__code__", None) is not frame.f_code:
        raise SourceError(f"{module_name}.{name} is not the function that raised (a method or a nested function)")
    spec = inspect.getargvalues(frame)
    args = [_arg(spec.locals[a]) for a in spec.args]
    if spec.varargs:
        args += [_arg(v) for v in spec.locals[spec.varargs]]
    kwargs = {k: _arg(v) for k, v in (spec.locals[spec.keywords] if spec.keywords else {}).items()}
    return {"module": literal(module_name), "function": literal(name), "bare": literal(_bare_parents(module_name)),
            "args": literal(args), "kwargs": literal(kwargs)}


def call_fields(exc: BaseException) -> dict[str, str]:
    """The fields for the outermost library call in the traceback that stands alone (a module-level function
    whose arguments are tensors and plain values); SourceError naming why when none does."""
    why = ["no frame of the library's own in the traceback"]
    for frame, _ in library_frames(exc):
        try:
            return _call_of(frame)
        except SourceError as err:
            why.append(str(err))
    raise SourceError(why[-1])


# ---------------------------------------------------------------- the repro directory


def spec_module(spec: KernelSpec) -> str:
    """What --kernels takes to load this spec: the module whose SPECS holds it (a library's specs are not
    registered by name until their module is named), else the spec's name."""
    for name, module in list(sys.modules.items()):
        specs = getattr(module, "__dict__", {}).get("SPECS")
        if isinstance(specs, (list, tuple)) and any(s is spec for s in specs):
            return name
    return spec.name


def parity_command(spec: KernelSpec, record: Record, backend: str) -> str:
    """Re-runs the one case through parity (pytest's -k cannot take '=' or ',', so the node id)."""
    env = backend_class(backend).repro_prefix
    test = "test_compile" if backend_class(backend).mode == "compile" else "test_accuracy"  # a compile tier's suite
    node = f"suites/{test}.py::{test}[{record['kernel']}[{record['case']}]]"
    return f"{env}pytest '{node}' --backend={backend} --level=full --kernels={spec_module(spec)}"


def _where(exc: BaseException) -> list[str]:
    from parity.errors import raised_at

    where = ("parity's source scan of the kernels (no kernel was launched; the message names each call's "
             "file:line)" if type(exc).__name__ == SOURCE_SCAN else f"`{raised_at(exc)}`")
    lines = ["### Where it raised", "", f"Raised at {where}:", "", "```text",
             "".join(traceback.format_exception_only(type(exc), exc)).strip(), "```", ""]
    frames = library_frames(exc)
    if frames:
        stack = traceback.StackSummary.extract((f, line) for f, line in frames)
        lines += ["The traceback's frames in the library's code (outermost first):", "", "```text",
                  "".join(stack.format()).rstrip(), "```", ""]
    return lines


def write(out_dir: Path, spec: KernelSpec, shrunk: Case, exc: BaseException, info: owner.LibraryInfo, why: str,
          record: Record, env: Mapping[str, Any], backend: str, seed: int) -> Path:
    """ISSUE.md to the library and, where the call stands alone, repro.py; marks the record as its finding."""
    out_dir.mkdir(parents=True, exist_ok=True)
    finding = {"name": info.name, "version": owner.library_version(info), "repo": info.repo, "why": why}
    record["finding_of"] = finding
    rerun = parity_command(spec, record, backend)
    try:
        fields = call_fields(exc)
    except (SourceError, TypeError, ValueError) as err:
        fields, record["repro_note"] = None, f"no standalone repro.py ({err}); re-run through parity"
    if fields is not None:
        title = f"{spec.name} [{shrunk.id}] on {backend}: {type(exc).__name__} before any launch"
        expected = "".join(traceback.format_exception_only(type(exc), exc)).strip()[:400]
        script = template.render("prelaunch_script", title, **fields, seed=literal(seed), expected=literal(expected))
        (out_dir / "repro.py").write_text(script, encoding="utf-8")
    command = backend_class(backend).repro_prefix + "python repro.py" if fields else rerun
    text = render_library_issue(finding, record, env, backend, command)
    head, sep, tail = text.partition("### To reproduce")
    tail = "\n".join(line for line in tail.split("\n") if not line.startswith("Or through parity, with MODULE"))
    also = f"\n\nThis one case through parity: `{rerun}`." if fields else ""
    text = (head + "\n".join(_where(exc)) + "\n" + sep + also + tail).replace("\n\n\n", "\n\n")
    if not info.repo.startswith("http"):  # no repository URL in the package's metadata
        text = text.replace(f"File at: {info.repo}/issues/new (the {info.name} repository)",
                            f"File at: the {info.name} project's tracker (its package metadata names no repository)")
    (out_dir / "ISSUE.md").write_text(text, encoding="utf-8")
    return out_dir
