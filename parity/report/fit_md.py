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
from parity.findings.markdown import md_escape, table
from parity.fit import proof
from parity.fit.words import SHOWN, author_lines, config_text, fit_answer, fit_line, issue_paragraph, need_text
from parity.results import Record

LAUNCH_KEYS = ("num_warps", "num_stages")


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


__all__ = ["SHOWN", "author_lines", "autotune_fit_tables", "config_text", "fit_answer", "fit_line",
           "fit_rows", "fit_sections", "issue_paragraph", "need_text"]
