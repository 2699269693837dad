"""Vendor issue or author note: who a failing case's repro is for.

A vendor draft (ISSUE.md) is for failures a compiler owns: a crash, a known divergence,
a failure on one backend. A failure that is the kernel's own gets AUTHOR.md instead:
one diagnosed as a classic mistake (parity.run.mistakes, wrong on every tier by
construction), or one under Triton's interpreter, whose semantics are the reference.
Device-tier failures with neither mark keep their vendor draft; DIVERGENCE.md, which
sees every backend, lists the cases that fail everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parity.backends import backend_class

CRASH_KINDS = ("crash", "timeout")


def is_compiler_crash(record: Mapping[str, Any]) -> bool:
    comp = record.get("compile") or {}
    return record.get("status") == "crashed" or comp.get("error_kind") in CRASH_KINDS


def author_reason(record: Mapping[str, Any], backend: str) -> str | None:
    """Why this failure is the kernel author's to fix, or None where a vendor draft fits."""
    if is_compiler_crash(record) or record.get("status") == "xfailed":
        return None  # a compiler that dies, or a divergence already linked to a vendor
    if record.get("diagnosis"):
        return f"it is a known kernel mistake ({record['diagnosis']['what']}), wrong on every backend"
    if backend_class(backend).mode == "interpret":
        return "it fails under Triton's interpreter, whose semantics are the reference for every backend"
    reason = record.get("reason") or ""
    if "NameError" in reason and "is not defined" in reason:
        return "the kernel reads a name it never assigned on this path (a NameError in the code generator)"
    upstream = backend_class(backend).tracker != "triton-ascend"
    if upstream and ("triton-ascend" in reason or "must be a power of 2" in reason):
        # an Ascend-first kernel on upstream Triton: a documented upstream rule, not an upstream bug
        return ("it relies on what only triton-ascend accepts (an NPU launch option, a language extension, or "
                "non-power-of-2 tile shapes, which upstream Triton documents as unsupported)")
    return None


def render_author(record: Mapping[str, Any], backend: str, why: str, command: str) -> str:
    """AUTHOR.md: what fails, where, how to re-run it, and the diagnosis where there is one."""
    d = record.get("diagnosis")
    parts = [f"# `{record['kernel']}` [{record['case']}]: a bug in the kernel, not in a compiler", "",
             f"Backend `{backend}`: status `{record['status']}`. This is not a vendor issue: {why}.", ""]
    if d:
        parts += ["## What to change", "", f"{d['what']} at `{d['line']}`:", "", "```python", d["code"], "```", "",
                  f"Write instead: {d['fix']}.", ""]
    from parity.report.fit_md import author_lines

    parts += author_lines(record)  # an overflow: what fits, whether it computes, the change to make
    where = record.get("where") or {}
    if where.get("class"):
        program = where.get("program") or {}
        pid = ", ".join(f"{k}={v}" for k, v in program.items() if k.startswith("pid") and "_" not in k)
        parts += ["## Where it fails", "", f"{where['class']}" + (f"; the worst element is program {pid}'s "
                  f"(grid {tuple(where.get('grid') or ())})" if pid else "") + ".", ""]
        for line in where.get("likely_missing_mask") or []:
            parts += [f"Likely missing mask: `{line}`", ""]
    parts += ["## What failed", "", "```text", (record.get("reason") or "").strip(), "```", "",
              "## Re-run it", "", "```bash", command, "```", "",
              "The command exits 1 while the bug is present. Once it passes here, re-run the tier to see whether "
              "a backend still disagrees: that is the case for a vendor issue.", ""]
    return "\n".join(parts)
