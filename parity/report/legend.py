"""The words under the porting verdict's table: what each mark means, and what no tier here can check."""

from __future__ import annotations

from collections.abc import Mapping

from parity.backends import device_tier

NOT_CHECKABLE = ("No tier here sees the hardware's own arithmetic, timing or launch-time limits without the "
                 "device itself: {checks} {verb} unchecked until a results dir from that device ({runs}) is added.")


def not_checkable(missing: Mapping[str, str]) -> str:
    """What no tier here can check, said once."""
    return NOT_CHECKABLE.format(checks=" and ".join(missing.values()), verb="stay" if len(missing) > 1 else "stays",
                                runs=" / ".join(device_run(t) for t in missing))


def device_run(target: str) -> str:
    """The session that gives a column its device check (its hardware tier's)."""
    tier = device_tier(target)
    return f"`nox -s {tier.name}`" if tier else target


REJECTED = "rejected as expected"
# each mark's meaning, said under the table for the marks that appear in it
LEGEND = {"✓": "✓ every case that ran passed, except those counted beside the mark as a tier limit or the "
               "environment's (not the kernel's)",
          "⚠": "⚠ k known: k cases fail as declared in the spec (known and expected, why and link below)",
          "✗": "✗ a case failed, with whose change it is (kernel fix, spec fix, a library, Triton bug, triton-ascend "
               "bug, bundle: re-record, or tolerance too tight: the values lie within a correct kernel's rounding) "
               "and its finding number",
          "?": "? the owner is provisional (the finding names the run that settles it)",
          "–": "– not checked: no case ran there, or every case that ran failed for a tier limit or the "
               "environment (REPORT.md says why)",
          "…": "… interrupted before it finished",
          REJECTED: "rejected as expected: the compiler refused a probe with the error its spec expects (its "
                    "compile record: not built), which is the probe's pass"}


def legend(marks: set[str]) -> str:
    return " · ".join(words for mark, words in LEGEND.items() if mark in marks)
