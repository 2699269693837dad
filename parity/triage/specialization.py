"""Who owns a specialization sweep's finding: the triage rule of the sweep's records (parity.driver.sweep).

A sweep's finding is a count over many launches, not one launch's failure, so the evidence rules of
parity.triage.decide do not apply; the rule is short. A recompile storm in a kernel a library ships is the
library's finding (parity.triage.library_rule names it); any other storm is the kernel author's, whose fix is
do_not_specialize (https://triton-lang.org/main/python-api/generated/triton.jit.html). A claim of the spec's
that the sweep did not find (a variant count, a dead branch in the IR, a sweep that raised) is the author's.
"""

from __future__ import annotations

from collections.abc import Sequence

import parity.triage.library_rule as library_rule
import parity.triage.owner as owners
import parity.triage.stage as stage
from parity.compile.specialize import SweepResult
from parity.results import Owner, OwnerKind, Record

STORM = "storm"  # parity.compile.specialize.verdict's word for compiles that grow with the swept values
SWEEP_ERROR = "error"  # its word for a sweep a launch or compile stopped
AUTHOR = "kernel author"  # the author owner's name


def storm_fix(arg: str) -> str:
    # the case parameter's name need not be the kernel argument's (N vs n): name the change, not a guess
    return (f"mark the kernel argument that carries {arg} do_not_specialize "
            f"(@triton.jit(do_not_specialize=[...])) or explain it in the spec's expected_compiles")


def decide(record: Record, result: SweepResult, code: stage.CaseCode, claims: Sequence[str]) -> Owner | None:
    """The owner of a sweep record: a storm's (the library's, marked on the record as its `finding_of`, or the
    kernel author's), else the author's where a claim of the spec's did not hold (`claims`), else None."""
    if (record.get("specialization") or {}).get("verdict") == STORM:
        finding = library_rule.mark(record, code.family, code.kernels,
                                    why=f"its kernel recompiles as {result.arg} changes (a recompile storm)")
        if finding is None:  # our kernel or a user's: the fix is in the spec or the kernel
            return owners.make_owner(OwnerKind.AUTHOR, AUTHOR, f"the kernel recompiles as {result.arg} changes "
                                     f"(a recompile storm): {storm_fix(result.arg)}")
        return owners.make_owner(OwnerKind.LIBRARY, finding["name"], finding["why"])
    if claims:
        return owners.make_owner(OwnerKind.AUTHOR, AUTHOR, "the spec's claim about the kernel's variants or IR "
                                 f"does not hold: {'; '.join(claims)}")
    return None


def storm_text(record: Record, result: SweepResult, expected: int, owner: Owner) -> str:
    """Why a sweep is a storm; where the kernel ships in a library, worded as its finding (the verdict's ✗ names
    whose change it is: parity.report.verdict scores a failed sweep)."""
    what = (f"{result.kernel}: {result.per_base_max} compilations of one variant and config across "
            f"{result.arg} in {result.values} (expected {expected}): a recompile storm")
    finding = record.get("finding_of")
    if owner.who is not OwnerKind.LIBRARY or finding is None:
        return f"{what}; {storm_fix(result.arg)}"
    version = f" {finding['version']}" if finding.get("version") else ""
    return (f"{finding['name']}{version}'s finding, not parity's: {what}. The library's kernel specializes "
            f"on {result.arg}; do_not_specialize there would avoid it ({finding['repo']}/issues)")
