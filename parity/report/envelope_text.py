"""The envelope as a user reads it: one sentence per kernel, target and axis (with a replayed axis' members and the
row's notes), and a table. Pure functions.

Here, below the envelope itself (parity.envelope, which imports it as parity.envelope.rendering), so that
`parity report` renders the rows a results dir holds (parity.report.envelope_md) in the same words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CHECKED = "grid, on-chip memory, int32 offsets, launcher"
# what the first crossing's run did: a compile that failed never launched, a refused launch never compiled (the
# limits' names of parity.envelope.limits: MEMORY, COMPILE, LAUNCHER)
RAN = {"on-chip memory": "failed to compile", "compile": "failed to compile", "launcher": "was refused at launch"}


def shown(row: Mapping[str, Any]) -> str:
    """The target as the verdict names it ("Ascend (triton-ascend)"), from the tier that ran it."""
    return str(row.get("target_name") or row["target"])


def _others(row: Mapping[str, Any]) -> str:
    axis = row["axis"]["name"]
    rest = [f"{k}={v}" for k, v in row["params"].items() if k != axis and isinstance(v, (int, str))]
    return f" ({', '.join(rest)})" if rest else ""


def _storm(row: Mapping[str, Any]) -> str:
    storm, axis = row.get("storm") or {}, row["axis"]["name"]
    sizes, n = storm.get("sizes") or [], storm.get("compiles")
    shown = ", ".join(f"{s:,}" for s in sizes)
    if n is None:
        why = storm.get("why") or "a launch at these sizes read tensor data or failed"
        return f" Specialization: not checked ({why})."
    one = storm.get("at_one") or 1
    if sizes and n >= len(sizes) * one:
        fix = storm.get("advice") or f"pass {axis} as a plain argument (do_not_specialize), not a tl.constexpr"
        return (f" Specialization: a new compile at each {axis} ({axis} = {shown}: {n} compiles, {one} at one size), a "
                f"storm at production sizes: {fix}.")
    return f" Specialization: {n} compile(s) over {axis} = {shown}."


def _offsets_note(row: Mapping[str, Any]) -> str:
    width = (row.get("ok_probe") or {}).get("offsets")
    if width == "i32":
        return ""
    return {"i64": " int32 offsets: the TTIR's pointer offsets are int64.",
            "mixed": " int32 offsets: not checked (the TTIRs mix i32 and i64 pointer offsets)."}.get(
        width or "", " int32 offsets: not checked (no TTIR seen).")


def sentence(row: Mapping[str, Any]) -> str:
    """What one kernel does on one target along one axis, with the proof of its first crossing."""
    kernel, target = row["kernel"], shown(row)
    if row.get("skipped"):
        return f"{kernel} on {target}: not checked: {row['skipped']}"
    axis, last_ok, first = row["axis"]["name"], row["last_ok"], row["first_bad"]
    where = _others(row)
    if first is None:
        return (f"{kernel} ports on {target} up to {axis} = {last_ok:,}{where}, the production maximum: no limit "
                f"crossed ({row.get('checked') or CHECKED}).{_offsets_note(row)}{_storm(row)}")
    bad = row.get("bad_probe") or {}
    if bad.get("not_checked") or not row["crossings"]:
        why = bad.get("not_checked") or "no limit named"
        said = next((str(m) for _, m in bad.get("launch_errors") or []), "")  # the launcher's own words, if any
        if said and said.splitlines()[0] not in why:
            why += f" ({said.splitlines()[0][:200]})"
        head = f"{kernel} on {target}: {axis} = {first:,} not checked: {why}"
        return head + (f"; it ports up to {axis} = {last_ok:,}{where}." if last_ok else ".")
    c = row["crossings"][0]
    ran = RAN.get(c["limit"], "compiled and launched")
    proof = (f"proven: {axis} = {first:,} {ran}: {c['evidence']}" if c["proven_by_run"] else
             f"found from the TTIR and the launch's sizes, not proven by a run ({c['evidence']})")
    if last_ok is None:
        return f"{kernel} on {target} already crosses at {axis} = {first:,}{where}: {c['figure']}; {proof}."
    return (f"{kernel} ports on {target} up to {axis} = {last_ok:,}{where}; at {axis} >= {first:,} {c['figure']} "
            f"({c['limit']}): {c['fix']}. {proof[0].upper()}{proof[1:]}; {axis} = {last_ok:,} passes the same "
            f"check.{_storm(row)}")


HEADERS = ["kernel", "target", "axis", "ports up to", "first crossing", "limit", "compiles over 3 sizes"]


def cells(row: Mapping[str, Any]) -> list[str]:
    """One row of the table: kernel, target, axis, the last size that ports, the first crossing and its limit."""
    target = shown(row)
    if row.get("skipped"):
        return [str(row["kernel"]), target, "–", "not checked", "–", "–", "–"]
    first, crossed = row["first_bad"], row["crossings"]
    limit = crossed[0]["limit"] if crossed else ("not checked" if first is not None else "none")
    if (row.get("bad_probe") or {}).get("not_checked"):  # as the sentence: a size not checked crosses nothing
        limit, crossed = "not checked", []
    if crossed and not crossed[0]["proven_by_run"]:
        limit += " (not proven by a run)"
    elif not crossed and row.get("grid_unknown"):  # a replayed kernel whose grid the recording does not tell
        limit += " (grid not checked)"
    upto = f"{row['last_ok']:,}" if row["last_ok"] is not None else "–"
    storm = (row.get("storm") or {}).get("compiles")
    return [str(row["kernel"]), target, str(row["axis"]["name"]), upto,
            "safe to the maximum" if first is None else f"{first:,}", limit,
            "not checked" if storm is None else str(storm)]


def table(rows: Sequence[Mapping[str, Any]]) -> str:
    """A markdown table of `cells`, one line per row."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    return "\n".join(lines + ["| " + " | ".join(cells(row)) + " |" for row in rows])


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


def said(row: Mapping[str, Any]) -> str:
    """The sentence of a row and what follows it: a replayed axis' members, the row's notes."""
    return sentence(row) + members(row)
