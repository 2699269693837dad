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
from parity.backends.trackers import ASCEND
from parity.findings.finding import Finding
from parity.fit.words import author_lines
from parity.results import Record, Status
from parity.triage.drafts import owner_in

CRASH_KINDS = ("crash", "timeout")


def is_compiler_crash(record: Record) -> bool:
    comp = record.get("compile") or {}
    return record.get("status") == Status.CRASHED or comp.get("error_kind") in CRASH_KINDS


def author_reason(record: Record, backend: str) -> str | None:
    """Why this failure is the kernel author's to fix, or None where a vendor draft fits."""
    if is_compiler_crash(record) or record.get("status") == Status.XFAILED:
        return None  # a compiler that dies, or a divergence already linked to a vendor
    if record.get("diagnosis"):
        return (f"parity recognises a kernel mistake in its source ({record['diagnosis']['what']}): the change is "
                "the kernel's, whichever backend runs it")
    if backend_class(backend).mode == "interpret":
        return "it fails under Triton's interpreter, whose semantics are the reference for every backend"
    reason = record.get("reason") or ""
    if "NameError" in reason and "is not defined" in reason:
        return "the kernel reads a name it never assigned on this path (a NameError in the code generator)"
    upstream = backend_class(backend).tracker.owner is not ASCEND.owner  # a tier of a compiler triton-ascend builds on
    if upstream and (ASCEND.dist in reason or "must be a power of 2" in reason):
        # an Ascend-first kernel on upstream Triton: a documented upstream rule, not an upstream bug
        return ("it relies on what only triton-ascend accepts (an NPU launch option, a language extension, or "
                "non-power-of-2 tile shapes, which upstream Triton documents as unsupported)")
    return None


OOB_HINT = ("A process that dies under the interpreter or a CPU lowering, a write into parity's red zones, or an "
            "invalid access under compute-sanitizer usually means an out-of-bounds access: a tl.load or tl.store "
            "whose offsets reach past the tensor (an unmasked tail: BLOCK 1024 over N = 1000), with no mask or a "
            "mask that lets the tail through. Mask every access with the bounds, e.g. "
            "`tl.load(x + o, mask=o < N, other=0.0)` and `tl.store(out + o, v, mask=o < N)`.")


def oob_lines(record: Record) -> list[str]:
    """The unmasked tl.load/tl.store lines parity saw behind an out-of-bounds finding or a crash."""
    oob, crash = record.get("oob") or {}, record.get("crash") or {}
    lines = [line for w in oob.get("writes") or [] for line in w.get("unmasked_stores") or []]
    lines += list(oob.get("unmasked") or []) + list(crash.get("unmasked") or [])
    return list(dict.fromkeys(lines))


def oob_section(record: Record) -> list[str]:
    """AUTHOR.md's out-of-bounds section, for a record with out-of-bounds evidence or a dead process."""
    if not (record.get("oob") or record.get("status") == Status.CRASHED):
        return []
    parts = ["## Out-of-bounds access", "", OOB_HINT, ""]
    oob = record.get("oob") or {}
    writes, reads = oob.get("writes") or [], oob.get("reads") or []
    for w in writes:
        first, last = w.get("elements") or (None, None)
        parts += [f"- `{w.get('kernel')}` wrote elements [{first}, {last}) of argument `{w.get('tensor')}` "
                  f"({w.get('dtype')}, {w.get('numel')} elements) into parity's red zone", "",
                  *joined_lines(w, "store"), ""]
    for r in reads:
        parts += [f"- `{r.get('kernel')}` read past argument `{r.get('tensor')}`: {r.get('count')} value(s) of "
                  f"parity's red zone around it reached argument `{r.get('into')}`", "", *joined_lines(r, "load"), ""]
    if any("accesses" in f for f in (*writes, *reads)):
        return parts  # each finding above names the accesses that touch its argument, or says none does
    lines = oob_lines(record)
    if lines:
        parts += ["The kernel's accesses without a mask:", "", "```text", *lines, "```", ""]
    else:
        parts += ["parity sees no unmasked tl.load or tl.store in the kernel source: look at the masks' bounds "
                  "and at the offsets' arithmetic (an int32 offset that wraps past 2^31).", ""]
    return parts


def joined_lines(found: Mapping[str, Any], op: str) -> list[str]:
    """The kernel source lines of the unmasked accesses whose pointer derives from the argument a red zone caught
    (parity.run.unmasked.touching): each with the arguments it touches; or that there is none, not a guess."""
    if "accesses" not in found:  # a record from before the join
        return []
    accesses, tensor = found["accesses"], found.get("tensor")
    if not accesses:
        return [f"  No unmasked tl.{op} in the kernel's own source takes its pointer from `{tensor}`: look at the "
                f"bounds of the masks on its {op}s, at offsets that wrap (int32 past 2^31), and at any @triton.jit "
                "helper it calls (its source is not searched)."]
    head = (f"  The unmasked tl.{op} whose pointer derives from `{tensor}`:" if len(accesses) == 1 else
            f"  {len(accesses)} unmasked tl.{op}s take their pointer from `{tensor}`; any of them may be the one:")
    lines = [head, ""]
    for a in accesses:
        place, _, code = str(a.get("where")).partition(": ")
        args = ", ".join(f"`{x}`" for x in a.get("args") or [])
        lines.append(f"  - `{place}`: `{code}` (its pointer derives from {args})")
    return lines


def render_author(record: Record, backend: str, why: str, command: str,
                  finding: Finding | None = None) -> str:
    """AUTHOR.md: what fails, where, how to re-run it, and the diagnosis where there is one; from the record's
    Finding where the caller has it (parity.triage.drafts.finding_of)."""
    d = record.get("diagnosis")
    # a limit entry the author owns (a language rule, TF32 rounding) is the kernel's to handle, not a bug in it
    owner = finding.owner if finding is not None else owner_in(record)
    what = ("the kernel's to handle, not a compiler bug" if owner is not None and owner.limit
            else "a bug in the kernel, not in a compiler")
    parts = [f"# `{record['kernel']}` [{record['case']}]: {what}", "",
             f"Backend `{backend}`: status `{record['status']}`. This is not a vendor issue: {why}.", ""]
    if d:
        parts += ["## What to change", "", f"{d['what']} at `{d['line']}`:", "", "```python", d["code"], "```", "",
                  f"Write instead: {d['fix']}.", ""]
    parts += oob_section(record)
    # an overflow: what fits, whether it computes, the change to make
    parts += finding.fit if finding is not None else author_lines(record)
    where: Mapping[str, Any] = record.get("where") or {}  # parity.repro.where.locate's, its "class" among them
    oob = record.get("oob") or {}
    if where.get("class") and not (oob.get("writes") or oob.get("tool")):  # writes may leave the values right
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
