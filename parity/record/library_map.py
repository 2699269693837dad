"""`parity map BUNDLE RESULTS...`: a recorded library's portability to Ascend, per op and kernel, one markdown table.

An op is the test file whose process recorded the launch (`bench/record_library_ops.sh` runs one recording process
per test file; its argv names the file), else the kernel's module. Per kernel and Ascend tier the records of its
replayed launches give one verdict, worst first:

- **does not build on Ascend**: a compile tier, or the lowering, could not build it (owner: whoever must act);
- **wrong on Ascend**: the lowering built it and its outputs differ from the recording, or it crashed;
- **needs a newer triton-ascend**: triton-ascend's bug, fixed in a later release (the owner's "fixed in X", or a
  known limit whose text says a later triton-ascend fixed it);
- **ports**: every replayed launch compiled / agreed, and the cell says what that checked and what it did not;
- **not checked**: nothing replayed it (not replayable, a tier's own limit, not replayed in this run).

Never "ports" on a record that failed: a failure whose owner is a tier (its own limit) is "not checked", never a
pass. Pure over the loaded bundle and records; I/O at `main`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import parity.known_npu as known_npu
from parity.reasons import key_line
from parity.report.tables import md_escape
from parity.results import OwnerKind, Record, Status, load_results
from parity.triage.owner import fixed_in

NO_BUILD = "does not build on Ascend"
WRONG = "wrong on Ascend"
NEWER = "needs a newer triton-ascend"
PORTS = "ports"
UNCHECKED = "not checked"
SEVERITY = (NO_BUILD, WRONG, NEWER, PORTS, UNCHECKED)  # a kernel's verdict is the first of its launches' verdicts
FAILING = (Status.FAILED, Status.ERROR, Status.CRASHED, Status.INTERRUPTED, Status.XFAILED)
# owners whose failure says nothing of the kernel on Ascend: the tier's own limit, the machine, a damaged bundle
NOT_THE_KERNEL = (OwnerKind.TIER, OwnerKind.ENVIRONMENT, OwnerKind.BUNDLE, OwnerKind.RANDOM)
MODE_COMPILE = "compile"
NOT_REPLAYABLE = "NotReplayable"  # parity.record.replay's exception: the replay, not the kernel
LAUNCH_REFUSED = "launch:"  # a compile tier's refusal of the launch itself (parity.errors' launch-option kind)
BUILD_WORDS = re.compile(r"compil|MLIR|bishengir|ub overflow|triton-adapter|unsupported|not supported|has no attribute",
                         re.I)
FIXED_LATER = re.compile(r"\b(?:main|later release|newer)\b[^.;]*\bfixed\b|\bfixed\b[^.;]*\b(?:main|later|newer)\b",
                         re.I)
MD_ESCAPED = re.compile(r"\\([\\|`*_<>\[\]])")  # what parity.findings.markdown.md_escape put a backslash before
TEST_FILE = re.compile(r"(?:^|/)((?!__main__)[\w.-]+\.py)$")  # the file pytest ran (FlagGems has a tet_*.py)


@dataclass
class TierCell:
    """One kernel on one tier: its verdict, who must act and on what evidence."""

    verdict: str
    owner: str = ""
    evidence: str = ""
    repro: str = ""
    provisional: bool = False
    launches: int = 0
    checked: int = 0  # launches that compiled (compile tier) or agreed (run tier)
    mode: str = ""


@dataclass
class Row:
    op: str
    kernel: str
    tiers: dict[str, TierCell] = field(default_factory=dict)
    bugs: tuple[known_npu.NpuBug, ...] = ()  # known NPU bugs its source could meet that no CPU tier reproduces
    source_read: bool = False  # the bundle kept the kernel's source, so `bugs` was looked for
    recorded: str = "the recorded outputs"  # whose outputs ascend-lowered is compared with (recorded_outputs)


def _first_line(text: Any, limit: int = 150) -> str:
    """The line that says what failed (parity.reasons.key_line); triton-ascend's banner ('///---[ERROR][Triton][BEG]')
    is no such line."""
    text = str(text or "")
    said = str(key_line(text))
    if "-----" in said and "triton-adapter-opt+" in text:  # a banner, and the tool's own stack frames below it
        said = f"{said.split(':')[0]}: triton-adapter-opt crashed (its stack frames; the message between is clipped)"
    lines = [s.strip() for s in [said, *text.splitlines()] if s.strip() and "-----" not in s]
    line: str = (lines or [""])[0]
    return line if len(line) <= limit else line[:limit].rsplit(" ", 1)[0] + " …"


def fixed_by_limit(limit: str | None) -> bool:
    """A known triton-ascend limit whose own text says a later triton-ascend fixed it."""
    if not limit:
        return False
    import parity.triage.limits as limits  # lazy: it probes the installed tiers

    found = next((lim for lim in limits.LIMITS if lim.id == limit), None)
    return found is not None and bool(FIXED_LATER.search(found.what))


def record_verdict(record: Record) -> str:
    """One record's verdict (SEVERITY's words)."""
    status = record["status"]
    if status in (Status.PASSED, Status.XPASSED):
        return PORTS
    if status not in FAILING:
        return UNCHECKED
    owner = record.get("owner")
    reason = str(record.get("reason") or "")
    if owner is None or owner.who in NOT_THE_KERNEL or NOT_REPLAYABLE in reason:
        return UNCHECKED  # (a launch the replay cannot rebuild says nothing of the kernel, whoever triage named)
    if owner.who is OwnerKind.TOLERANCE:  # a correct kernel's rounding beyond the recorded tolerance
        return PORTS
    if owner.who is OwnerKind.TRITON_ASCEND and (fixed_in(owner) or fixed_by_limit(owner.limit)):
        return NEWER
    if record.get("mode") == MODE_COMPILE:  # a compile tier refuses some launches before compiling (an empty grid)
        return WRONG if reason.startswith(LAUNCH_REFUSED) else NO_BUILD
    if status in (Status.FAILED, Status.CRASHED):  # wrong values, or a run the lowering's code killed
        return WRONG
    said = f"{record.get('reason') or ''} {owner.evidence}"
    return NO_BUILD if BUILD_WORDS.search(said) else WRONG


def tier_cell(records: Sequence[Record], results_dir: str) -> TierCell:
    """A kernel's records on one tier: its worst verdict, with that record's owner, evidence and repro."""
    if not records:
        return TierCell(UNCHECKED, evidence="not replayed on this tier")
    judged = [(SEVERITY.index(record_verdict(r)), i, r) for i, r in enumerate(records)]
    rank, _, worst = min(judged)
    verdict = SEVERITY[rank]
    owner = worst.get("owner")
    # what failed (the record's key line), then why that owner (its evidence): either alone can be uninformative
    said = _first_line(worst.get("reason"), 140)
    evidence = f"{said} — {owner.evidence}" if owner is not None and verdict != PORTS else said
    repro = f"{results_dir}/{worst['repro']}" if worst.get("repro") else ""
    launches = {r["params"].get("launch") for r in records}
    checked = {r["params"].get("launch") for r in records if record_verdict(r) == PORTS}
    return TierCell(verdict, owner.name if owner is not None and verdict != PORTS else "", _first_line(evidence, 300),
                    repro, bool(owner is not None and owner.provisional), len(launches), len(checked),
                    str(worst.get("mode") or ""))


def op_of(argv: Sequence[str] | None, module: str) -> str:
    """The test file a recording process ran (its op), else the kernel's module."""
    for arg in reversed(list(argv or ())):
        found = TEST_FILE.search(arg.split("::")[0])
        if found:
            return found.group(1)[:-3]
    return module


def npu_bugs(source: str) -> tuple[known_npu.NpuBug, ...]:
    """The published silent NPU bugs (parity.known_npu) whose pattern the source has and the lowering does not
    reproduce (a reproduced one fails its replay instead)."""
    return tuple(b for b, _ in known_npu.matches(source) if not b.reproduced)


def recorded_outputs(env: Mapping[str, Any] | None) -> str:
    """Whose outputs a replay compares with, from the recording process's env line: an interpreter recording's
    outputs are the interpreter's, not a GPU's."""
    env = env or {}
    if env.get("interpret"):
        return "the interpreter's recorded outputs (recorded under TRITON_INTERPRET=1, no GPU)"
    return f"the outputs recorded on {env['device']}" if env.get("device") else "the recorded outputs"


def build_rows(groups: Mapping[str, list[dict[str, Any]]], argv_of: Mapping[str, Sequence[str]],
               sources: Mapping[str, str], tiers: Mapping[str, tuple[str, Sequence[Record]]],
               env_of: Mapping[str, Mapping[str, Any]] | None = None) -> list[Row]:
    """groups: spec name -> its launches (parity.record.replay.kernel_groups); argv_of: recording pid -> argv;
    sources: spec name -> the kernel's captured source; tiers: tier label -> (results dir, its records);
    env_of: recording pid -> its process env line."""
    by_kernel: dict[str, dict[str, list[Record]]] = defaultdict(lambda: defaultdict(list))
    for label, (_, records) in tiers.items():
        for r in records:
            if r.get("suite") in ("accuracy", "compile"):
                by_kernel[r["kernel"]][label].append(r)
    rows = []
    for name, launches in groups.items():
        pid = str(launches[0].get("id", "")).split("-")[0]
        op = op_of(argv_of.get(pid), str(launches[0]["kernel"].get("module") or "?"))
        row = Row(op, name, bugs=npu_bugs(sources.get(name, "")), source_read=bool(sources.get(name)),
                  recorded=recorded_outputs((env_of or {}).get(pid)))
        for label, (results_dir, _) in tiers.items():
            row.tiers[label] = tier_cell(by_kernel[name][label], results_dir)
        rows.append(row)
    return sorted(rows, key=lambda r: (r.op, r.kernel))


def overall(row: Row) -> str:
    verdicts = [c.verdict for c in row.tiers.values()] or [UNCHECKED]
    return min(verdicts, key=SEVERITY.index)


def ports_text(row: Row) -> str:
    """What a "ports" verdict checked and what it did not: never a bare pass."""
    done = []
    for label, cell in row.tiers.items():
        if cell.verdict != PORTS:
            continue
        what = ("compiled for the NPU target (triton-ascend + bishengir)" if cell.mode == MODE_COMPILE
                else f"built by triton-ascend's lowering and run on the CPU, outputs compared with {row.recorded}")
        done.append(f"{label}: {what}, {cell.checked} of {cell.launches} launch(es)")
    missed = [f"{label}: {cell.evidence or 'not replayed'}" for label, cell in row.tiers.items()
              if cell.verdict == UNCHECKED]
    passed = " and ".join(label for label, cell in row.tiers.items() if cell.verdict == PORTS)
    unseen = sum(not b.reproduced for b in known_npu.NPU_BUGS)
    if row.bugs:
        bugs = "the kernel's source has the pattern of a published silent NPU bug: " + "; ".join(
            known_npu.note(passed, b) for b in row.bugs)
    elif row.source_read:
        bugs = f"its source has the pattern of none of the {unseen} known silent NPU bugs no CPU tier reproduces"
    else:
        bugs = "its source was not kept, so the known silent NPU bugs were not looked for"
    return (f"ports. Checked: {'; '.join(done)}. Not checked: the NPU's own arithmetic and scheduling"
            + (f"; {'; '.join(missed)}" if missed else "") + f"; {bugs}.")


def row_cells(row: Row) -> list[str]:
    verdict = overall(row)
    # the tier whose records gave the verdict speaks for it (a tier that replayed nothing only says so)
    cells = sorted((c for c in row.tiers.values() if c.verdict == verdict), key=lambda c: c.launches == 0)
    lead = cells[0] if cells else TierCell(UNCHECKED)
    text = ports_text(row) if verdict == PORTS else verdict + (" (provisional)" if lead.provisional else "")
    return [row.op, row.kernel, md_escape(text, 900), md_escape(lead.owner), md_escape(lead.evidence),
            md_escape(lead.repro)] + [f"{c.verdict} ({c.checked}/{c.launches})" for c in row.tiers.values()]


def not_recorded_rows(tests: Sequence[tuple[str, str]], ops: set[str]) -> list[list[str]]:
    """Test files (ops) that kept no launch: not checked, with the recording's own last line."""
    out = []
    for path, why in tests:
        op = Path(path).stem
        if op not in ops:
            said = _first_line(why)
            out.append([op, "—", UNCHECKED, "", md_escape(f"no launch kept (its first launch past the per-file budget, "
                                                          f"or none recorded); the recording's last line: {said}"), ""])
    return out


def render(rows: Sequence[Row], labels: Sequence[str], missing: Sequence[list[str]], intro: str) -> str:
    head, body, summary = table(rows, labels, missing)
    lines = [f"| {' | '.join(head)} |", "|" + "---|" * len(head)] + [f"| {' | '.join(r)} |" for r in body]
    return f"{intro}\n\n{summary}\n\n" + "\n".join(lines) + "\n"


def render_html(rows: Sequence[Row], labels: Sequence[str], missing: Sequence[list[str]], intro: str) -> str:
    """The same map as a page: the same cells, unescaped from the markdown and escaped for HTML."""
    from parity.report import html  # lazy: the page's helpers, for --html only
    from parity.report.html_assets import SCRIPT, STYLE  # lazy: as above

    head, body, summary = table(rows, labels, missing)
    cells = [[html.esc(MD_ESCAPED.sub(r"\1", cell)) for cell in row] for row in body]
    plain_intro = MD_ESCAPED.sub(r"\1", intro)
    text = f"<h1>Portability map</h1><p>{html.esc(plain_intro)}</p><p>{html.esc(summary)}</p>"
    return html.page("parity map", STYLE, SCRIPT, text + html.table(head, cells, table_id="map"))


def table(rows: Sequence[Row], labels: Sequence[str],
          missing: Sequence[list[str]]) -> tuple[list[str], list[list[str]], str]:
    """The map's header, its rows (markdown-escaped cells) and the counts line."""
    counts = Counter(overall(r) for r in rows)
    op_verdicts: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        op_verdicts[r.op].append(overall(r))
    op_counts = Counter(min(v, key=SEVERITY.index) for v in op_verdicts.values())
    op_counts[UNCHECKED] += len(missing)
    head = ["op", "kernel", "verdict", "owner", "evidence", "repro", *labels]
    body = [row_cells(r) for r in rows] + [m + [""] * len(labels) for m in missing]
    summary = ", ".join(f"{counts[v]} {v}" for v in SEVERITY if counts[v])
    op_summary = ", ".join(f"{op_counts[v]} {v}" for v in SEVERITY if op_counts[v])
    return head, body, (f"Kernels: {len(rows)} ({summary}). Ops (test files; an op's verdict is its worst "
                        f"kernel's): {len(op_verdicts) + len(missing)} ({op_summary}).")


def read_tests(path: Path | None) -> list[tuple[str, str]]:
    """bench/record_library_ops.sh's <lib>-tests.tsv: test file, seconds, exit code, pytest's last line, kept."""
    if path is None:
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) >= 4:
            out.append((parts[0], parts[3]))
    return out


def main(bundle_path: Path, dirs: Sequence[Path], tests: Path | None = None, html: Path | None = None) -> int:
    from parity.record.bundle import BundleError, load_bundle
    from parity.record.replay import kernel_groups

    try:
        bundle = load_bundle(bundle_path)
    except BundleError as exc:
        print(f"parity map: {exc}")
        return 2
    groups = {name: entries for name, entries in kernel_groups(bundle).values()}
    argv_of = {str(p.get("pid")): p.get("argv") or [] for p in bundle.processes}
    sources = {}
    for name, entries in groups.items():
        src = bundle.root / str(entries[0]["kernel"].get("source") or "-")
        sources[name] = src.read_text(encoding="utf-8") if src.is_file() else ""
    tiers: dict[str, tuple[str, Sequence[Record]]] = {}
    for d in dirs:
        records = load_results(d)
        if records:
            tiers[records[0]["backend"]] = (str(d), records)
    env_of = {str(p.get("pid")): p.get("env") or {} for p in bundle.processes}
    rows = build_rows(groups, argv_of, sources, tiers, env_of)
    missing = not_recorded_rows(read_tests(tests), {r.op for r in rows})
    intro = (f"Bundle `{bundle_path}` ({len(bundle.launches)} launches kept of {len(groups)} kernels); tiers: "
             f"{', '.join(f'{k} (`{v[0]}`)' for k, v in tiers.items()) or 'none'}. Each tier's cell: its verdict "
             "(launches checked / replayed).")
    print(render(rows, list(tiers), missing, intro), end="")
    if html is not None:
        html.write_text(render_html(rows, list(tiers), missing, intro), encoding="utf-8")
    return 0
