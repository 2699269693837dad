"""Count, per results dir, what became of every failing case's repro; print a markdown table. Never asserts.

For each record whose status is failed or error (and, in a column of their own, xfailed: known divergences):
the kept folder's script is run once more in a fresh process, from its folder, as a user would: the tier's
python (`--python`), PYTHONPATH holding only the libraries' roots (`--library-path`; never parity), and
TRITON_INTERPRET=1 for an interpret dir. It counts as reproducing when parity.repro.verify.why_not accepts
the outcome (exit 1 with the FAIL line of the record's kind). Also counted: records with a why-not
(`repro_error`, or `repro_note` beside a draft-only folder), records with neither (must be 0), and
ISSUE-triton.md drafts in Ascend dirs whose record's owner is not Triton (must be 0). An xfailed record
without a folder counts as linked where its known_divergence carries a public link.

    python -m bench.repro_counts --python <tier python> --library-path /work/libs:... DIR [DIR ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

from parity.repro.verify import Outcome, script_of, why_not

FAILING = ("failed", "error")


def records(results_dir: Path) -> list[dict[str, Any]]:
    out = []
    for line in (results_dir / "results.jsonl").read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a truncated last line
    return out


def run_script(script: Path, python: str, library_path: str, interpret: bool, timeout_s: float) -> Outcome:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TRITON_INTERPRET"))}
    if library_path:
        env["PYTHONPATH"] = library_path
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    try:
        done = subprocess.run([python, script.name], cwd=script.parent, env=env, capture_output=True, text=True,
                              timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return Outcome(None, "")
    return Outcome(done.returncode, done.stdout + done.stderr)


def classify(record: dict[str, Any], results_dir: Path, python: str, library_path: str, interpret: bool,
             timeout_s: float, written_for: dict[str, dict[str, Any]]) -> tuple[str, str]:
    """(what became of the record's repro, a note): exit1 / not-exit1 / draft-only / why-not / missing.
    A folder is judged against the record it was written for (`written_for`: a sweep record names the
    folder its stopping case got from the compile or accuracy suite, whose failure kind it carries)."""
    folder = results_dir / record["repro"] if record.get("repro") else None
    if folder is not None and folder.is_dir():
        script = script_of(folder)
        if script is None:
            return "draft-only", str(record.get("repro_note") or "")
        owner = written_for.get(record["repro"], record)
        reason = why_not(owner, run_script(script, python, library_path, interpret, timeout_s), timeout_s)
        return ("exit1", "") if reason is None else ("not-exit1", reason)
    if record.get("repro_error"):
        return "why-not", str(record["repro_error"])
    if record.get("status") == "xfailed" and (record.get("known_divergence") or {}).get("link"):
        return "linked", str(record["known_divergence"]["link"])  # a known divergence, already public
    return "missing", ""


def count(results_dir: Path, python: str, library_path: str, timeout_s: float,
          suites: tuple[str, ...] = ()) -> dict[str, Any]:
    recs = [r for r in records(results_dir) if not suites or r.get("suite") in suites]
    interpret = any(r.get("mode") == "interpret" for r in recs)
    tally: Counter[str] = Counter()
    notes: list[str] = []
    written_for = {r["repro"]: (r.get("specialization") or {}).get("repro_from") or r for r in recs if r.get("repro")}
    for record in recs:
        status = record.get("status")
        if status not in (*FAILING, "xfailed"):
            continue
        kind, note = classify(record, results_dir, python, library_path, interpret, timeout_s, written_for)
        prefix = "" if status in FAILING else "x:"
        tally[prefix + "cases"] += 1
        tally[prefix + kind] += 1
        if kind in ("not-exit1", "missing") and status in FAILING:
            notes.append(f"{record['kernel']}[{record['case']}] {kind}: {note[:300]}")
    ascend = any(str(r.get("backend", "")).startswith("ascend") for r in recs)
    triton_drafts = 0
    if ascend:
        owners = {r["repro"]: (r.get("owner") or {}).get("who") for r in recs if r.get("repro")}
        for draft in results_dir.glob("repros/*/ISSUE-triton.md"):
            rel = draft.parent.relative_to(results_dir).as_posix()
            triton_drafts += owners.get(rel) != "triton"
    return {"dir": str(results_dir), "tally": dict(tally), "ascend_issue_triton": triton_drafts if ascend else None,
            "notes": notes}


def table(rows: list[dict[str, Any]]) -> str:
    head = ("| results dir | failing | kept, exit 1 standalone | kept, not exit 1 | draft only | why-not | "
            "neither | xfailed (kept exit 1 / why-not / linked / neither) | ISSUE-triton.md on Ascend |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for row in rows:
        t = row["tally"]
        x = (f"{t.get('x:cases', 0)} ({t.get('x:exit1', 0)} / {t.get('x:why-not', 0)} / {t.get('x:linked', 0)} / "
         f"{t.get('x:missing', 0)})")
        tri = "–" if row["ascend_issue_triton"] is None else str(row["ascend_issue_triton"])
        lines.append(f"| {Path(row['dir']).name} | {t.get('cases', 0)} | {t.get('exit1', 0)} | {t.get('not-exit1', 0)} "
                     f"| {t.get('draft-only', 0)} | {t.get('why-not', 0)} | {t.get('missing', 0)} | {x} | {tri} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--python", required=True, help="the tier's python (its venv holds torch and triton)")
    parser.add_argument("--library-path", default="", help="PYTHONPATH for library-call repros (no parity)")
    parser.add_argument("--timeout-s", type=float, default=120.0)
    parser.add_argument("--suites", default="", help="only these suites' records, e.g. specialization")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args()
    suites = tuple(s for s in args.suites.split(",") if s)
    rows = [count(d, args.python, args.library_path, args.timeout_s, suites) for d in args.dirs]
    print(table(rows))
    for row in rows:
        for note in row["notes"]:
            print(f"- {Path(row['dir']).name}: {note}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
