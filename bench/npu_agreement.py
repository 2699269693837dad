"""parity's Ascend prediction against published real-NPU results (issue 51): printed as markdown, never asserted.

Each file of data/npu-published/ is one published source: its header names where the results come from (repo, path,
commit), the stack they ran on (triton-ascend, CANN, chip) and how the entries were read; each entry is one test
function's verdict on the NPU ('passes', 'fails' with a reason, or 'not_run').

parity's verdict per test function comes from a recorded test file replayed on the Ascend tiers: each replayed launch
is put in the test function that defines its kernel (bench/replay_groups.py), and the function

- ports when every launch of it passed on every results dir given (ascend-compile and ascend-lowered);
- fails when a launch failed and parity named an owner who must act (author, library, triton, triton-ascend,
  tolerance, bundle), with those owners;
- has no prediction otherwise: a launch skipped (not replayable), missing from a dir, or failed with an owner of
  'tier' or 'environment' (parity's own tier could not judge it, which says nothing about the NPU).

    python bench/npu_agreement.py --bundle B --source test_core.py --results R-compile R-lowered
    python bench/npu_agreement.py                       # the sources alone: nothing joined

Per source it prints the four counts (both say it ports; both say it fails for the same reason; a false alarm: parity
says fails, the NPU passed; a miss: parity says ports, the NPU failed), what could not be joined, and every
disagreement with its class: 'harness' (the source's own setup failed), 'tolerance' (parity's owner is the spec's
tolerance), 'hidden on the device' (parity's red zones caught the kernel's out-of-bounds access, which a device run
that compares values cannot see), 'hardware' (the source ran another chip generation than parity's target),
'version' (the source ran another triton-ascend than parity's tiers; a candidate, not proven until the same kernel
is replayed on that release), or 'parity defect' (none of those: parity is wrong and must be fixed).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "npu-published"

# owners that say someone must change something: a failure with one of these is parity's prediction that it fails
ACTING_OWNERS = frozenset({"author", "library", "triton", "triton-ascend", "tolerance", "bundle"})
FAILED = frozenset({"failed", "error", "crashed", "xfailed"})
OUTCOMES = ("both port", "both fail, same reason", "false alarm", "miss")
# parity's red zones caught the kernel's own stray access, which a device run that compares values cannot see
OUT_OF_BOUNDS = re.compile(r"out-of-bounds|red zone", re.IGNORECASE)
HIDDEN = ("parity's red zones caught an out-of-bounds access by the kernel (its owner: the author). The source "
          "compares values, and torch_npu's caching allocator rounds every allocation up to 512 bytes "
          "(kMinBlockSize in https://github.com/Ascend/pytorch/blob/master/torch_npu/csrc/core/npu/"
          "NPUCachingAllocator.cpp), so an access a few elements past a small buffer lands in padding: a real bug "
          "the NPU's pass does not show, not a parity defect")


@dataclass(frozen=True)
class Stack:
    triton_ascend: str | None
    generation: str | None  # A2, A3, A5, or "A2/A3" when a source names both


@dataclass(frozen=True)
class NpuEntry:
    test: str
    verdict: str  # passes | fails | not_run
    reason: str = ""
    reason_kind: str | None = None  # harness, unsupported, compile_error, flaky, ...
    match: str | None = None  # the message the NPU's failure carries (a regular expression)


@dataclass(frozen=True)
class Source:
    name: str
    where: str  # repo@commit and paths, for the table's header
    stack: Stack
    test_file: str | None  # the recorded test file whose functions the entries name; None: no replay joins it
    entries: tuple[NpuEntry, ...]


@dataclass(frozen=True)
class ParityVerdict:
    test: str
    verdict: str  # ports | fails | none
    owners: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    why: str = ""  # for 'none': what kept parity from a prediction


@dataclass(frozen=True)
class Row:
    test: str
    npu: NpuEntry
    parity: ParityVerdict | None
    outcome: str  # one of OUTCOMES, "both fail, other reason", or "not joined"
    cls: str | None = None
    why: str = ""


@dataclass
class Agreement:
    source: Source
    parity_stack: Stack | None
    rows: list[Row] = field(default_factory=list)

    def counts(self) -> Counter[str]:
        return Counter(r.outcome for r in self.rows)

    def disagreements(self) -> list[Row]:
        return [r for r in self.rows if r.cls is not None]


def generation(arch: str | None) -> str | None:
    """Atlas generation of an Ascend arch name as triton-ascend spells it (Ascend910B3 -> A2)."""
    if not arch:
        return None
    if re.match(r"Ascend910_93", arch):
        return "A3"
    if re.match(r"Ascend910B|Ascend910_9[0-2]", arch):
        return "A2"
    if re.match(r"Ascend950|Ascend910_95", arch):
        return "A5"
    return None


def minor(version: str | None) -> str | None:
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def parse_source(doc: dict[str, Any]) -> Source:
    head, stack = doc["source"], doc.get("stack", {})
    where = f"{head.get('repo', '?')}@{str(head.get('commit', '?'))[:12]}: {', '.join(head.get('paths', []))}"
    entries = tuple(NpuEntry(test=e["test"], verdict=e["verdict"], reason=e.get("reason", ""),
                             reason_kind=e.get("reason_kind"), match=e.get("match")) for e in doc["entries"])
    bad = [e.test for e in entries if e.verdict not in ("passes", "fails", "not_run")]
    if bad:
        raise ValueError(f"{head.get('name')}: verdicts must be passes, fails or not_run; fix the entries {bad[:5]}")
    return Source(name=head["name"], where=where, test_file=head.get("test_file"), entries=entries,
                  stack=Stack(triton_ascend=stack.get("triton_ascend"), generation=stack.get("generation")))


def load_sources(paths: list[Path]) -> list[Source]:
    return [parse_source(json.loads(p.read_text(encoding="utf-8"))) for p in paths]


def function_verdicts(launches: dict[str, set[tuple[str, int]]],
                      records: dict[str, dict[tuple[str, int], dict[str, Any]]]) -> dict[str, ParityVerdict]:
    """Per test function: its launches ((spec name, launch index)) and each results dir's record per launch."""
    out: dict[str, ParityVerdict] = {}
    for test, keys in launches.items():
        owners: set[str] = set()
        messages: list[str] = []
        passed, silent = True, []
        for tier, by_launch in records.items():
            for key in sorted(keys):
                rec = by_launch.get(key)
                status = rec.get("status") if rec else None
                if status == "passed":
                    continue
                passed = False
                who = str((rec or {}).get("owner", {}).get("who") or "") if rec else ""
                if status in FAILED and who in ACTING_OWNERS:
                    owners.add(who)
                    messages.append(record_message(rec or {}))
                else:
                    silent.append(f"{tier} {key[0]}#{key[1]}: {status or 'no record'}" + (f" ({who})" if who else ""))
        if owners:
            out[test] = ParityVerdict(test, "fails", tuple(sorted(owners)), tuple(messages))
        elif passed and records:
            out[test] = ParityVerdict(test, "ports")
        else:
            out[test] = ParityVerdict(test, "none", why="; ".join(silent[:3]) or "no results dir given")
    return out


def record_message(rec: dict[str, Any]) -> str:
    compile_ = rec.get("compile") or {}
    return " ".join(str(x) for x in (rec.get("reason"), compile_.get("message"),
                                     (rec.get("owner") or {}).get("evidence")) if x)


def same_reason(entry: NpuEntry, pv: ParityVerdict) -> bool:
    """The NPU's failure message (its `match`) found in what parity said about the failure."""
    if not entry.match:
        return False
    return any(re.search(entry.match, m, re.IGNORECASE) for m in pv.messages)


def classify(entry: NpuEntry, pv: ParityVerdict, source: Stack, parity: Stack | None) -> tuple[str, str]:
    """The class of a disagreement and why, most specific first."""
    if entry.reason_kind == "harness":
        return "harness", f"the source's own setup failed: {entry.reason}"
    authors = any("author" in owner for owner in pv.owners)  # "author", or a map's "kernel author"
    if entry.verdict == "passes" and authors and any(OUT_OF_BOUNDS.search(m) for m in pv.messages):
        return "hidden on the device", HIDDEN
    if "tolerance" in pv.owners:
        return "tolerance", "parity's owner is the spec's tolerance"
    if parity and source.generation and parity.generation and parity.generation not in source.generation.split("/"):
        return "hardware", f"the source ran {source.generation}, parity's target is {parity.generation}"
    if parity and minor(source.triton_ascend) and minor(parity.triton_ascend) \
            and minor(source.triton_ascend) != minor(parity.triton_ascend):
        return "version", (f"the source ran triton-ascend {source.triton_ascend}, parity's tiers "
                           f"{parity.triton_ascend}; unproven until replayed on {source.triton_ascend}")
    return "parity defect", "same release and chip generation, no harness or tolerance reason: parity must be fixed"


def join(source: Source, parity: dict[str, ParityVerdict], parity_stack: Stack | None) -> Agreement:
    agreement = Agreement(source, parity_stack)
    for e in source.entries:
        pv = parity.get(e.test)
        if e.verdict == "not_run" or pv is None or pv.verdict == "none":
            why = ("the NPU did not run it: " + e.reason) if e.verdict == "not_run" else \
                ("parity has no replay of it" if pv is None else f"parity has no prediction: {pv.why}")
            agreement.rows.append(Row(e.test, e, pv, "not joined", why=why))
            continue
        if e.verdict == "passes" and pv.verdict == "ports":
            outcome = "both port"
        elif e.verdict == "fails" and pv.verdict == "fails":
            outcome = "both fail, same reason" if same_reason(e, pv) else "both fail, other reason"
        else:
            outcome = "false alarm" if e.verdict == "passes" else "miss"
        row = Row(e.test, e, pv, outcome)
        if outcome not in ("both port", "both fail, same reason"):
            cls, why = classify(e, pv, source.stack, parity_stack)
            row = Row(e.test, e, pv, outcome, cls, why)
        agreement.rows.append(row)
    return agreement


def render(a: Agreement) -> str:
    c = a.counts()
    judged = sum(c[o] for o in (*OUTCOMES, "both fail, other reason"))
    agree = c["both port"] + c["both fail, same reason"]
    stack = a.source.stack
    ran = f"triton-ascend {stack.triton_ascend or 'not stated'}, generation {stack.generation or 'not stated'}"
    lines = [f"## {a.source.name}", "", f"- where: {a.source.where}", f"- stack: {ran}"
             + (f"; parity: triton-ascend {a.parity_stack.triton_ascend}, generation {a.parity_stack.generation}"
                if a.parity_stack else ""),
             f"- entries: {len(a.rows)}; joined: {judged}; agree: {agree} of {judged}"
             + (f" ({100 * agree / judged:.0f} %)" if judged else ""), "",
             "| both port | both fail, same reason | false alarm | miss | both fail, other reason | not joined |",
             "|---|---|---|---|---|---|",
             f"| {c['both port']} | {c['both fail, same reason']} | {c['false alarm']} | {c['miss']} "
             f"| {c['both fail, other reason']} | {c['not joined']} |", ""]
    rows = a.disagreements()
    if rows:
        lines += ["| test | NPU | parity | outcome | class | why |", "|---|---|---|---|---|---|"]
        for r in rows:
            pv = r.parity
            said = f"{pv.verdict} ({', '.join(pv.owners)})" if pv and pv.owners else (pv.verdict if pv else "-")
            npu = r.npu.verdict + (f": {r.npu.reason}" if r.npu.reason else "")
            lines.append(f"| {r.test} | {cell(npu)} | {cell(said)} | {r.outcome} | {r.cls} | {cell(r.why)} |")
        lines.append("")
    unjoined = Counter(r.why.split(":")[0] for r in a.rows if r.outcome == "not joined")
    if unjoined:
        lines.append("Not joined: " + "; ".join(f"{n} {why}" for why, n in unjoined.most_common()) + ".")
    return "\n".join(lines)


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:160]


def parity_side(bundle: Path, source: Path, dirs: list[Path]) -> tuple[dict[str, ParityVerdict], Stack | None]:
    """Read a replay: per test function of `source` its launches, per results dir each launch's record."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "bench"))
    # lazy: the engine and the bench's grouping load only when a replay is joined, not for the sources alone
    from replay_groups import case_launch, defining_line, enclosing, function_ranges, read_records

    from parity.record.bundle import load_bundle
    from parity.record.replay import kernel_groups

    ranges = function_ranges(source.read_text(encoding="utf-8"))
    launches: dict[str, set[tuple[str, int]]] = {}
    for spec_name, entries in kernel_groups(load_bundle(bundle)).values():
        for i, entry in enumerate(entries):
            launches.setdefault(enclosing(ranges, defining_line(entry["kernel"])), set()).add((spec_name, i))
    records: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
    stack = None
    for d in dirs:
        by_launch: dict[tuple[str, int], dict[str, Any]] = {}
        for r in read_records(d):
            launch = case_launch(str(r.get("case", "")))
            if r.get("suite") in (None, "accuracy", "compile") and launch is not None:
                by_launch[(str(r.get("kernel", "")), launch)] = r
        records[d.name] = by_launch
        env = d / "env.json"
        if env.is_file() and stack is None:
            e = json.loads(env.read_text())
            stack = Stack(e.get("triton_ascend"), generation(e.get("target_arch")))
    return function_verdicts(launches, records), stack


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, nargs="*", help="source files (default: every data/npu-published/*.json)")
    parser.add_argument("--bundle", type=Path, help="the recorded bundle of the test file")
    parser.add_argument("--source", type=Path, help="the test file the recording ran")
    parser.add_argument("--results", type=Path, nargs="*", default=[], help="results dirs of its Ascend replays")
    args = parser.parse_args()
    if bool(args.bundle) != bool(args.source):
        parser.error("--bundle and --source go together: the recording and the test file it ran")
    sources = load_sources(args.data or sorted(DATA.glob("*.json")))
    parity, stack = parity_side(args.bundle, args.source, args.results) if args.bundle else ({}, None)
    for s in sources:
        joins = parity if args.source and s.test_file == args.source.name else {}
        print(render(join(s, joins, stack if joins else None)))
        print()


if __name__ == "__main__":
    main()
