"""parity's library map against a published per-op real-NPU source (issue 51): printed, never asserted.

bench/npu_agreement.py joins test functions of one recorded test file; a library's sources speak per op (an aten op
routed to the library's kernel, measured on an NPU). This joins those with `parity map`'s per-op verdicts and prints
the same counts and classes, through npu_agreement's own join and classes.

- An aten op (`add.Tensor`, `addcdiv_`, `_log_softmax`) is put in the map's op (test file) of the same name, with its
  overload first (`bitwise_and.Scalar` -> test_bitwise_and_scalar), else without it (`var.correction` -> test_var);
  leading and trailing underscores and `.out` forms are the same op. Ops the map has no test file for are not joined.
- The NPU's verdict per map op: fails if an entry of it failed for a reason of the kernel (compile error, wrong
  values, hang, runtime error), else passes if an entry passed, else fails for the source's harness alone.
- parity's verdict per op: the map's worst kernel: ports; does not build / wrong / needs a newer triton-ascend:
  fails (its owner and evidence are what a 'same reason' match reads); not checked: no prediction.

    python -m parity map B R-compile R-lowered --tests T > MAP.md
    python bench/npu_agreement_ops.py --map MAP.md data/npu-published/torch-fl-flaggems-ascend-910.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import npu_agreement as na  # bench/ on the path

VERDICTS = ("does not build on Ascend", "wrong on Ascend", "needs a newer triton-ascend", "ports", "not checked")
KERNEL_REASONS = ("compile_error", "wrong", "hang", "runtime_error")


def norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def map_rows(text: str) -> dict[str, tuple[str, list[str]]]:
    """Per op of a `parity map` table (normalised name): its worst verdict and what its failing rows said."""
    ops: dict[str, tuple[str, list[str]]] = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 5:
            continue
        verdict = next((v for v in VERDICTS if cells[2].startswith(v)), None)
        if verdict is None:
            continue
        op = norm(re.sub(r"^te?st_", "", cells[0]))
        worst, said = ops.get(op, ("not checked", []))
        if verdict not in ("ports", "not checked"):
            said = [*said, f"{cells[3]}: {cells[4]}"]
        if op not in ops or VERDICTS.index(verdict) < VERDICTS.index(worst):
            worst = verdict
        ops[op] = (worst, said)
    return ops


def op_of(aten: str, ops: dict[str, tuple[str, list[str]]]) -> str | None:
    base, _, overload = aten.partition(".")
    base = base.strip("_")
    overload = "" if overload == "out" else overload
    for name in (f"{base}{overload}", base, base.rstrip("_")):
        if norm(name) in ops:
            return norm(name)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="a per-op source of data/npu-published/")
    parser.add_argument("--map", type=Path, required=True, help="the markdown `parity map` printed")
    parser.add_argument("--triton-ascend", default="3.2.0", help="the triton-ascend of parity's Ascend tiers")
    parser.add_argument("--generation", default="A2", help="parity's Ascend target generation (910B3: A2)")
    parser.add_argument("--alike", default="A2,A3", help="generations taken as one target for a Triton-level verdict "
                        "(default A2,A3: triton-ascend builds one arch family for Atlas A2/A3, its release/3.2.x guide "
                        "names them together); a source outside them is classed 'hardware'")
    args = parser.parse_args()
    source = na.parse_source(json.loads(args.data.read_text(encoding="utf-8")))
    ops = map_rows(args.map.read_text(encoding="utf-8"))
    grouped: dict[str, list[na.NpuEntry]] = defaultdict(list)
    unmatched = []
    for e in source.entries:
        op = op_of(e.test, ops)
        if op is None:
            unmatched.append(e.test)
        else:
            grouped[op].append(e)
    entries, parity = [], {}
    for op, group in sorted(grouped.items()):
        kernel_fails = [e for e in group if e.verdict == "fails" and e.reason_kind in KERNEL_REASONS]
        passes = [e for e in group if e.verdict == "passes"]
        chosen = kernel_fails or passes or group
        first = chosen[0]
        names = ", ".join(e.test for e in chosen[:4]) + (" …" if len(chosen) > 4 else "")
        entries.append(na.NpuEntry(op, first.verdict, f"{names}: {first.reason}" if first.reason else names,
                                   first.reason_kind, first.match))
        verdict, said = ops[op]
        pv = {"ports": "ports", "not checked": "none"}.get(verdict, "fails")
        owners = tuple(sorted({s.split(":")[0] or "?" for s in said})) if pv == "fails" else ()
        parity[op] = na.ParityVerdict(op, pv, owners, tuple(said), why="the map says not checked")
    joined = na.Source(source.name + " (per op of parity's map)", source.where, source.stack, None, tuple(entries))
    alike = set(args.alike.split(","))
    generation = source.stack.generation if {args.generation, source.stack.generation} <= alike else args.generation
    agreement = na.join(joined, parity, na.Stack(args.triton_ascend, generation))
    for i, row in enumerate(agreement.rows):
        if row.cls is None or row.parity is None:
            continue
        if ops[row.test][0] == "needs a newer triton-ascend" and row.npu.verdict == "passes":
            agreement.rows[i] = na.Row(row.test, row.npu, row.parity, row.outcome, "version",
                                       "parity says a later triton-ascend fixes it; the NPU passed (its triton-ascend "
                                       f"is {source.stack.triton_ascend or 'not stated'})")
        elif row.npu.reason_kind == "runtime_error" and row.cls == "parity defect":
            agreement.rows[i] = na.Row(row.test, row.npu, row.parity, row.outcome, "cause not stated",
                                       "the source says 'runtime error' and no more: not classed")
    print(na.render(agreement))
    c = agreement.counts()
    judged = sum(c[o] for o in (*na.OUTCOMES, "both fail, other reason"))
    same = c["both port"] + c["both fail, same reason"] + c["both fail, other reason"]
    print(f"\nOn the Triton-level verdict alone (ports / fails, whatever the reason): {same} of {judged} agree"
          + (f" ({100 * same / judged:.0f} %)" if judged else ""))
    print(f"\nSource entries with no op of that name in the map (not joined): {len(unmatched)}"
          + (f" ({', '.join(unmatched[:30])}{' …' if len(unmatched) > 30 else ''})" if unmatched else ""))


if __name__ == "__main__":
    main()
