"""ISSUE.md for a run repro: the bug template of the tracker it goes to, filled from the record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parity.backends.trackers import Tracker
from parity.findings.finding import Finding
from parity.findings.markdown import fmt_num, md_escape, table, title_text
from parity.results import Record, Status
from parity.spec import Case
from parity.spec.library import RULE
from parity.triage.drafts import finding_of

METRIC_ROWS = ("max_abs_err", "max_rel_err", "err_ratio", "mismatch_frac", "nan_count", "worst_index", "region")


def shrink_none(shrunk: Mapping[str, Any]) -> str:
    """The shrink line when no step was taken, as the shrink's own count says it (no trial is no evidence)."""
    trials = int(shrunk.get("trials") or 0)
    if not trials:
        return "none tried: the case has no size or sequence parity can shrink"
    return f"none: the {trials} smaller case(s) tried did not fail the same way"


def issue_title(tracker: Tracker, summary: Mapping[str, Any], record: Record) -> str:
    kernels = ", ".join(summary["kernels"])
    if record.get("status") == Status.ERROR:
        first = title_text(summary.get("error") or record.get("reason") or "an error")
        what = f"`{kernels}` fails to compile or launch: {first}"
    else:
        m = summary.get("metrics") or record.get("metrics") or {}
        what = f"`{kernels}` gives wrong results ({m.get('region') or 'see the mismatch'})"
    return f"{tracker.form.title_prefix}{what}"


def _metric_table(original: Mapping[str, Any] | None, shrunk: Mapping[str, Any] | None) -> str:
    rows = [[name, md_escape(fmt_num((original or {}).get(name))), md_escape(fmt_num((shrunk or {}).get(name)))]
            for name in METRIC_ROWS]
    return table(rows, ["metric", "original case", "shrunk case"])


def environment_text(tracker: Tracker, env: Mapping[str, Any]) -> str:
    """The tracker's environment block, filled from env.json's facts."""
    return "\n".join(f"{label}: {env.get(key) or 'n/a'}" for label, key in tracker.form.environment)


def render_issue(tracker: Tracker, summary: Mapping[str, Any], record: Record,
                 shrunk: Mapping[str, Any], env: Mapping[str, Any], backend: str,
                 finding: Finding | None = None) -> str:
    """ISSUE.md, shaped for one tracker's bug template (title, bug, repro steps, environment), from the record's
    Finding (parity.findings)."""
    finding = finding or finding_of(record)
    tol = summary["tolerance"]
    limit = f"rtol={tol['rtol']:g}, atol={tol['atol']:g}" + (
        f", err_ratio <= {tol['max_err_ratio']:g}" if tol.get("max_err_ratio") is not None else "")
    error = record.get("status") == Status.ERROR
    expected = ("the kernel compiles and launches." if error
                else f"every output matches a float64 reference computed on the CPU within {limit}.")
    actual = summary.get("error") or record.get("reason") or ""
    env_text = environment_text(tracker, env)
    steps = ", ".join(shrunk.get("steps") or []) or shrink_none(shrunk)
    parts = [
        f"# {issue_title(tracker, summary, record)}", "",
        f"File at: {tracker.new_issue}", "",
        "### Describe the bug", "",
        f"Kernel `{', '.join(summary['kernels'])}` (parity kernel `{summary['kernel']}`), backend `{backend}`.", "",
        *provenance(record),
        *finding.evidence,
        f"**Expected:** {expected}", "",
        "**Actual:**", "", "```text", actual.strip(), "```", "",
    ]
    if not error:
        parts += ["Error statistics (the shrunk case is the one `repro.py` runs):", "",
                  _metric_table(record.get("metrics"), summary.get("metrics")), ""]
    parts += [
        f"Original case: `{Case(shrunk['original']).id}`  ",
        f"Shrunk case: `{summary['case']}` (steps: {steps})", "",
        "### To reproduce", "",
        "This folder is self-contained: `repro.py` (the kernel, its launch, the fp64 reference and the check) "
        "and `inputs.npz` (numpy arrays, no pickle). It needs torch, triton and numpy"
        + f"{tracker.form.run_needs}.", "",
        "```bash",
        "python repro.py                      # exits 1 and prints the mismatch while the bug is present",
        "TRITON_INTERPRET=1 python repro.py   # the same kernel on Triton's CPU interpreter, for comparison",
        "```", "",
        f"Launch grid(s): {', '.join(str(tuple(g)) for g in summary['grids'])}.", "",
        "### Environment details", "", "```text", env_text, "```", "",
    ]
    return "\n".join(parts)


def provenance(record: Record) -> list[str]:
    """Lines for a vendor draft whose kernel ships in a library: which one, and why the draft is not its."""
    lib = record.get("library")
    if not lib:
        return []
    version = f" {lib['version']}" if lib.get("version") else ""
    return [f"The kernel ships in {lib['name']}{version} ({lib['repo']}), unchanged; by parity's rule the failure "
            f"is the compiler's ({RULE}).", ""]


__all__ = ["METRIC_ROWS", "environment_text", "issue_title", "provenance", "render_issue", "shrink_none", "title_text"]
