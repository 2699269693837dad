"""Repros for a launch that Triton rejects before compiling (a launch option it does not know).

The compile tiers record such a launch as `launch_option` (parity.compile.keep_going); its repro
is the kernel's source plus that one launch: the recorded argument shapes, launch options and
grid, and the option that was rejected (templates/launch_option_script.py). The fix belongs to
the launcher, so the note beside it is AUTHOR.md, addressed to the kernel's owners.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from parity.backends import backend_class
from parity.repro import template
from parity.repro.source import SourceError, extract_kernel, literal
from parity.results import OwnerKind, Record
from parity.triage.drafts import owner_in

# the key a launch's description holds instead of its source when it could not be described (its why)
ENTRY_ERROR = "error"


def _arg_source(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return literal(("tensor", str(value.dtype).split(".")[-1], tuple(value.shape)))
    if type(value).__name__ == "constexpr":
        value = value.value
    return literal(value)


def describe_rejected(jit: Any, option: str, exc: BaseException, args: tuple[Any, ...], kwargs: Mapping[str, Any],
                      grid: Any) -> dict[str, Any]:
    """The rejected launch as plain JSON (source text of each part), for render_script."""
    name = getattr(jit, "__name__", None) or jit.fn.__name__
    entry: dict[str, Any] = {"kernel": name, "launch_option": option}
    try:
        params = list(jit.arg_names)
        named = {**dict(zip(params, args, strict=False)), **{k: v for k, v in kwargs.items() if k in params}}
        extra = {k: v for k, v in kwargs.items() if k not in params and k != option}
        if callable(grid):
            grid = grid({**named, **extra})
        grid = tuple(int(g) for g in (grid if isinstance(grid, (tuple, list)) else (grid,)))
        entry.update(source=extract_kernel(jit).text(), value=literal(kwargs[option]), grid=literal(grid),
                     args="{" + ", ".join(f"{k!r}: {_arg_source(v)}" for k, v in named.items()) + "}",
                     launch_options="{" + ", ".join(f"{k!r}: {_arg_source(v)}" for k, v in extra.items()) + "}",
                     message=f"{type(exc).__name__}: {exc}")
    except (SourceError, TypeError, ValueError, AttributeError) as exc2:
        entry[ENTRY_ERROR] = f"{type(exc2).__name__}: {exc2}"
    return entry


def target_of(backend: str, arch: Any) -> tuple[Any, ...]:
    """triton's GPUTarget fields for the tier (its Backend.gpu_target): the option set the script checks is that
    backend's; the record's arch replaces the default where it is of the same kind."""
    target = backend_class(backend).gpu_target
    if target is None:
        raise SourceError(f"tier {backend!r} names no GPUTarget (Backend.gpu_target), so no launch-option repro "
                          "can rebuild for it; declare one on its Backend class")
    kind, default, warp = target
    return (kind, arch if isinstance(arch, type(default)) else default, warp)


def render_script(entry: Mapping[str, Any], record: Record, arch: Any, backend: str) -> str:
    if ENTRY_ERROR in entry:
        raise SourceError(entry[ENTRY_ERROR])
    title = f"{record['kernel']} [{record['case']}]: launch option {entry['launch_option']!r} rejected"
    return template.render("launch_option_script", title,
                           source=entry["source"].replace("import triton\nimport triton.language as tl\n", "").strip(),
                           kernel=entry["kernel"], option=literal(entry["launch_option"]), value=entry["value"],
                           args=entry["args"], launch_options=entry["launch_options"], grid=entry["grid"],
                           target=literal(target_of(backend, arch)))


def write_repro(out_dir: Path, script: str, record: Record, backend: str) -> None:
    from parity.repro.author import render_author

    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "repro.py").write_text(script, encoding="utf-8")
    owner = owner_in(record)
    if owner is not None and owner.who is OwnerKind.LIBRARY:  # the library's launcher: its tracker's draft
        from parity.repro.run_repro import write_drafts

        if write_drafts(out_dir, record, backend, "python repro.py", None, {}):
            return
    why = ("the kernel's launcher passes a launch option that the installed triton-ascend does not declare "
           "(a newer release may); pass it only where the installed version's backend options list it"
           if backend_class(backend).target == "ascend" else
           "the kernel's launcher passes a launch option that only another Triton backend declares; "
           "pass it only when that backend is active (e.g. when triton.runtime.driver.active names the NPU)")
    (out_dir / "AUTHOR.md").write_text(render_author(record, backend, why, "python repro.py"), encoding="utf-8")
