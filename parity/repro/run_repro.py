"""Standalone repros for failing cases: repro.py, inputs.npz and ISSUE.md per case.

On a failed or errored case the case is first shrunk (parity.repro.shrink), then run once
more while every kernel launch is recorded: the grid, every argument and every
keyword (constexprs, the heuristic values and the autotune config actually used).
From that record a script is generated that imports only torch, triton and numpy
(and torch_npu where present): the kernel source with its helpers, the recorded
launches, the inputs (inputs.npz), the fp64 reference (its plain torch source, or
saved arrays when the source cannot stand alone) and the check. It exits 1 and
prints the mismatch while the bug is present, and 0 once it is fixed. A library op that raises
before any launch gets its library's ISSUE.md and a call of that op instead (parity.repro.prelaunch).
"""

from __future__ import annotations

import ast
import functools
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from parity.backends import backend_class
from parity.backends.trackers import Tracker
from parity.findings import envinfo
from parity.findings.finding import Draft, Finding
from parity.repro import by_limit, lowered_repro, prelaunch, template, verify
from parity.repro.author import author_reason, render_author
from parity.repro.capture import Captured, Launch, LaunchRecorder, NoLaunch, ReproError, capture_case
from parity.repro.issue import render_issue
from parity.repro.library_issue import render_library_issue
from parity.repro.shrink import ShrinkResult, shrink
from parity.repro.source import Extracted, SourceError, extract_function, extract_kernel, literal, python_function
from parity.results import OwnerKind, Record, Status
from parity.results import dirs as rd
from parity.results.outputs_store import case_filename
from parity.spec import Case, KernelSpec
from parity.triage.drafts import finding_of, input_note, library_finding, owner_in, render_tier

REPRO_STATUSES = (Status.FAILED, Status.ERROR)
REPROS_DIR = rd.REPROS
NUMPY_DTYPES = (torch.float16, torch.float32, torch.float64, torch.int8, torch.int16, torch.int32, torch.int64,
                torch.uint8, torch.bool)


# ---------------------------------------------------------------- arrays and script


def _np(t: torch.Tensor) -> np.ndarray:
    t = t.detach().cpu().contiguous()
    if t.dtype not in NUMPY_DTYPES:  # bf16, fp8: store the bits, the script views them back
        t = t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])
    return t.numpy()


def arrays_of(cap: Captured, embed_reference: bool) -> dict[str, np.ndarray]:
    arrays = cap.buffer_arrays()
    arrays.update({f"input.{k}": _np(v) for k, v in cap.inputs.items() if isinstance(v, torch.Tensor)})
    arrays.update({f"valid.{k}": _np(v) for k, v in cap.valid.items()})
    if not embed_reference:
        arrays.update({f"ref.{k}": _np(v.to(torch.float64)) for k, v in cap.reference.items()})
    return arrays


def kernel_sources(launches: list[Launch]) -> Extracted:
    merged: Extracted | None = None
    for launch in launches:
        part = extract_kernel(launch.kernel)
        if merged is None:
            merged = part
        else:
            merged.merge(part)
    assert merged is not None
    return merged


def launch_lines(launches: list[Launch]) -> list[str]:
    lines = []
    for launch in launches:
        name = python_function(launch.kernel).__name__
        args = [*launch.args, *(f"{k}={v}" for k, v in launch.kwargs.items())]
        if launch.warmup:
            lines.append(f"    {name}.warmup({', '.join(args)}, grid={literal(launch.grid)})")
        else:
            lines.append(f"    {name}[{literal(launch.grid)}]({', '.join(args)})")
    return lines


def render_script(cap: Captured, title: str) -> tuple[str, dict[str, np.ndarray]]:
    """repro.py's text and the arrays for inputs.npz."""
    kernels = kernel_sources(cap.launches)
    try:
        reference: Extracted | None = extract_function(cap.spec.reference)
    except SourceError:
        reference = None
    sources = Extracted(entry=kernels.entry)
    sources.merge(kernels)
    if reference is not None:
        sources.merge(reference)
    scalars = {k: v for k, v in cap.inputs.items() if not isinstance(v, torch.Tensor)}
    text = template.render(
        "run_script", title,
        imports="\n".join(f"{line}  # noqa: E402" for line in dict.fromkeys(sources.imports.values())
                          if line not in ("import triton", "import triton.language as tl")),
        source=Extracted(entry="", constants=sources.constants, functions=sources.functions,
                         modules=sources.modules).text().rstrip(),
        params=literal(cap.params),
        tolerance=literal({k: cap.tolerance[k] for k in ("rtol", "atol", "max_err_ratio")}),
        **cap.script_fields(),
        input_dtypes=literal({k: str(v.dtype).split(".")[-1] for k, v in cap.inputs.items()
                              if isinstance(v, torch.Tensor)}),
        scalar_inputs=literal(scalars),
        launches="\n".join(launch_lines(cap.launches)),
        reference_call=(f"{reference.entry}(fp64_inputs, PARAMS)" if reference is not None
                        else "saved_reference(data)"),
        expect_error=literal(cap.error is not None),
    )
    return text, arrays_of(cap, reference is not None)


# ---------------------------------------------------------------- the repro directory


def failure_signature(record: Record | Mapping[str, Any]) -> tuple[str, str]:
    """What must stay the same while shrinking: the status, and for errors the exception type."""
    status = record.get("status") or ""
    reason = record.get("reason") or ""
    return status, (reason.split(":", 1)[0].strip() if status == Status.ERROR else "")


# seconds of shrinking per case: a wrong result (failed) is worth a smaller repro; an error is usually
# raised whatever the size (a library's own check, an unsupported option), so it gets a short budget
SHRINK_SECONDS = {"failed": 120.0, "error": 20.0}


def shrink_case(spec: KernelSpec, case: Case, backend: Any, record: Record, *, seed: int,
                cache: Any, max_trials: int = 32, max_seconds: float | None = None) -> ShrinkResult:
    from parity.run.runner import run_case

    want = failure_signature(record)
    if max_seconds is None:
        max_seconds = SHRINK_SECONDS.get(want[0], SHRINK_SECONDS["failed"])

    def still_fails(params: dict[str, Any]) -> bool:
        rec, _ = run_case(spec, Case(params), backend, seed=seed, cache=cache)
        return failure_signature(rec) == want

    return shrink(dict(case.params), still_fails, max_trials=max_trials, max_seconds=max_seconds)


def write_repro(out_dir: Path, cap: Captured, record: Record, shrunk: ShrinkResult,
                env: Mapping[str, Any], backend: str) -> Path:
    """Write repro.py, inputs.npz and both ISSUE variants into out_dir."""
    out_dir.mkdir(parents=True, exist_ok=True)
    case_id = Case(cap.params).id
    title = f"{cap.spec.name} [{case_id}] on {backend}"
    script, arrays = render_script(cap, title)
    (out_dir / "repro.py").write_text(script, encoding="utf-8")
    if arrays:
        np.savez_compressed(out_dir / "inputs.npz", **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds as its allow_pickle
    command = backend_class(backend).repro_prefix + "python repro.py"
    finding = finding_of(record)  # once: the drafts below all render it
    write_drafts(out_dir, record, backend, command, lambda tracker: render_issue(
        tracker, cap_summary(cap), record, shrunk.as_dict(), env, backend, finding), env, finding)
    return out_dir


def write_drafts(out_dir: Path, record: Record, backend: str, command: str | None,
                 vendor_text: Callable[[Tracker], str] | None, env: Mapping[str, Any],
                 finding: Finding | None = None) -> list[str]:
    """The drafts the record's Finding calls for (parity.findings, from the owner parity.triage decided); returns
    the files written. A vendor draft needs evidence that the vendor's tool is the odd one out; without an owner
    (triage raised) no draft is written at all. `vendor_text` renders ISSUE.md for one tracker."""
    finding = finding or finding_of(record)
    files: dict[str, str] = {}
    if finding.draft is Draft.LIBRARY:  # the library's bug (parity.triage.library_rule): one draft, to its tracker
        files["ISSUE.md"] = render_library_issue(library_finding(record) or {}, record, env, backend, command)
    elif finding.draft is Draft.VENDOR and vendor_text is not None:
        files.update(zip(finding.files, map(vendor_text, finding.trackers), strict=True))
    elif finding.draft is Draft.TIER:
        files["TIER.md"] = render_tier(record, backend, command)
    elif finding.draft is Draft.AUTHOR:
        owner = finding.owner
        why = (author_reason(record, backend) if owner is not None and owner.who is OwnerKind.AUTHOR
               and not owner.provisional else None) or finding.why
        files["AUTHOR.md"] = render_author(record, backend, why, command or "python repro.py", finding)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out_dir / name).write_text(text, encoding="utf-8")
    return sorted(files)


def cap_summary(cap: Captured) -> dict[str, Any]:
    """The plain facts ISSUE.md needs about the captured run."""
    return {"kernel": cap.spec.name, "kernels": sorted({python_function(x.kernel).__name__ for x in cap.launches}),
            "params": cap.params, "case": Case(cap.params).id, "tolerance": cap.tolerance, "error": cap.error,
            "grids": [list(x.grid) for x in cap.launches], "outputs": sorted(cap.outputs),
            "metrics": cap.metrics}


@functools.lru_cache(maxsize=4)
def session_env(backend: Any) -> dict[str, Any]:
    """env.json's facts for ISSUE.md, probed once per backend per process."""
    try:
        probed = backend.env()
    except Exception as exc:  # env probing must never stop a repro
        probed = {"env_error": str(exc)[:200]}
    return envinfo.collect(backend.name, probed)


def attach(record: Record, spec: KernelSpec, case: Case, backend: Any, *, seed: int, cache: Any,
           results_dir: Path) -> None:
    """Shrink, capture and write the repro of a failed/errored case, as its owner (parity.triage, already
    decided) calls for, and record where it went (or why not). Never raises for what goes wrong in any of
    that: the record keeps its verdict, with `repro_error`. A case the run's interruption cuts meanwhile
    becomes `interrupted`, with no draft."""
    from parity.triage import interrupt
    from parity.triage.stage import limit_owned

    if record.get("status") == Status.INTERRUPTED:
        return
    t0 = time.perf_counter()
    try:
        if limit_owned(record):  # a tier limit or an already-reported vendor bug: TIER.md, no repro
            _tier_note(record, spec, case, backend, results_dir)
            return
        if record.get("status") not in REPRO_STATUSES:
            return  # a crash poisoned the device; a known divergence is already linked
        if input_note_dir(record, spec, case, backend, results_dir):  # bad input: a note, no repro of the kernel
            return
        if by_limit.link(record, results_dir):  # an earlier case of this kernel has the limit's repro
            return
        _attach(record, spec, case, backend, record.get("finding_of") or None, seed=seed, cache=cache,
                results_dir=results_dir)
        by_limit.remember(record, results_dir)
    except KeyboardInterrupt:
        interrupt.note()
        interrupt.settle(record)
        raise
    except Exception as exc:  # whatever raised, the record stays, with its verdict
        record["repro_error"] = f"{type(exc).__name__}: {exc}"[:600]
    finally:
        if record.get("status") in (*REPRO_STATUSES, Status.CRASHED, Status.XFAILED, Status.INTERRUPTED):
            record.setdefault("timing", {})["repro_s"] = time.perf_counter() - t0


def _recapture(spec: KernelSpec, case: Case, backend: Any, seed: int, cache: Any) -> Captured | None:
    try:
        return capture_case(spec, case, backend, seed=seed, cache=cache)
    except Exception:  # where it fails is a hint; the verdict and the repro stand without it
        return None


def _locate(record: Record, cap: Captured | None) -> None:
    """record["where"] for a wrong result, from the captured launch of the case (parity.repro.where)."""
    if record.get("status") != Status.FAILED or cap is None or not cap.launches:
        return
    from parity.repro.where import locate

    output = (record.get("metrics") or {}).get("output")
    shape = cap.outputs[output].shape if output in cap.outputs else None
    try:
        # Where declares no "class" key (a keyword: parity.results.record's class syntax cannot name it)
        record["where"] = locate(record, cap.launches[-1], shape)  # type: ignore[typeddict-item]
    except Exception as exc:  # where it fails is a hint; the verdict stands without it
        record["where"] = {"error": f"{type(exc).__name__}: {exc}"[:200]}


def input_note_dir(record: Record, spec: KernelSpec, case: Case, backend: Any, results_dir: Path) -> bool:
    """The note of a case whose input failed before the kernel was judged (parity.triage.drafts.input_note)."""
    note = input_note(record, backend.name)
    if note is None:
        return False
    out_dir = results_dir / REPROS_DIR / case_filename(spec.name, case.id)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / note[0]).write_text(note[1], encoding="utf-8")
    record["repro"] = out_dir.relative_to(results_dir).as_posix()
    return True


def _tier_note(record: Record, spec: KernelSpec, case: Case, backend: Any, results_dir: Path) -> None:
    """TIER.md for a failure triage found expected on this tier (parity.triage.stage.expect): no draft."""
    out_dir = results_dir / REPROS_DIR / case_filename(spec.name, case.id)
    out_dir.mkdir(parents=True, exist_ok=True)
    command = backend.repro_prefix + \
        f"pytest suites --backend={backend.name} -k '{spec.name}'"
    (out_dir / "TIER.md").write_text(render_tier(record, backend.name, command), encoding="utf-8")
    record["repro"] = out_dir.relative_to(results_dir).as_posix()


# a backend's `repro_extras` facet -> what writes those files (None: the case failed before any of them existed)
EXTRAS: dict[str, Callable[..., Path | None]] = {"lowered": lowered_repro.write}


def write_extras(out_dir: Path, backend: Any, spec: KernelSpec, case: Case, *, seed: int, cache: Any) -> Path | None:
    """The files a repro dir gets beyond repro.py and its drafts, as the backend declares (Backend.repro_extras)."""
    writer = EXTRAS.get(backend.repro_extras) if backend.repro_extras else None
    return writer(out_dir, backend, spec, case, seed=seed, cache=cache) if writer else None


def _attach(record: Record, spec: KernelSpec, case: Case, backend: Any, finding: Any, *, seed: int,
            cache: Any, results_dir: Path) -> None:
    shrunk: ShrinkResult | None = None
    try:
        shrunk = shrink_case(spec, case, backend, record, seed=seed, cache=cache)
        cap = capture_case(spec, Case(shrunk.shrunk), backend, seed=seed, cache=cache)
        # where it fails is read on the case as it failed: a shrunk case has its own grid and tail
        _locate(record, cap if not shrunk.changed else _recapture(spec, case, backend, seed, cache))
        out_dir = results_dir / REPROS_DIR / case_filename(spec.name, case.id)
        write_repro(out_dir, cap, record, shrunk, session_env(backend), backend.name)
        write_extras(out_dir, backend, spec, Case(shrunk.shrunk), seed=seed, cache=cache)
        record["repro"] = out_dir.relative_to(results_dir).as_posix()
        record["shrink"] = shrunk.as_dict()
    except NoLaunch as exc:
        assert shrunk is not None
        if _attach_prelaunch(record, spec, Case(shrunk.shrunk), exc, backend, seed=seed, results_dir=results_dir):
            record["shrink"] = shrunk.as_dict()
        else:
            _no_repro(record, exc, finding, spec, case, backend, results_dir)
    except Exception as exc:  # any stage: shrinking, capture, the script, the drafts (an MLIR error too)
        _no_repro(record, exc, finding, spec, case, backend, results_dir)
    # kept only where it fails in a fresh process the way the record did (parity.repro.verify)
    verify.finalize(record, results_dir, results_dir / REPROS_DIR / case_filename(spec.name, case.id))


def _attach_prelaunch(record: Record, spec: KernelSpec, shrunk: Case, exc: NoLaunch, backend: Any, *,
                      seed: int, results_dir: Path) -> bool:
    """A library's raise before any launch: its ISSUE.md and standalone call (parity.repro.prelaunch)."""
    owner = owner_in(record)
    if owner is not None and owner.who in (OwnerKind.ENVIRONMENT, OwnerKind.TIER):  # no one's code to draft against
        return False
    owned = None if record.get("finding_of") else prelaunch.owning_library(spec, exc.raised)
    if owned is None or exc.raised is None:  # an import failure keeps its `python -c "import X"` draft
        return False
    out_dir = results_dir / REPROS_DIR / case_filename(spec.name, str(record["case"]))
    prelaunch.write(out_dir, spec, shrunk, exc.raised, *owned, record, session_env(backend), backend.name, seed)
    record["repro"] = out_dir.relative_to(results_dir).as_posix()
    return True


def _no_repro(record: Record, exc: BaseException, finding: Mapping[str, Any] | None, spec: KernelSpec,
              case: Case, backend: Any, results_dir: Path) -> None:
    kind = "ReproError" if isinstance(exc, NoLaunch) else type(exc).__name__  # as before NoLaunch existed
    record["repro_error"] = f"{kind}: {exc}"[:600]
    if finding:  # no launch to replay (the library did not import): the draft still goes to the library
        out_dir = results_dir / REPROS_DIR / case_filename(spec.name, case.id)
        out_dir.mkdir(parents=True, exist_ok=True)
        text = render_library_issue(finding, record, session_env(backend), backend.name, import_command(record))
        (out_dir / "ISSUE.md").write_text(text, encoding="utf-8")
        record["repro"] = out_dir.relative_to(results_dir).as_posix()


def import_command(record: Record) -> str | None:
    """The one-liner that shows a library's import failure ("importing X raised ..."), or None."""
    found = re.search(r"importing ([\w.]+) raised", str(record.get("reason") or ""))
    if not found:
        return None
    env = backend_class(str(record.get("backend"))).repro_prefix
    return f'{env}python -c "import {found.group(1)}"'


def is_standalone(script: str) -> bool:
    """True when the script imports nothing but torch, triton, numpy and the standard library's math, os, sys,
    traceback and types (a library's module of helpers is rebuilt with types.ModuleType)."""
    allowed = {"torch", "triton", "numpy", "math", "os", "sys", "torch_npu", "traceback", "types", "__future__"}
    for node in ast.walk(ast.parse(script)):
        if isinstance(node, ast.Import):
            roots = {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            roots = {(node.module or "").split(".")[0]}
        else:
            continue
        if not roots <= allowed:
            return False
    return True


__all__ = ["REPRO_STATUSES", "Captured", "LaunchRecorder", "ReproError", "attach", "capture_case",
           "failure_signature", "is_standalone", "render_script", "shrink_case", "write_repro"]
