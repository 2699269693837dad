"""Print the Ascend perf advice's calibration table from results dirs: each distinct finding, its label, precision.

    python bench/ascend_perf_table.py reports/perf-calib-B1 reports/perf-calib-B3

A finding is labelled by reading the kernel's code (LABELS below: kernel, rule -> right/wrong and why); an
unlabelled one prints "unlabelled" and counts against nothing until someone reads it. Twins (kernels named
`calib_twin_*`) must get no finding other than the cube-and-vector note, which is advice about the kernel's
kind, not a defect a fix removes.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

# (kernel without the calib_ prefix, rule) -> (label, why), from reading each kernel's source
LABELS: dict[tuple[str, str], tuple[str, str]] = {}


def load(dirs: list[str]) -> list[dict]:
    records = []
    for d in dirs:
        for path in sorted(Path(d).glob("results*.jsonl")):
            for line in path.read_text().splitlines():
                try:
                    records.append(json.loads(line))
                except ValueError:
                    continue
    return records


def distinct(records: list[dict]) -> dict[tuple, dict]:
    found: dict[tuple, dict] = {}
    for r in records:
        advice = r.get("ascend_perf")
        if not advice:
            continue
        for f in advice["findings"]:
            key = (r["kernel"].removeprefix("calib_"), advice["arch"], f["rule"], f["line"], f["evidence"])
            found.setdefault(key, {"compiles": 0})["compiles"] += 1
    return found


def main(dirs: list[str]) -> None:
    records = load(dirs)
    advised = defaultdict(int)
    for r in records:
        if r.get("ascend_perf"):
            advised[(r["kernel"].removeprefix("calib_"), r["ascend_perf"]["arch"])] += 1
    found = distinct(records)
    print("| kernel | arch | rule | line | evidence | compiles | label | why |")
    print("|---|---|---|---|---|---|---|---|")
    score: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    twins = 0
    for (kernel, arch, rule, line, evidence), entry in found.items():
        label, why = LABELS.get((kernel, rule), ("unlabelled", ""))
        if kernel.startswith("twin_") and rule != "cv.mix":
            twins += 1
        if label in ("right", "wrong"):
            score[rule][0] += label == "right"
            score[rule][1] += 1
        print(f"| {kernel} | {arch} | {rule} | {line or '–'} | {evidence.replace('|', '/')} | {entry['compiles']} "
              f"| {label} | {why} |")
    print()
    print("| rule | right | labelled | precision |")
    print("|---|---|---|---|")
    for rule, (right, n) in sorted(score.items()):
        print(f"| {rule} | {right} | {n} | {right / n:.0%} |")
    print()
    clean = sorted({k for k in advised if not any(f[0] == k[0] and f[1] == k[1] for f in found)})
    print(f"kernels x archs advised: {len(advised)}; with no finding: {len(clean)} "
          f"({', '.join(f'{k} ({a})' for k, a in clean)})")
    print(f"findings on the clean twins (cube-and-vector notes aside): {twins}")


if __name__ == "__main__":
    main(sys.argv[1:])
