"""A crash or hang that the red-zone tier does not reproduce is not the kernel's.

On a tier that computes, a process that died (or a case cut by the timeout) is first taken for the kernel's own
stray access (parity.triage.rules: provisional, settled by a tier with red zones). The settling evidence is the
same case, on the same inputs, computed right on a tier whose every tensor lies between red zones
(parity.run.redzone: the interpreter, ascend-lowered) with no out-of-bounds access found. With it in hand:

- a kernel that spins on tl.atomic_cas / tl.atomic_xchg, on a tier that declares the limit "spin lock needs
  concurrent programs" (it runs the programs one at a time): that tier limit, with the evidence;
- otherwise the crashing tier's compiler (its vendor), with the evidence.

A red-zone tier that found an out-of-bounds access reproduces the fault: the author's, settled. Pure over the
record, the other tiers' records and the kernel's source facts (parity.triage.source_facts).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import parity.triage.source_facts as source_facts
from parity.backends import backend_class
from parity.results import OwnerKind, Record, Status
from parity.run.redzone import applies as has_red_zones
from parity.triage.evidence import RAN
from parity.triage.limits import LIMITS, TierLimit

TIMEOUT = "timeout"  # the reason pytest-timeout's cut gets (parity.driver.pipeline)


@dataclass(frozen=True)
class Settled:
    """Whose the crash is, for the rule red_zone_settles (parity.triage.rules): who (None: the crashing tier's
    compiler, as tiers.vendor_of names it), name, evidence, limit id."""

    who: OwnerKind | None
    name: str
    evidence: str
    limit: str | None = None


def hung_or_died(record: Record) -> str | None:
    """How the case ended, in words, where the process died while the kernel ran or a hang was cut; else None."""
    tier = str(record.get("backend"))
    if backend_class(tier).mode == "compile" or (record.get("compile") or {}).get("message"):
        return None  # a compiler's own abort is its evidence (parity.triage.rules.compiler_aborted)
    if record.get("status") == Status.CRASHED:
        code = (record.get("crash") or {}).get("returncode")
        return f"was killed by signal {-code}" if isinstance(code, int) and code < 0 else "died"
    if record.get("status") == Status.ERROR and str(record.get("reason") or "").lower().startswith(TIMEOUT):
        return "hung (cut by the timeout)"
    return None


def clean_red_zone_passes(record: Record, others: Mapping[str, Record]) -> list[str]:
    """Other tiers with red zones that ran the same case to its end with no out-of-bounds access: computed it
    right, or (a replay on the tier that recorded it: status "ran", parity.triage.evidence.as_evidence) ran it."""
    return sorted(t for t, r in others.items() if t != record.get("backend") and has_red_zones(backend_class(t))
                  and r.get("status") in (Status.PASSED, Status.XPASSED, RAN) and not r.get("oob"))


def red_zone_faults(record: Record, others: Mapping[str, Record]) -> list[str]:
    """Other tiers whose red zones caught an out-of-bounds access in the same case."""
    return sorted(t for t, r in others.items() if t != record.get("backend") and r.get("oob"))


def spin_limit(tier: str) -> TierLimit | None:
    """The tier's limit "spin lock needs concurrent programs", where it declares one that still holds."""
    return next((x for x in LIMITS if x.needs_evidence and x.id.endswith("spin-lock") and x.on(tier) and x.holds()),
                None)


def settle(record: Record, others: Mapping[str, Record], source: str) -> Settled | None:
    """The owner of a crash or hang that the red-zone evidence settles; None where it does not (no such tier ran
    the case, or the record is no crash)."""
    how = hung_or_died(record)
    if how is None:
        return None
    tier = str(record.get("backend"))
    faults = red_zone_faults(record, others)
    if faults:
        return Settled(OwnerKind.AUTHOR, "kernel author", f"{tier} {how}; the red zones of {', '.join(faults)} "
                       "found the kernel's out-of-bounds access in the same case on the same inputs")
    clean = clean_red_zone_passes(record, others)
    if not clean:
        return None
    ran = [t for t in clean if others[t].get("status") == RAN]
    where = (f"{', '.join(clean)} {'ran' if ran else 'computed'} the same case {'to its end' if ran else 'right'} "
             "on the same inputs, every tensor between red zones, with no out-of-bounds access"
             + (f" ({', '.join(ran)} replaying its own recording)" if ran else ""))
    spins = source_facts.read(record, source).get("spin_lock")
    limit = spin_limit(tier)
    if spins and limit is not None:
        return Settled(OwnerKind.TIER, limit.name, f"{tier} {how} in a kernel that spins on atomics ({spins[0]}); "
                       f"{where}: {limit.what} ({limit.link})", limit.id)
    if spins:  # a device may lack forward progress too: a spin is no evidence against a compiler
        return None
    return Settled(None, "", f"{tier} {how} while {where}: the crash is not the kernel's")
