"""The known NPU bugs a pass could not see, in the report (records' `npu_unseen`, written by parity.known_npu): a word
beside the pass in the verdict cell, and one sentence per kernel, tier and bug below the table. A pass stays a pass;
it is only never bare. Pure: records in, markdown out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from parity.report.tables import md_code
from parity.results import Record, Status

PASSES = (Status.PASSED, Status.XPASSED)
HEAD = "### Known NPU bugs these passes cannot see"
INTRO = ("A pass on ascend-compile or ascend-lowered checked the compile or triton-ascend's lowering on the CPU, not "
         "the NPU itself. These kernels have the pattern of a published silent wrong result of triton-ascend on a real "
         "NPU that the tier does not reproduce (`parity.known_npu`; its canaries are `tests/planted_npu_bugs.py`). "
         "They stay passes; the device tier (`nox -s ascend`) is the check that can see them.")


def _unseen(records: Sequence[Record]) -> list[tuple[Record, dict[str, str]]]:
    return [(r, u) for r in records if r["status"] in PASSES for u in r.get("npu_unseen") or ()]


def cell_note(word: str, records: Sequence[Record]) -> str:
    """`lowered cannot see known NPU bug triton-ascend#2291` beside a pass, or "" where no passing record has one."""
    ids = list(dict.fromkeys(u["id"] for _, u in _unseen(records)))
    return f"{word} cannot see known NPU bug {', '.join(ids)}" if ids else ""


def lines(records: Sequence[Record]) -> list[str]:
    """One sentence per kernel, tier and bug: the record's note (`<tier> cannot see this known NPU bug: <link>`) and
    the kernel's line that has the pattern."""
    seen: dict[tuple[str, str, str], str] = {}
    for r, u in _unseen(records):
        key = (r["kernel"], r["backend"], u["id"])
        # the note is parity's own sentence (its link stays a link); the kernel's name and line are code
        seen.setdefault(key, f"- {md_code(r['kernel'], 80)}: {' '.join(u['note'].split())}; the kernel's "
                             f"{md_code(u['line'], 140)}")
    return [seen[k] for k in sorted(seen)]


def section(records: Mapping[str, Sequence[Record]]) -> str:
    """The section below the verdict table, or "" where no pass carries a known NPU bug."""
    found = [line for column in records.values() for line in lines(column)]
    if not found:
        return ""
    return "\n".join(["", HEAD, "", INTRO, "", *list(dict.fromkeys(found)), ""])
