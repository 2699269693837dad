"""Which compile of the describing re-run a failing compile record is (parity.repro.compile_repro).

The re-run launches the case once more and describes each compile it starts, but its list need
not line up with the tier's records one for one: a kernel the tier recorded as a rejected launch
option is retried without it in the re-run (two entries for one record), a launcher that went on
past a failure on the tier may stop earlier or later, and a library may compile its kernels in
another order. So a record is matched by what it is: its kernel, its variant and config where it
has them, or the launch option it was rejected for; among equals, in order of occurrence. The
record's own index is kept where the entry there agrees.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def rejected_option(comp: Mapping[str, Any]) -> str | None:
    """The launch option a compile record says Triton rejected before compiling, or None.

    cuda-compile records it as error_kind `launch_option`; ascend-compile keeps the launcher's
    KeyError as a launch error of a record that reached no stage."""
    from parity.compile.keep_going import UNKNOWN_OPTION_RE

    if comp.get("ok") is not False or (comp.get("stage_reached") and comp.get("error_kind") != "launch_option"):
        return None
    found = UNKNOWN_OPTION_RE.search(str(comp.get("launch_error") or "")) or \
        UNKNOWN_OPTION_RE.search(str(comp.get("message") or ""))  # what keep_going.unknown_option reads of a raise
    return found.group(1) if found else None


def _agrees(comp: Mapping[str, Any], entry: Mapping[str, Any], same_kernel: bool) -> bool:
    option = rejected_option(comp)
    if option is not None or "launch_option" in entry:
        return option == entry.get("launch_option") and (not same_kernel or entry["kernel"] == comp.get("kernel"))
    if entry.get("kernel") != comp.get("kernel"):
        return False
    values = entry.get("values")
    if not isinstance(values, Mapping):  # described without them: the kernel name is all there is
        return True
    wanted = {**(comp.get("variant") or {}), **(comp.get("config") or {})}
    return all(values[k] == v for k, v in wanted.items() if k in values)


def match(compiles: Sequence[Mapping[str, Any]], entries: Sequence[Mapping[str, Any]]) -> list[int | None]:
    """For each record's compile dict (in record order), the index of its entry, or None.

    A record whose rejected option names no kernel of the spec (ascend-compile records a launcher's
    raise under the spec's first kernel) still matches the entry rejected for that option."""
    used: set[int] = set()
    out: list[int | None] = []
    for i, comp in enumerate(compiles):
        found: int | None = None
        if i < len(entries) and _agrees(comp, entries[i], same_kernel=True):
            found = i
        for same_kernel in (True, False):
            if found is None or found in used:
                found = next((j for j, e in enumerate(entries) if j not in used and _agrees(comp, e, same_kernel)),
                             None)
            if found is not None or rejected_option(comp) is None:
                break
        if found is not None:
            used.add(found)
        out.append(found)
    return out
