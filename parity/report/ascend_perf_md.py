"""The "Ascend performance" section of REPORT.md and DIVERGENCE.md: pure functions from records to text.

Each ascend-compile record of a compile that built carries `ascend_perf` (parity.backends.ascend.perf_rules):
static advice from the compile and the launch, never a measured speed. A kernel's compiles (every autotune
config, every case) often say the same thing: a note is one distinct (rule, line, evidence) per kernel and
arch, with how many compiles showed it. The verdict's Ascend cell links here with "perf: N notes".
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Any, TypedDict

from parity.report.tables import md_escape, table
from parity.results import Record

ANCHOR = "ascend-performance"
TITLE = "Ascend performance"
INTRO = ("Static advice from what each compile shows (the launch grid against the arch's cube or vector cores, "
         "core counts written into the source, tile shapes, block-pointer strides, cube and vector work in one "
         "kernel, a UB plan under a quarter of the buffer where a larger tile compiles and computes the fp64 "
         "answer): no NPU ran, so no speed is claimed. A note is one distinct finding of a kernel on an arch; "
         "`compiles` counts the compiles (configs and cases) that showed it. Launches too small to fill the cores "
         "are not judged on cores or tile shapes.")
Key = tuple[str, str, str, Any, str]  # arch, kernel, rule, line, evidence


class Note(TypedDict):
    """One distinct finding of the static advice: the change it asks for, and how many compiles showed it."""

    change: str
    compiles: int


def notes(records: Sequence[Record]) -> dict[Key, Note]:
    """Every distinct finding, with its change and how many compiles showed it, in record order."""
    found: dict[Key, Note] = {}
    for r in records:
        advice = r.get("ascend_perf")
        if not advice:
            continue
        for f in advice.get("findings") or []:
            key = (advice.get("arch", "?"), r["kernel"], f["rule"], f.get("line"), f["evidence"])
            entry = found.setdefault(key, Note(change=f["change"], compiles=0))
            entry["compiles"] += 1
    return found


def advised(records: Sequence[Record]) -> dict[tuple[str, str], int]:
    """(arch, kernel) -> compiles that were advised at all."""
    count: dict[tuple[str, str], int] = defaultdict(int)
    for r in records:
        if r.get("ascend_perf"):
            count[(r["ascend_perf"].get("arch", "?"), r["kernel"])] += 1
    return dict(count)


def cell_note(records: Sequence[Record], link_prefix: str = "") -> str | None:
    """"perf: 2 notes" for the verdict's cell, linked to the section; None where there are none."""
    n = len(notes(records))
    if not n:
        return None
    return f"[perf: {n} note{'s' if n != 1 else ''}]({link_prefix}REPORT.md#{ANCHOR})"


_LINK = re.compile(r"\\\[(perf: \d+ notes?)\\\]\(([^)\s]*)\)")
_RAW_LINK = re.compile(r"\[(perf: \d+ notes?)\]\([^)\s]*\)")


def relink(escaped: str) -> str:
    """A table cell after md_escape, with the perf note's link made a link again."""
    return _LINK.sub(lambda m: f"[{m.group(1)}]({m.group(2).replace(chr(92), '')})", escaped)


def unlink(text: str) -> str:
    """The perf note without its link, for a terminal."""
    return _RAW_LINK.sub(lambda m: m.group(1), text)


def kernel_rows(records: Sequence[Record]) -> list[list[Any]]:
    """One line per kernel and arch: compiles advised, notes, and the rules they come from."""
    found = notes(records)
    rows = []
    for (arch, kernel), n in sorted(advised(records).items()):
        mine = [k for k in found if k[0] == arch and k[1] == kernel]
        rules = ", ".join(dict.fromkeys(k[2] for k in mine)) or "none"
        rows.append([kernel, arch, n, len(mine), rules])
    return rows


def note_rows(records: Sequence[Record]) -> list[list[Any]]:
    return [[kernel, arch, rule, md_escape(str(line or "–"), 80), md_escape(evidence, 300),
             md_escape(entry["change"], 240), entry["compiles"]]
            for (arch, kernel, rule, line, evidence), entry in notes(records).items()]


def sections(records: Sequence[Record]) -> list[tuple[str, str]]:
    """[(title, body)] for a report, empty where no record was advised (not an Ascend compile tier)."""
    summary = kernel_rows(records)
    if not summary:
        return []
    parts = [INTRO, "", table(summary, ["kernel", "arch", "compiles advised", "notes", "rules"])]
    detail = note_rows(records)
    if detail:
        parts += ["", table(detail, ["kernel", "arch", "rule", "line", "evidence", "change", "compiles"])]
    return [(TITLE, "\n".join(parts))]
