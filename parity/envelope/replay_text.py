"""What a replayed kernel's row adds to its sentence: the axis' members as fitted, the grid when not known, and
what the recording left out. Pure functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def members(row: Mapping[str, Any]) -> str:
    """" Axis q.1 (recorded up to 8,192): q.1 = q.1, grid.0 = cdiv(q.1, 64), ...", or "" for a spec's row."""
    parts = []
    fitted = row.get("members") or {}
    if fitted:
        axis = row["axis"]
        shown = ", ".join(f"{m} = {text}" for m, text in fitted.items() if m != axis["name"])
        parts.append(f" Axis {axis['name']} (recorded up to {axis['low']:,}, from launch {row['params']['launch']})"
                     + (f": {shown}." if shown else "."))
    if row.get("grid_unknown"):
        parts.append(f" The grid: not checked: {row['grid_unknown']}.")
    parts += [f" {note[0].upper()}{note[1:]}." for note in row.get("notes") or []]
    unended = row.get("skipped") and not str(row["skipped"]).endswith(".")  # its sentence is the bare reason
    return ("." if parts and unended else "") + "".join(parts)
