"""Print the Ascend perf advice's calibration table from results dirs: each distinct finding, its label, precision.

    python -m bench.ascend_perf_table reports/perf-calib-B1 reports/perf-calib-B3      # from the repo root

A finding is labelled by reading the kernel's code (LABELS below: kernel, rule -> right/wrong and why); an
unlabelled one prints "unlabelled" and counts against nothing until someone reads it. Twins and controls are not
calibration kernels: they are left out of the precision table and get their own. A twin (`calib_twin_*`,
bench/ascend_perf_twins.py) must get no finding other than the cube-and-vector note, which is advice about the
kernel's kind, not a defect a fix removes, and the rules its Twin names as having no twin (each with why); a
control (`calib_full_*`: a rule's kernel where the cores are full) must get none beyond the note either.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/ascend_perf_table.py`: the repo root holds bench/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ascend_perf_twins import FULL_CORES, TWINS

# (kernel without the calib_ prefix, rule) -> (label, why), from reading each kernel's source
_CV = ("right", "bishengir says mix; the source has tl.dot and element-wise gating or softmax work")
_STRIDE_H = ("right", "a [B, T, H] tensor read along T with stride H; the GDN NPU port pre-transposes g and beta for "
                      "exactly this (chunk_delta_h.py: 'to ensure contiguous memory access within the kernel')")
LABELS: dict[tuple[str, str], tuple[str, str]] = {
    ("fa_test_npu_attn_fwd", "cores.hard_coded"): ("right", "launcher `num_cores = 20`, grid `(num_cores,)`, kernel "
                                                   "`range(pid, NUM_BLOCKS, 20)`"),
    ("fa_test_npu_attn_fwd", "cv.mix"): _CV,
    ("twin_fa_test_npu_attn_fwd", "cv.mix"): _CV,
    ("flash_attention_fwd", "cv.mix"): _CV,
    ("fla_chunk_scaled_dot_kkt_fwd", "cv.mix"): _CV,
    ("fla_solve_tril", "cv.mix"): _CV,
    ("gdn_chunk_scaled_dot_kkt", "cv.mix"): _CV,
    ("gdn_chunk_fwd_h", "cv.mix"): _CV,
    ("gdn_npu_chunk_fwd_o", "cv.mix"): _CV,
    ("gdn_npu_chunk_gated_delta_rule_fwd_h", "cv.mix"): _CV,
    ("gdn_npu_chunk_scaled_dot_kkt_fwd", "cv.mix"): _CV,
    ("block_ptr_tile", "contiguity.block_ptr"): ("right", "rowsum [B, T, H] stored along T with stride H"),
    ("gdn_chunk_scaled_dot_kkt", "contiguity.block_ptr"): _STRIDE_H,
    ("gdn_chunk_fwd_h", "contiguity.block_ptr"): _STRIDE_H,
    ("gdn_chunk_fwd_h", "cores.idle"): ("right", "grid (V/BV, B*H): with B*H = 4 the only parallelism is V/BV; T is a "
                                        "serial loop inside each program"),
    ("gdn_chunk_fwd_h", "cores.last_wave"): ("right", "BV=16: 32 equal programs (each loops over all of T) on 24 cube "
                                             "cores, so a second round with 8 busy"),
    ("gdn_npu_chunk_fwd_o", "cores.idle"): ("right", "grid (V/BV, N*H) = (1, 4): the port loops over every chunk of T "
                                            "inside one program"),
    ("gdn_npu_chunk_gated_delta_rule_fwd_h", "cores.idle"): ("right", "grid `(1, N * H)`: 4 programs at H=4"),
    ("gdn_npu_solve_tril", "cores.idle"): ("right", "grid (cdiv(T, LARGE_BLOCK_T), B*H) = (4, 4): 16 programs of "
                                           "a vector-only kernel"),
    # the first run's rule flagged these; read: a [1, 1024] row tile is aligned, so the rule now judges only
    # innermost blocks (kept here so a regression is labelled)
    ("mojo_gelu_fwd", "shape.block_of_one"): ("wrong", "BLOCK_SIZE_M=1 is the row count of a [1, 1024] tile"),
    ("mojo_silu_fwd", "shape.block_of_one"): ("wrong", "BLOCK_SIZE_M=1 is the row count of a [1, 1024] tile"),
    ("mojo_swiglu_fwd", "shape.block_of_one"): ("wrong", "BLOCK_SIZE_M=1 is the row count of a [1, 1024] tile"),
}


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
    for (kernel, arch, rule, line, evidence), entry in found.items():
        if kernel.startswith(("twin_", "full_")):
            continue
        label, why = LABELS.get((kernel, rule), ("unlabelled", ""))
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
    print()
    twin_table(records)


def twin_table(records: list[dict]) -> None:
    """One line per twin or control, arch and case: its findings beyond the cube-and-vector note, split into the
    rules no twin applies to (the Twin's residual, with why) and the rest, which must be none."""
    print("| twin or control | arch | case | findings (cv.mix aside) | no twin applies | other findings |")
    print("|---|---|---|---|---|---|")
    rows: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for r in records:
        kernel = r["kernel"].removeprefix("calib_")
        advice = r.get("ascend_perf")
        if not kernel.startswith(("twin_", "full_")) or not advice:
            continue
        case = r["case"].split(";")[0]
        rows[(kernel, advice["arch"], case)] += [f["rule"] for f in advice["findings"] if f["rule"] != "cv.mix"]
    others = 0
    for (kernel, arch, case), rules in sorted(rows.items()):
        twin = TWINS.get(kernel.removeprefix("twin_"))
        residual = twin.residual if twin is not None and kernel.startswith("twin_") else {}
        kept = sorted({r for r in rules if r in residual})
        rest = sorted({r for r in rules if r not in residual})
        others += len([r for r in rules if r not in residual])
        print(f"| {kernel} | {arch} | {case} | {len(rules)} | {', '.join(kept) or '–'} | {', '.join(rest) or 'none'} |")
    print()
    for name, twin in TWINS.items():
        by_why: dict[str, list[str]] = defaultdict(list)
        for rule, why in twin.residual.items():
            by_why[why].append(rule)
        print(f"- twin_{name}: {twin.change}" + "".join(f"; {', '.join(r)}: {why}" for why, r in by_why.items()))
    for name, (_, why) in FULL_CORES.items():
        print(f"- full_{name}: {why}")
    print(f"\nfindings on the twins and controls beyond cv.mix and the rules no twin applies to: {others}")


if __name__ == "__main__":
    main(sys.argv[1:])
