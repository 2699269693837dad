"""The fit advisor's answer in words (parity.fit): what fits, whether it computes, and the change to make, as
AUTHOR.md, the library's ISSUE.md and the report say it. Pure functions of a record's `fit`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from parity.findings.markdown import md_escape
from parity.fit import proof

SHOWN = 3  # fitting configs per finding in a table cell


def config_text(config: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in config.items()) or "(no constexpr changed)"


def need_text(fit: Mapping[str, Any], used: Any, of: Any) -> str:
    if used is None:  # a cube-only kernel has no UB plan; a bishengir-compile without --enable-memory-display
        return "fits; bishengir gave no UB figure for it"  # prints its UB use only on an overflow
    return f"{used:,} of {of:,} {fit['unit']}" if of else f"{used:,} {fit['unit']}"


def fit_answer(fit: Mapping[str, Any]) -> str:
    """One line: what fits, or that nothing searched does."""
    if not fit["fitting"]:
        smallest = fit.get("smallest_need")
        need = f"; the smallest need found is {smallest:,} {fit['unit']}" if smallest else ""
        return f"none of {fit['searched']} searched fits {fit['arch']}{need}"
    shown = "; ".join(f"{config_text(f['config'])} ({need_text(fit, f['used'], f['of'])})"
                      for f in fit["fitting"][:SHOWN])
    more = f" and {len(fit['fitting']) - SHOWN} more" if len(fit["fitting"]) > SHOWN else ""
    return (f"{len(fit['fitting'])} of {fit['searched']} searched fit {fit['arch']}: {shown}{more}; "
            f"{proof.verdict_words(fit.get('proof'))}")


def fit_line(fit: Mapping[str, Any]) -> str:
    """The answer in one line, for the porting verdict's finding: what fits, then what to change (as strong
    as its proof: parity.fit.proof.change)."""
    change = proof.change(fit)
    return f"fit advisor: {fit_answer(fit)}" + (f"; {change}" if change else "")


def issue_paragraph(record: Mapping[str, Any]) -> list[str]:
    """The lines a library's ISSUE.md gets for an overflow: what fits, and what to change."""
    fit = record.get("fit")
    if not fit:
        return []
    if not fit["fitting"]:
        change = f" What to change: {fit['cap']}." if fit.get("cap") else ""
        return [f"No config parity tried fits: {fit_answer(fit)}.{change}", ""]
    configs = "; ".join(f"`{config_text(f['config'])}`" for f in fit["fitting"][:SHOWN])
    _, wrong, _ = proof.proven_configs(fit.get("proof"))
    if wrong:
        found = fit["proof"]
        return [f"These configs fit {fit['arch']} (each compiled by parity on the same tier): {configs}; but run on "
                f"{found['tier']} at `{found['case']}` against the fp64 reference, they compute wrong "
                f"({md_escape(proof.entries_summary(wrong), 400)}). A smaller config alone is no fix. What to change "
                f"in the kernel: {proof.change(fit)}.", ""]
    fix = (f"cap it in the launcher: {fit['cap']}" if fit.get("cap")
           else "add them to the autotune list (or drop the configs that overflow)")
    return [f"These configs fit {fit['arch']} (each compiled by parity on the same tier): {configs}; {fix}. "
            f"Run against the fp64 reference: {proof.verdict_words(fit.get('proof'))}.", ""]


def author_lines(record: Mapping[str, Any]) -> list[str]:
    """AUTHOR.md's section for an overflow: what fits, whether it computes, and the change to make."""
    fit = record.get("fit")
    if not fit:
        return []
    change = proof.change(fit)
    lines = ["## What fits, and what to change", "", f"Fit advisor: {fit_answer(fit)}.", ""]
    if change:
        lines += [f"Change: {change}.", ""]
    _, wrong, _ = proof.proven_configs(fit.get("proof"))
    if wrong:
        lines += ["Each config above compiles, but computes wrong against the fp64 reference "
                  f"({proof.entries_summary(wrong)[:600]}): a smaller config alone is no fix.", ""]
    return lines
