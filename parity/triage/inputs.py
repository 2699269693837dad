"""Owners settled by what the case's inputs and values show, before any rule about tools: a spec's reference
that raised, a damaged replay bundle, values within a correct kernel's rounding, and a replay's recorded
reference that the interpreter's bf16 arithmetic computed."""

from __future__ import annotations

from parity.backends import backend_class
from parity.reasons import key_line
from parity.results import Owner, OwnerKind, Record, Status
from parity.triage.limit_fits import failure_text, is_numeric
from parity.triage.limits import LIMITS
from parity.triage.owner import SPEC_AUTHOR, make_owner

# a record's error_kind where the spec's own code raised (its reference, its make_inputs), or a replay's bundle is bad
SPEC_RAISED = ("reference", "inputs")
BUNDLE = "bundle"


def input_owner(record: Record) -> Owner | None:
    """The owner of a case whose input failed before the kernel was judged: the spec's reference or make_inputs
    raised (its author's: never the kernel's, nor a library's whose kernel it checks), or a replay bundle is
    damaged."""
    kind = record.get("error_kind")
    if kind in SPEC_RAISED:
        part = "reference" if kind == "reference" else "make_inputs"
        said = key_line(failure_text(record))[:160]
        return make_owner(OwnerKind.AUTHOR, SPEC_AUTHOR, said if said.startswith(f"the spec's {part} raised") else
                          f"the spec's {part} raised, not the kernel: {said}")
    if kind == BUNDLE:
        # the file, and what changed
        return make_owner(OwnerKind.BUNDLE, "replay bundle", key_line(failure_text(record))[:160])
    return None


def rounding_owner(record: Record) -> Owner | None:
    """The spec's tolerance, where every mismatch lies within a correct kernel's rounding (parity.run.rounding)
    and the spec chose a tolerance tighter than that: the values are right, the bar is not."""
    rounding = record.get("rounding") or {}
    if record.get("status") != Status.FAILED or not rounding.get("within"):
        return None
    return make_owner(OwnerKind.TOLERANCE, "the spec's tolerance",
                      f"every mismatch lies within a correct kernel's rounding, which the spec's tolerance does not "
                      f"allow: {rounding.get('sentence')}; widen the tolerance for this dtype, with that as its reason "
                      "(parity.run.rounding)")


def recorded_reference_owner(record: Record) -> Owner | None:
    """A replay judged against bf16 outputs that Triton's interpreter recorded: the recording, not the kernel on
    this tier, may be what is wrong (the interpreter's bf16 arithmetic acts on bit patterns), so the owner is that
    tier limit, provisional until a recording from a GPU settles it."""
    recorded = str((record.get("replay") or {}).get("recorded_on") or "")
    if (not recorded or recorded == record.get("backend") or not is_numeric(record)
            or (record.get("params") or {}).get("out") != "bf16" or backend_class(recorded).mode != "interpret"):
        return None
    limit = next(x for x in LIMITS if x.id == "interpret-bf16-arith")
    return make_owner(OwnerKind.TIER, limit.name,
                      f"the bf16 outputs this launch is compared with were recorded under Triton's interpreter, and "
                      f"{limit.what} ({limit.link}): the recording may be the wrong side",
                      provisional=True, settle="record the workload on a GPU (parity record on a CUDA node) and "
                      "replay that bundle here", limit=limit.id)
