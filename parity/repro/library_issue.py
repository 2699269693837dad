"""ISSUE.md addressed to the library that owns a failing kernel (parity.triage.library_rule says which failures are).

One draft for run and compile tiers alike: what the library's op did on which tier, why it is the
library's to fix, the numbers or the message, how to re-run it, and the environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parity.findings.markdown import fmt_num, md_escape, table
from parity.fit.words import issue_paragraph
from parity.results import Record, Status
from parity.spec.library import RULE

ENV_FIELDS = (("torch", "torch"), ("Triton", "triton"), ("Triton-Ascend", "triton_ascend"), ("CANN", "cann"),
              ("torch_npu", "torch_npu"), ("ascendnpu-ir", "ascendnpu_ir"), ("Python", "python"),
              ("Device", "device_name"), ("Arch", "target_arch"), ("OS", "platform"))
METRICS = ("max_abs_err", "err_ratio", "mismatch_frac", "nan_count", "worst_index", "region")


def library_issue_title(finding: Mapping[str, Any], record: Record, backend: str) -> str:
    comp = record.get("compile") or {}
    kernel = comp.get("kernel") or record["kernel"]
    if record.get("status") == Status.FAILED and not comp:
        what = f"wrong result ({(record.get('metrics') or {}).get('region') or 'see the mismatch'})"
    else:
        from parity.repro.issue import title_text

        what = title_text(str(record.get("reason") or comp.get("message") or "an error"))
    return f"`{kernel}` on {backend}: {what}"


def render_library_issue(finding: Mapping[str, Any], record: Record, env: Mapping[str, Any],
                         backend: str, command: str | None) -> str:
    """ISSUE.md for the library's tracker; `command` re-runs the failure (None: only the parity command)."""
    version = finding.get("version") or "unknown version"
    comp = record.get("compile") or {}
    env_text = "\n".join(f"{label}: {env.get(key)}" for label, key in ENV_FIELDS if env.get(key))
    parts = [f"# {library_issue_title(finding, record, backend)}", "",
             f"File at: {finding['repo']}/issues/new (the {finding['name']} repository)", "",
             "### Describe the bug", "",
             f"{finding['name']} {version}: parity op `{record['kernel']}`, case `{record['case']}`, tier "
             f"`{backend}`. This is the library's finding: {finding['why']}.", "",
             f"(Rule: {RULE}.)", "",
             "**What happened:**", "", "```text", str(record.get("reason") or comp.get("message") or "").strip(),
             "```", ""]
    if comp.get("ub_bits") and comp.get("ub_limit_bits"):
        parts += [f"UB: requires {comp['ub_bits']} bits while {comp['ub_limit_bits']} bits are available; "
                  f"config `{comp.get('config') or {}}`, variant `{comp.get('variant') or {}}`.", ""]
    parts += issue_paragraph(record)  # the configs that fit (parity.fit)
    m = record.get("metrics") or {}
    if record.get("status") == Status.FAILED and m:
        rows = [[name, md_escape(fmt_num(m.get(name)))] for name in METRICS]
        parts += ["Compared with a float64 reference computed on the CPU:", "", table(rows, ["metric", "value"]), ""]
    parts += ["### To reproduce", ""]
    if command:
        parts += ["```bash", command, "```", ""]
    rerun = f"pytest suites --backend={backend} --kernels=MODULE -k {record['kernel']}"
    parts += [f"Or through parity, with MODULE the spec module that defines `{record['kernel']}`: `{rerun}`.",
              "", "### Environment details", "", "```text", f"{finding['name']}: {version}", env_text, "```", ""]
    return "\n".join(parts)
