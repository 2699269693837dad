"""The fit advisor in REPORT.md and in the library's ISSUE.md: pure functions from records to text.

Two sections: every overflow finding with the configs that fit (parity.fit, each one a compile that
succeeded on the same tier and arch), and per autotuned kernel on ascend-compile, which of its configs
fit on each Ascend arch the records cover (a config that fits one arch but not another is a finding).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from parity.backends import backend_class
from parity.fit import proof
from parity.report.tables import md_escape, table
from parity.results import Record

SHOWN = 3  # fitting configs per finding in a table cell
LAUNCH_KEYS = ("num_warps", "num_stages")


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


def fit_rows(records: Sequence[Record]) -> list[list[Any]]:
    """One row per kernel, case and answer (an autotuner's overflowing configs share their kernel's search)."""
    rows, seen = [], set()
    for r in records:
        fit = r.get("fit")
        if not fit:
            continue
        base_case = str(r["case"]).split(";")[0]
        key = (r["backend"], r["kernel"], base_case, repr(fit))
        if key in seen:
            continue
        seen.add(key)
        comp = r.get("compile") or {}
        need = comp.get("ub_bits") or comp.get("shared_bytes")
        rows.append([r["backend"], md_escape(r["kernel"]), md_escape(base_case), fit["arch"],
                     f"{need:,}" if need else "", md_escape(fit_answer(fit), 400),
                     md_escape(proof.change(fit) or "", 400),
                     f"{fit['search_s']:.1f}"])
    return rows


FIT_HEADERS = ["tier", "kernel", "case", "arch", "need", "what fits (each one compiled, then run against fp64)",
               "what to change", "search s"]


def _arch(record: Record, env: Mapping[str, Any]) -> str:
    return str((record.get("fit") or {}).get("arch") or record.get("arch") or env.get("target_arch") or "?")


def _cell(outcomes: Sequence[Mapping[str, Any]]) -> str:
    """What one config did on one arch over the cases that compiled it."""
    fits = sum(1 for c in outcomes if c.get("ok"))
    if fits == len(outcomes):
        return "fits"
    worst = max((c.get("ub_bits") or 0 for c in outcomes), default=0)
    kinds = sorted({str(c.get("error_kind")) for c in outcomes if not c.get("ok")})
    need = f" (needs {worst:,} bits)" if worst else ""
    return f"{', '.join(kinds)} in {len(outcomes) - fits}/{len(outcomes)} compiles{need}"


def autotune_fit_tables(records: Sequence[Record], env: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Per autotuned kernel on ascend-compile: its configs (rows) against the archs the records cover."""
    cells: dict[str, dict[str, dict[str, list[Mapping[str, Any]]]]] = defaultdict(lambda: defaultdict(dict))
    for r in records:
        comp = r.get("compile") or {}
        tier = backend_class(str(r.get("backend")))
        if not (tier.target == "ascend" and tier.mode == "compile") or not comp.get("config"):
            continue
        # sorted: a compile's config lists its keys in no fixed order (a set of autotune keys)
        label = config_text({k: comp["config"][k] for k in sorted(comp["config"]) if k not in LAUNCH_KEYS})
        cells[r["kernel"]][label].setdefault(_arch(r, env), []).append(comp)
    sections = []
    for kernel, by_config in sorted(cells.items()):
        archs = sorted({a for per_arch in by_config.values() for a in per_arch})
        rows = [[md_escape(label, 300), *(md_escape(_cell(per_arch[a])) if a in per_arch else "" for a in archs)]
                for label, per_arch in by_config.items()]
        fit_everywhere = sum(1 for row in rows if all(cell == "fits" for cell in row[1:]))
        body = (f"{fit_everywhere} of {len(rows)} autotune configs fit on every arch listed.\n\n"
                + table(rows, ["config", *archs]))
        sections.append((f"Autotune configs that fit: {kernel}", body))
    return sections


def fit_sections(records: Sequence[Record], env: Mapping[str, Any]) -> list[tuple[str, str]]:
    """REPORT.md's fit sections (none where no record overflowed and no autotuned kernel compiled)."""
    rows = fit_rows(records)
    found = []
    if rows:
        found.append(("Configs that fit (the fit advisor)",
                      "Each compile that ran out of on-chip memory, with the configs parity found that fit: its "
                      "autotune configs first, then its block sizes halved and fewer stages or buffers, largest "
                      "tile first; every one listed compiled on the same tier and arch (`--no-fit` turns the "
                      "search off). Each one is then run at the case's shape on a tier that computes "
                      "(ascend-lowered, else the interpreter) against the fp64 reference: only a config that "
                      "computes the right answer is called a fix; one that computes wrong names the kernel change "
                      "it needs.\n\n"
                      + table(rows, FIT_HEADERS)))
    return found + autotune_fit_tables(records, env)


def issue_paragraph(record: Record) -> list[str]:
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


def author_lines(record: Record) -> list[str]:
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
