"""`parity replay-summary BUNDLE [DIR ...]`: per kernel, what a bundle holds and how each tier replayed it.

Launches seen and kept and distinct specializations come from the bundle (its counts lines also cover the
launches deduplication dropped); per results dir of a `--replay BUNDLE` run: cases replayed, agreeing,
disagreeing (with each one's owner), not replayable (with the reason), and compiles on the compile tiers.
Pure over the loaded data, I/O at `main`.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from parity.record.bundle import Bundle, BundleError, load_bundle


def kernel_rows(bundle: Bundle, spec_names: dict[str, str]) -> list[dict[str, Any]]:
    """One row per recorded kernel: name, module, seen, kept, distinct specializations."""
    rows: dict[str, dict[str, Any]] = {}
    for e in bundle.launches:
        k = e["kernel"]
        row = rows.setdefault(k["id"], {"kernel": spec_names.get(k["id"], k.get("name")), "module": k.get("module"),
                                        "seen": 0, "kept": 0, "specs": set(), "counted": False})
        row["kept"] += 1
        row["specs"].add(e["specialization"])
    for c in bundle.counts:
        for info in c.get("keys", {}).values():
            row = rows.get(info.get("kernel_id", ""))
            if row is not None:
                row["seen"] += info["seen"]
                row["specs"].add(info.get("specialization"))
                row["counted"] = True
    for row in rows.values():
        row["seen"] = row["seen"] if row["counted"] else row["kept"]  # a process cut before its counts line
        row["specializations"] = len(row.pop("specs") - {None})
    return list(rows.values())


def tier_cell(records: list[dict[str, Any]]) -> str:
    if not records:
        return "not run"
    status = Counter(r["status"] for r in records)
    parts = [f"{len(records)} replayed", f"{status['passed']} agree"]
    bad = [r for r in records if r["status"] in ("failed", "error", "crashed")]
    if bad:
        # a provisional owner (triage still waits for a tier's evidence) is marked, never stated as settled
        owners = Counter(str((r.get("owner") or {}).get("who", "?")) + (" (provisional)" if (r.get("owner") or {})
                         .get("provisional") else "") for r in bad)
        parts.append(f"{len(bad)} disagree ({', '.join(f'{n}× {o}' for o, n in owners.items())})")
    skipped = [r for r in records if r["status"] == "skipped"]
    if skipped:
        reasons = Counter(str(r.get("reason"))[:80] for r in skipped)
        parts.append(f"{len(skipped)} not replayable ({'; '.join(reasons)})")
    compiles = sum(int(r.get("compiles") or 0) for r in records if r.get("mode") == "compile")
    if records[0].get("mode") == "compile":
        parts.append(f"{compiles} compiles")
    return ", ".join(parts)


def render(bundle: Bundle, tiers: dict[str, list[dict[str, Any]]], spec_names: dict[str, str]) -> str:
    rows = kernel_rows(bundle, spec_names)
    head = ["kernel", "module", "launches seen", "kept", "distinct specializations", *tiers]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    by_module: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in rows:
        cells = [row["kernel"], row["module"], str(row["seen"]), str(row["kept"]), str(row["specializations"])]
        for records in tiers.values():
            cells.append(tier_cell([r for r in records if r["kernel"] == row["kernel"]
                                    and r.get("suite") in ("accuracy", "compile")]))
        lines.append("| " + " | ".join(cells) + " |")
        totals = by_module[str(row["module"])]
        totals[0] += row["seen"]
        totals[1] += row["kept"]
        totals[2] += row["specializations"]
    lines += ["", "| module | launches seen | kept | distinct specializations |", "|---|---|---|---|"]
    lines += [f"| {m} | {t[0]} | {t[1]} | {t[2]} |" for m, t in sorted(by_module.items())]
    if bundle.unrecorded:
        lines += ["", f"{len(bundle.unrecorded)} launch(es) could not be recorded:"]
        lines += [f"- {u.get('kernel', {}).get('name', '?')}: {u.get('reason')}" for u in bundle.unrecorded[:20]]
    stopped = [c["stopped"] for c in bundle.counts if c.get("stopped")]
    if stopped:
        lines += ["", f"recording stopped keeping launches: {stopped[0]}"]
    return "\n".join(lines) + "\n"


def main(bundle_path: Path, dirs: list[Path]) -> int:
    from parity.record.replay import kernel_groups
    from parity.results import load_results

    try:
        bundle = load_bundle(bundle_path)
    except BundleError as exc:
        print(f"parity replay-summary: {exc}", file=sys.stderr)
        return 2
    names = {kernel_id: name for kernel_id, (name, _) in kernel_groups(bundle).items()}
    tiers = {}
    for d in dirs:
        try:
            records = load_results(d) if d.is_dir() else []
        except Exception as exc:  # one unreadable dir is a warning; the others are summarized
            print(f"parity replay-summary: {d}: skipped, its results cannot be read ({exc})", file=sys.stderr)
            continue
        if not records:
            print(f"parity replay-summary: {d}: skipped, no records (run `--replay` into it first)", file=sys.stderr)
            continue
        label = records[0]["backend"]
        tiers[label if label not in tiers else f"{label} ({d.name})"] = records
    print(render(bundle, tiers, names), end="")
    return 0
