"""REPORT.md and the terminal summary: pure functions from records to text."""

from __future__ import annotations

import textwrap
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tabulate import tabulate

from parity.reasons import key_line
from parity.report import npu_unseen_md
from parity.report.err_tol import worst_err_over_tol
from parity.report.findings import clip, message_of
from parity.report.perf_md import perf_section
from parity.report.tables import fmt_num, md_escape, table
from parity.results import Record, Status

STATUS_ORDER = (Status.PASSED, Status.FAILED, Status.ERROR, Status.CRASHED, Status.XFAILED, Status.XPASSED,
                Status.SKIPPED, Status.INTERRUPTED)
ENV_KEYS = ("backend", "device_name", "device_count", "target_arch", "copy_gbps", "xdist_workers", "python", "torch",
            "triton", "triton_ascend", "torch_npu", "cann", "ascendnpu_ir", "driver", "git_commit", "level", "seed")


def status_counts(records: Iterable[Record]) -> dict[Status, int]:
    counts = dict.fromkeys(STATUS_ORDER, 0)
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return counts


def by_kernel(records: Iterable[Record]) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        groups[r["kernel"]].append(r)
    return dict(sorted(groups.items()))


def summary_rows(records: Sequence[Record]) -> list[list[Any]]:
    rows = []
    for kernel, recs in by_kernel(records).items():
        counts = status_counts(recs)
        worst = worst_err_over_tol(recs)
        ratios = [m["err_ratio"] for r in recs if (m := r.get("metrics")) and r["status"] != Status.XFAILED]
        compiles = [n for r in recs if (n := r.get("compiles")) is not None]
        rows.append([kernel, len(recs), *(counts[s] for s in STATUS_ORDER),
                     fmt_num(max(ratios, key=lambda x: float(x)) if ratios else None),
                     fmt_num(worst), sum(compiles) if compiles else ""])
    return rows


SUMMARY_HEADERS = ["kernel", "cases", *(s.value for s in STATUS_ORDER), "worst err_ratio", "worst err/tol", "compiles"]


def env_section(env: Mapping[str, Any]) -> str:
    rows = [[k, md_escape(env.get(k))] for k in ENV_KEYS if env.get(k) is not None]
    return table(rows, ["", "value"])


def failure_rows(records: Sequence[Record]) -> list[list[Any]]:
    rows = []
    for r in records:
        if r["status"] not in (Status.FAILED, Status.ERROR, Status.CRASHED, Status.XPASSED):
            continue
        m = r.get("metrics") or {}
        repro = f"[repro]({r['repro']})" if r.get("repro") else ""
        rows.append([r["kernel"], md_escape(r["case"], 80), r["status"], fmt_num(m.get("max_abs_err")),
                     fmt_num(m.get("err_ratio")), fmt_num(m.get("mismatch_frac")), m.get("nan_count", ""),
                     md_escape(m.get("worst_index")), md_escape(m.get("region")),
                     md_escape(clip(key_line(message_of(r)) or r.get("reason") or "", 240), 250),
                     repro])
    return rows


def rounding_rows(records: Sequence[Record]) -> list[list[Any]]:
    """Cases the error model passed: outside the default tolerance, within rounding."""
    return [[r["kernel"], md_escape(r["case"], 80), md_escape(r["rounding"].get("sentence") or "", 400)]
            for r in records if r.get("status") == Status.PASSED and (r.get("rounding") or {}).get("judged")]


def mistake_rows(records: Sequence[Record]) -> list[list[Any]]:
    """Failures diagnosed as a known kernel mistake (parity.run.mistakes): where, what, the fix."""
    rows = []
    for r in records:
        d = r.get("diagnosis")
        if d and r["status"] in (Status.FAILED, Status.ERROR, Status.CRASHED):
            rows.append([r["kernel"], md_escape(r["case"], 60), md_escape(d["line"]), md_escape(d["what"]),
                         f"`{md_escape(d['code'], 120)}`", md_escape(d["fix"], 300)])
    return rows


MISTAKE_HEADERS = ["kernel", "case", "where", "what is wrong", "code", "write instead"]


def expected_failure_rows(records: Sequence[Record]) -> list[list[Any]]:
    """xfailed cases, identical ones as one row: why they are expected and where that is documented."""
    from parity.report.findings import cases_text, group

    rows = []
    for f in group(records, ""):
        if f.outcome != "expected":
            continue
        known = f.known or {}
        link = f"[link]({known['link']})" if known.get("link") else ""
        rows.append([f.kernel, md_escape(cases_text(f), 120), md_escape(clip(known.get("reason") or "", 200), 210),
                     link, md_escape(clip(f.key, 200), 210)])
    return rows


EXPECTED_HEADERS = ["kernel", "cases", "why expected", "link", "observed (key line)"]


FAILURE_HEADERS = ["kernel", "case", "status", "max_abs_err", "err_ratio", "mismatch_frac", "nan_count",
                   "worst_index", "region", "reason", "repro"]


def compile_count_rows(records: Sequence[Record]) -> list[list[Any]]:
    rows = []
    for kernel, recs in by_kernel(records).items():
        counts = [n for r in recs if (n := r.get("compiles")) is not None]
        if counts:
            rows.append([kernel, len(counts), sum(counts), max(counts), compiled_names(recs)])
    return rows


def compiled_names(records: Iterable[Record]) -> str:
    """What the launches compiled, by name with its count ("add_func_kernel_rank_1 x3"): a library may
    launch kernels its spec cannot list (generated during the launch), and the count covers them too."""
    totals: dict[str, int] = {}
    for r in records:
        for c in r.get("compiled_kernels") or ():
            totals[c["kernel"]] = totals.get(c["kernel"], 0) + c["compiles"]
    return md_escape(", ".join(f"{name} x{n}" for name, n in totals.items()), 200)


def specialization_rows(records: Sequence[Record]) -> list[list[Any]]:
    rows = []
    for r in records:
        s = r.get("specialization")
        if not s:
            continue
        launched = r["params"].get("launched", "")
        if r["params"].get("defined_in"):  # a kernel the launch compiled that the spec does not list
            launched += f" (unlisted, from {r['params']['defined_in'].rsplit('/', 1)[-1]})"
        rows.append([r["kernel"], md_escape(launched, 120), s["arg"], s["distinct_values"], s["bases"],
                     s["compiles"], s["per_base_max"], s["expected_per_base"],
                     f"{s['variants_seen']}/{s['variants_declared']}", s["verdict"],
                     md_escape("; ".join(s.get("ir_problems") or []) or ("ok" if s.get("ir_checked") else "n/a"))])
    return rows


def storm_count(spec_rows: Sequence[Sequence[Any]]) -> str:
    """How many sweeps stormed, over the sweeps that counted compiles: a sweep not checked rules nothing out."""
    counted = [row for row in spec_rows if row[9] in ("ok", "storm")]
    storms = sum(1 for row in counted if row[9] == "storm")
    if not counted:
        return "No sweep counted compiles here, so none is ruled a storm or free of one."
    return f"Recompile storms: {storms} of the {len(counted)} sweep(s) that counted compiles."


SPECIALIZATION_HEADERS = ["kernel", "launched", "dynamic arg", "distinct values", "base cases", "compiles",
                          "max per base", "expected per base", "variants seen/declared", "verdict", "dead branches"]


def timing_sums(records: Sequence[Record]) -> dict[str, float]:
    """Seconds per phase (compile_s, ref_s, ...), summed over every record's timing."""
    totals: dict[str, float] = defaultdict(float)
    for r in records:
        for k, v in (r.get("timing") or {}).items():
            if isinstance(v, (int, float)):
                totals[k] += v
    return dict(totals)


def timing_totals(records: Sequence[Record]) -> list[list[Any]]:
    return [[k, f"{v:.2f}"] for k, v in sorted(timing_sums(records).items())]


def render_report(records: Sequence[Record], env: Mapping[str, Any],
                  extra_sections: Sequence[tuple[str, str]] = ()) -> str:
    """The whole REPORT.md for one backend."""
    backend = env.get("backend", "?")
    parts = [f"# parity report: {backend}", "",
             "## Does each kernel port?", "", verdict_section(records, env), "",
             count_line(records), "",
             *([f"**What a pass here means:** {env['scope']}.", ""] if env.get("scope") else []),
             "## Environment", "", env_section(env), "",
             "## Summary by kernel", "",
             "`worst err/tol` is the largest |out − ref| / (atol + rtol·|ref|) over every element of every "
             "case (for err_ratio-judged kernels, err_ratio over its limit); above 1 fails, unless every "
             "mismatch lies within a correct kernel's rounding and the spec chose no tolerance (Passed within "
             "rounding, below). xfailed cases are not scored: they are listed under Expected failures.", "",
             table(summary_rows(records), SUMMARY_HEADERS), ""]
    fails = failure_rows(records)
    parts += ["## Failures", ""]
    parts += [table(fails, FAILURE_HEADERS) if fails else "None.", ""]
    within = rounding_rows(records)
    if within:
        parts += ["## Passed within rounding", "",
                  "Outside torch.testing's default tolerance, inside the rounding a correct kernel may show: the spec "
                  "chose no tolerance, so the accumulation error model judged these (parity.run.rounding: λ√n·u·"
                  "Σ|terms| per element, from the fp64 reference's gradients).", "",
                  table(within, ["kernel", "case", "what the model found"]), ""]
    mistakes = mistake_rows(records)
    if mistakes:
        parts += ["## Mistakes in the kernel source", "",
                  "These failures match a classic Triton mistake; the fix is in the kernel, not the compiler.", "",
                  table(mistakes, MISTAKE_HEADERS), ""]
    expected = expected_failure_rows(records)
    if expected:
        parts += ["## Expected failures", "",
                  "Known divergences declared in the kernel's spec (`known_divergences`): they fail here for a "
                  "documented reason and do not count as failures.", "",
                  table(expected, EXPECTED_HEADERS), ""]
    cc = compile_count_rows(records)
    if cc:
        parts += ["## Compile counts", "",
                  "Compilations seen while running each kernel's cases (in-memory cache misses), of every "
                  "kernel the launch compiled, also one the library generated during it.", "",
                  table(cc, ["kernel", "cases", "compiles", "max in one case", "kernels compiled"]), ""]
    spec_rows = specialization_rows(records)
    if spec_rows:
        parts += ["## Specialization", "",
                  f"Each base case is launched at every sweep value of its dynamic arg; one compilation per "
                  f"base case is expected. {storm_count(spec_rows)}", "",
                  table(spec_rows, SPECIALIZATION_HEADERS), ""]
    perf = perf_section(records)
    if perf:
        parts += ["## Performance", "", perf, ""]
    from parity.report import ascend_perf_md
    from parity.report.compile_sections import compile_sections  # the compile tiers' tables; none on run tiers
    from parity.report.fit_md import fit_sections
    from parity.report.portability import declined_section, golden_disagreements, library_findings

    for title, body in [*library_findings(records), *declined_section(records), *golden_disagreements(records),
                        *compile_sections(records), *fit_sections(records, env),
                        *ascend_perf_md.sections(records), *extra_sections]:
        parts += [f"## {title}", "", body, ""]
    totals = timing_totals(records)
    if totals or env.get("wall_phases"):
        parts += ["## Where the time went", "", *session_phases(env.get("wall_phases") or {})]
    if totals:
        parts += ["`case_wall_s` is the worker wall time of each case and `wait_s` the time between test items "
                  "(pytest, xdist, worker start-up); the phases run inside `case_wall_s` (`run_s` includes "
                  "`compile_s`), `warm_s` is a worker compiling the perf cases' autotune configs for the perf pass "
                  "(parity.perf.warm), and `perf_s` is the perf pass after it.", "",
                  table(totals, ["phase", "seconds (sum over cases)"]), ""]
    return "\n".join(parts)


def session_phases(phases: Mapping[str, float]) -> list[str]:
    """The session's wall clock, phase by phase (parity.run.wallclock), as REPORT.md lines; none if unknown."""
    phases = {label: seconds for label, seconds in phases.items() if seconds >= 0}  # an older run's misstamp
    if not phases:
        return []
    rows = [[label, f"{seconds:.1f}"] for label, seconds in phases.items()]
    rows.append(["total, process start to report", f"{sum(phases.values()):.1f}"])
    return ["The session's wall clock, phase by phase, up to this report (the interpreter's exit and the "
            "launcher around it, e.g. nox, come after).", "", table(rows, ["session phase", "seconds (wall)"]), ""]


COUNT_NOTE = ("A result is one case, or one config of a case on the compile tiers; pytest's own summary counts "
              "test items, which group a case's configs. xfailed results are known divergences: counted, never "
              "scored.")


def count_line(records: Sequence[Record]) -> str:
    """What REPORT.md, DIVERGENCE.md and the terminal count, said the same way in each."""
    counts = ", ".join(f"{n} {s}" for s, n in status_counts(records).items() if n)
    return f"{len(records)} results: {counts or 'none'}. {COUNT_NOTE}"


def _column(env: Mapping[str, Any], records: Sequence[Record]) -> Any:
    from parity.report.divergence import Column

    backend = env.get("backend") or (records[0]["backend"] if records else "?")
    return Column(backend, backend, records[0].get("mode", "") if records else "", env, "")


def verdict_section(records: Sequence[Record], env: Mapping[str, Any]) -> str:
    from parity.report import verdict

    col = _column(env, records)
    return verdict.render_md(verdict.build([col], {col.label: records})) + npu_unseen_md.section({col.label: records})


def terminal_summary(records: Sequence[Record], env: Mapping[str, Any] | None = None) -> str:
    """The verdict lines, then per kernel the counts; worst err/tol over scored cases only."""
    from parity.report import verdict

    cut = any(r.get("status") == Status.INTERRUPTED for r in records)  # its own column: a cut case was no skip
    rows = []
    for kernel, recs in by_kernel(records).items():
        c = status_counts(recs)
        worst = worst_err_over_tol(recs)  # xfailed cases are not scored, as in REPORT.md
        rows.append([kernel, len(recs), c[Status.PASSED], c[Status.FAILED] + c[Status.ERROR] + c[Status.CRASHED],
                     c[Status.XFAILED], c[Status.XPASSED], c[Status.SKIPPED], *([c[Status.INTERRUPTED]] if cut else []),
                     fmt_num(worst)])
    headers = ["kernel", "results", "pass", "fail", "known", "xpass", "skip", *(["interrupted"] if cut else []),
               "err/tol"]
    col = _column(env or {}, records)
    return "\n".join([verdict.render_text(verdict.build([col], {col.label: records})), "",
                      tabulate(rows, headers=headers, tablefmt="simple"),
                      textwrap.fill(count_line(records), 100, break_long_words=False)])
