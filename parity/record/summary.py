"""`parity replay-summary BUNDLE [DIR ...]`: per kernel, what a bundle holds and how each tier replayed it.

Launches seen and kept and distinct specializations come from the bundle (its counts lines also cover the
launches deduplication dropped); per results dir of a `--replay BUNDLE` run: cases replayed, agreeing,
disagreeing (with each one's owner), not replayable (with the reason), and compiles on the compile tiers.
Pure over the loaded data, I/O at `main`.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from parity.record.bundle import Bundle, BundleError, load_bundle
from parity.results import Owner, Record, Status

DISAGREE = (Status.FAILED, Status.ERROR, Status.CRASHED)


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
            counted = rows.get(info.get("kernel_id", ""))
            if counted is not None:
                counted["seen"] += info["seen"]
                counted["specs"].add(info.get("specialization"))
                counted["counted"] = True
    for row in rows.values():
        row["seen"] = row["seen"] if row["counted"] else row["kept"]  # a process cut before its counts line
        row["specializations"] = len(row.pop("specs") - {None})
    return list(rows.values())


def _short(text: str, limit: int = 120) -> str:
    """A reason cut at a word boundary, marked as cut."""
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _owner_word(record: Record) -> str:
    """Who owns a disagreeing case; a provisional owner (triage still waits for a tier's evidence) is marked,
    never stated as settled."""
    owner = record.get("owner")
    if owner is None:
        return "?"
    return str(owner.who) + (" (provisional)" if owner.provisional else "")


def tier_cell(records: Sequence[Record]) -> str:
    if not records:
        return "not run"
    status = Counter(r["status"] for r in records)
    # never replayed (the bundle's own error kind): no agreement either way
    damaged = [r for r in records if r.get("error_kind") == BundleError.parity_error_kind]
    parts = [f"{len(records) - len(damaged)} replayed", f"{status[Status.PASSED]} agree"]
    bad = [r for r in records if r["status"] in DISAGREE and r not in damaged]
    if bad:
        owners = Counter(_owner_word(r) for r in bad)
        parts.append(f"{len(bad)} disagree ({', '.join(f'{n}× {o}' for o, n in owners.items())})")
    if damaged:
        parts.append(f"{len(damaged)} not replayed: bundle file damaged, re-record")
    # a known limit (a tier's own, or a vendor bug already reported) that the replay met: counted with its id, so a
    # cell never reads "0 agree" with nothing said of the rest
    known = [r for r in records if r["status"] == Status.XFAILED]
    if known:
        limits = Counter(str(_limit(r.get("owner")) or "known divergence") for r in known)
        parts.append(f"{len(known)} known limit ({', '.join(f'{n}× {lim}' for lim, n in limits.items())})")
    skipped = [r for r in records if r["status"] == Status.SKIPPED]
    if skipped:
        reasons = Counter(_short(str(r.get("reason"))) for r in skipped)
        parts.append(f"{len(skipped)} not replayable ({'; '.join(reasons)})")
    compiles = sum(int(r.get("compiles") or 0) for r in records if r.get("mode") == "compile")
    if records[0].get("mode") == "compile":
        parts.append(f"{compiles} compiles")
    return ", ".join(parts)


def recorded_under(bundle: Bundle) -> str:
    """Whether the recorded launches ran under the interpreter, said plainly (each process line records it):
    an interpreter recording's outputs are the interpreter's, not a device's."""
    envs = [p.get("env", {}) for p in bundle.processes]
    interpreted = sum(1 for e in envs if e.get("interpret"))
    devices = sorted({str(e["device"]) for e in envs if e.get("device") and not e.get("interpret")})
    if not envs:
        return "Where the launches ran is not known: the bundle has no process line."
    if interpreted == len(envs):
        return (f"Recorded under the interpreter (TRITON_INTERPRET=1, all {len(envs)} recording process(es)): the "
                "recorded outputs are the interpreter's, not a device's.")
    on = f" on {', '.join(devices)}" if devices else ""
    if interpreted:
        return (f"Recorded under the interpreter in {interpreted} of {len(envs)} recording processes (TRITON_INTERPRET"
                f"=1); the others ran{on} without it.")
    return f"Recorded without the interpreter{on} ({len(envs)} recording process(es))."


def _limit(owner: Owner | None) -> str | None:
    return owner.limit if owner is not None else None


def _tier_records(records: Sequence[Record], kernels: set[str]) -> list[Record]:
    return [r for r in records if r["kernel"] in kernels and r.get("suite") in ("accuracy", "compile")]


def report_sections(records: Sequence[Record], env: dict[str, Any], bundle_path: str) -> list[tuple[str, str]]:
    """The section a --replay run adds to its REPORT.md: per kernel and per library module, launches, distinct
    specializations, compiles on this tier's arch and this tier's agreement (replay-summary sets tiers side by
    side)."""
    from parity.record.replay import kernel_groups

    try:
        bundle = load_bundle(bundle_path)
    except BundleError as exc:
        return [("Recorded workload", f"The bundle cannot be read back for this section: {exc}")]
    names = {kernel_id: name for kernel_id, (name, _) in kernel_groups(bundle).items()}
    tier = str(env.get("backend", "this tier"))
    arch = env.get("target_arch") or env.get("device_name") or tier
    rows = kernel_rows(bundle, names)
    head = ["kernel", "module", "launches", "distinct specializations", f"compiles on {arch}", f"{tier}: agreement"]
    lines = [f"Bundle `{bundle_path}`. {recorded_under(bundle)} Tensor files {bundle.verified()}.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    modules: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        mine = _tier_records(records, {row["kernel"]})
        row["compiles"] = sum(int(r.get("compiles") or 0) for r in mine)
        lines.append(f"| {row['kernel']} | {row['module']} | {row['seen']} | {row['specializations']} | "
                     f"{row['compiles']} | {tier_cell(mine)} |")
        modules[str(row["module"])].append(row)
    lines += ["", "| module | kernels | launches | distinct specializations | compiles on "
              f"{arch} | {tier}: agreement |", "|---|---|---|---|---|---|"]
    for module, group in sorted(modules.items()):
        mine = _tier_records(records, {row["kernel"] for row in group})
        lines.append(f"| {module} | {len(group)} | {sum(r['seen'] for r in group)} | "
                     f"{sum(r['specializations'] for r in group)} | {sum(r['compiles'] for r in group)} | "
                     f"{tier_cell(mine)} |")
    lines += ["", "`launches` counts every launch the recording saw (deduplication keeps a few per key and counts "
              f"the rest); each tier's agreement side by side: `parity replay-summary {bundle_path} DIR ...`."]
    return [("Recorded workload", "\n".join(lines))]


def render(bundle: Bundle, tiers: dict[str, list[Record]], spec_names: dict[str, str]) -> str:
    rows = kernel_rows(bundle, spec_names)
    head = ["kernel", "module", "launches seen", "kept", "distinct specializations", *tiers]
    lines = [recorded_under(bundle), f"Tensor files {bundle.verified()}.", "", "| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
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
    tiers: dict[str, list[Record]] = {}
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
