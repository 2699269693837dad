"""The porting verdict: one row per kernel, one column per target, each check that ran there and its result.

It answers a porting user's question first: does kernel X work on NVIDIA and on Ascend, and if not,
whose change is it (the kernel's, the library's, a compiler's, a tier's limit)? Owners come from the
records (parity.triage's `owner`; parity.findings.owner_of falls back where there is none). A cell names
each check in one word (the line above the table says what the word checked), so a row fits a terminal;
the results dirs of the version matrix (reports/<tier>@triton-<v>) fold into one note per kernel below
the table. Pure functions: columns and records in, markdown or plain text out.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from parity.backends import backend_class, device_tier
from parity.backends.base import Check
from parity.fit.proof import change as proven_change
from parity.report import ascend_perf_md, npu_unseen_md
from parity.report import findings as fnd
from parity.report.fit_md import fit_answer, fit_line
from parity.report.legend import REJECTED, device_run, legend, not_checkable
from parity.report.tables import md_code, md_escape, table
from parity.report.versions import split_columns, triton_of
from parity.results import Owner, OwnerKind, Record, Status
from parity.seams.versions import version_key
from parity.triage.drafts import ShownOwner, shown
from parity.triage.owner import SPEC_AUTHOR, fixed_in
from parity.triage.precision import LIMIT as PRECISION_LIMIT

TIER_OWNERS = (OwnerKind.TIER, OwnerKind.ENVIRONMENT, OwnerKind.RANDOM)


def target_rank(target: str) -> int:
    """A column's place: the vendors with a device tier first, in their device tiers' report order."""
    tier = device_tier(target)
    return tier.report_rank if tier and tier.report_rank is not None else 9


# the owner in a cell's words (the findings below say it in full)
OWNER_TAGS = {OwnerKind.AUTHOR: "kernel fix", OwnerKind.LIBRARY: "{name}", OwnerKind.TRITON: "Triton bug",
              OwnerKind.TRITON_ASCEND: "triton-ascend bug", OwnerKind.TIER: "tier limit",
              OwnerKind.ENVIRONMENT: "environment", OwnerKind.TOLERANCE: "tolerance too tight",
              OwnerKind.RANDOM: "random stream", OwnerKind.BUNDLE: "bundle: re-record"}


def _marked(v: Verdict) -> set[str]:
    """The marks the table and the other releases' notes use ("?" where a failure's owner is provisional)."""
    marks = set()
    for r in [*v.results, *(n for notes in v.versions.values() for n in notes.values())]:
        marks.add(r.mark)
        if REJECTED in r.text:
            marks.add(REJECTED)
        if r.mark == "✗" and any(f.owner.provisional for f in r.findings if f.outcome != "expected"):
            marks.add("?")
    return marks


def check_of(backend: str) -> Check:
    """What a tier checks, as its Backend class says (a tier no backend has: a column of its own)."""
    return backend_class(backend).check or Check(backend, backend, 9, backend)


def check_name(backend: str, env: Mapping[str, Any]) -> str:
    arch = env.get("target_arch") or "the target"
    device = env.get("device_name") or "the device"
    name = check_of(backend).name.format(arch=arch, device=device)
    if env.get("replay"):  # --replay BUNDLE: the outputs are checked against the recording's, not fp64
        name = name.replace("the fp64 answer", "the recorded launches' outputs")
        if str(env.get("replay_verified") or "").startswith("not verified"):  # a bundle recorded before digests
            name += ", bundle not verified"
    return name


def owner_tag(decided: Owner | ShownOwner) -> str:
    owner = shown(decided)
    who = owner.who
    if who is None:
        return "undecided"
    name = str(owner.name or who).split(" (")[0]  # "fla (flash-linear-attention)": fla
    tag = ("precision mode" if owner.limit == PRECISION_LIMIT else
           "spec fix" if owner.name == SPEC_AUTHOR else OWNER_TAGS.get(who, str(who)).format(name=name))
    fixed = fixed_in(owner.decided())
    return tag + (f", fixed in {fixed}" if fixed else "") + ("?" if owner.provisional else "")


def refs_text(numbers: Sequence[int]) -> str:
    """#3, #5–7: the finding numbers, runs joined."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"#{r[0]}" if len(r) == 1 else f"#{r[0]}–{r[-1]}" for r in runs)


@dataclass(frozen=True)
class Result:
    """One check of one kernel on one results dir."""

    mark: str  # "✓", "⚠", "✗", "–" (not checked), "…" (interrupted)
    text: str  # the check's word, its mark and, for a failure, whose and which findings
    findings: tuple[fnd.Finding, ...] = ()
    why: str = ""  # why nothing ran ("–")


def result(word: str, records: Sequence[Record], column: str, link_prefix: str,
           number: Mapping[tuple[Any, ...], int]) -> Result:
    """One check's verdict over one kernel's records on one column; `number` maps a finding's ident to its row."""
    scored = [r for r in records if fnd.scored(r)]  # a failed specialization sweep too (a recompile storm)
    ran = [r for r in scored if r["status"] not in (Status.SKIPPED, Status.INTERRUPTED)]
    groups = tuple(fnd.group(scored, column, link_prefix))
    # a failure (known or not) that triage gives to the tier or the environment says nothing about the kernel
    limits = [f for f in groups if f.owner.who in TIER_OWNERS]
    bad = [f for f in groups if f.outcome != "expected" and f not in limits]
    expected = [f for f in groups if f.outcome == "expected" and f not in limits]

    def refs(fs: Sequence[fnd.Finding]) -> str:
        return refs_text([number[f.ident] for f in fs if f.ident in number])

    n_limit = sum(len(f.cases) for f in limits)
    n_known = sum(len(f.cases) for f in expected)
    # the environment's (a device out of memory, a library needing a newer compiler) is named as such
    whose = {f.owner.who for f in limits if f.owner.who is not None}
    one = next(iter(whose)) if len(whose) == 1 else OwnerKind.TIER
    limit_word = OWNER_TAGS[one] if one in (OwnerKind.ENVIRONMENT, OwnerKind.RANDOM) else "tier limit"
    limit = f", {n_limit} {limit_word} {refs(limits)}".rstrip() if limits else ""
    known = f", {n_known} known" if expected else ""
    if any(r["status"] == Status.INTERRUPTED for r in scored) and not bad:
        return Result("…", f"{word} … interrupted", groups)
    if bad:
        tags = list(dict.fromkeys(owner_tag(f.owner) for f in bad))
        tags = [t for t in tags if not (t.endswith("?") and t[:-1] in tags)]  # settled beside provisional: once
        return Result("✗", f"{word} ✗ {'; '.join(tags)} {refs(bad)}".rstrip() + known + limit, groups)
    if not ran:
        why = next((r.get("reason") for r in scored if r.get("reason")), None) or "no case ran"
        declined = next((r["declined"] for r in scored if r.get("declined")), None)
        return Result("–", f"{word} –", groups, f"declined by {declined['library']}" if declined else str(why))
    if not expected and len(ran) == n_limit:
        return Result("–", f"{word} – {limit_word} {refs(limits)}".rstrip(), groups,
                      {"environment": "the environment", "random stream": "a random stream that differs by design"}
                      .get(limit_word, "a limit of this tier"))
    if expected:  # not a failure of the run, but the kernel does not work there as it stands
        return Result("⚠", f"{word} ⚠ {n_known} known{limit}", groups)
    # a probe passes when rejected as its spec expects: the cell says so, as its compile record does (not built)
    rejected = [r for r in ran if r["status"] == Status.PASSED and r.get("expected_compile_error")
                and (r.get("compile") or {}).get("ok") is False]
    if rejected and len(rejected) + n_limit == len(ran):
        return Result("✓", f"{word} ✓ {REJECTED}{limit}", groups)
    return Result("✓", f"{word} ✓{limit}", groups)


@dataclass(frozen=True)
class Verdict:
    targets: list[str]
    rows: list[tuple[str, list[str]]]  # kernel, one cell per target
    checked: list[str]  # per target, what each word in its cells checked
    findings: list[fnd.Finding]  # numbered in order: the failing ones first, then the expected ones
    missing: dict[str, str]  # target -> the device check no column provides
    main: dict[str, str]  # target -> the release the table speaks of, where the version matrix adds others
    versions: dict[str, dict[str, Result]]  # kernel -> "3.2.0" -> its checks on that release, folded
    matrix: frozenset[str]  # labels of the version matrix's columns
    results: tuple[Result, ...] = ()  # every cell's checks, for the legend


_REFS = re.compile(r"\s*#\d+(?:–\d+)?(?:, #\d+(?:–\d+)?)*")
SAME = "="


def _fold(results: Sequence[tuple[Result, Result | None]], main: str) -> Result:
    """The checks of one kernel on one other release, as one result: only those that differ from the same
    check on the table's release (`main`), each with its mark."""
    changed = [(r, m) for r, m in results
               if m is None or (r.mark, _REFS.sub("", r.text)) != (m.mark, _REFS.sub("", m.text))]
    if not changed:
        return Result(SAME, f"as {main}")
    if all(r.mark == "–" for r, _ in changed):
        why = fnd.clip(changed[0][0].why, 70)
        return Result("–", f"not checked ({why})" if why else "not checked")
    marks = [r.mark for r, _ in changed]
    worst = next((m for m in ("✗", "…", "⚠", "–") if m in marks), "✓")
    return Result(worst, "; ".join(r.text for r, _ in changed), tuple(f for r, _ in changed for f in r.findings))


def build(columns: Sequence[Any], records: Mapping[str, Sequence[Record]]) -> Verdict:
    """The verdict over columns (parity.report.divergence.Column: label, backend, env, link_prefix)."""
    cols = sorted(columns, key=lambda c: (check_of(c.backend).target, check_of(c.backend).order, c.label))
    primary, _ = split_columns(cols)
    main_labels = {c.label for c in primary}
    matrix = [c for c in cols if c.label not in main_labels]
    targets = list(dict.fromkeys(check_of(c.backend).target for c in cols))
    targets.sort(key=target_rank)
    all_findings = [(c.label not in main_labels, f) for c in cols
                    for f in fnd.group(records.get(c.label, ()), c.label, c.link_prefix)]
    ordered = [f for _, f in sorted(all_findings, key=lambda mf: (mf[1].outcome == "expected", mf[0],
                                                                  mf[1].kernel, mf[1].column))]
    number = {f.ident: i + 1 for i, f in enumerate(ordered)}
    kernels = sorted({r["kernel"] for c in cols for r in records.get(c.label, ())})

    def recs(c: Any, kernel: str) -> list[Record]:
        return [r for r in records.get(c.label, ()) if r["kernel"] == kernel]

    main_release = {c.backend: str(triton_of(c)) for c in primary if triton_of(c)}
    rows, versions, every = [], {}, []
    for kernel in kernels:
        cells, on_main = [], {}
        for target in targets:
            mine = [c for c in primary if check_of(c.backend).target == target and recs(c, kernel)]
            shared = {c.backend for c in mine if sum(x.backend == c.backend for x in mine) > 1}
            words = [check_of(c.backend).short + (f"@{c.label}" if c.backend in shared else "") for c in mine]
            results = [result(w, recs(c, kernel), c.label, c.link_prefix, number) for w, c in zip(words, mine,
                                                                                                    strict=True)]
            on_main.update({c.backend: r for c, r in zip(mine, results, strict=True)})
            every += results
            perf = [ascend_perf_md.cell_note(recs(c, kernel), c.link_prefix) for c in mine]  # static advice
            perf += [npu_unseen_md.cell_note(check_of(c.backend).short, recs(c, kernel)) for c in mine]  # blind
            cells.append(" · ".join([r.text for r in results] + [p for p in perf if p]) or "–")
        rows.append((kernel, cells))
        per_release: dict[str, list[tuple[Result, Result | None]]] = {}
        for c in matrix:
            if recs(c, kernel):
                per_release.setdefault(str(triton_of(c)), []).append(
                    (result(check_of(c.backend).short, recs(c, kernel), c.label, c.link_prefix, number),
                     on_main.get(c.backend)))
        if per_release:
            release = next((main_release[c.backend] for c in matrix if c.backend in main_release), "the table")
            versions[kernel] = {v: _fold(rs, release)
                                for v, rs in sorted(per_release.items(), key=lambda i: version_key(i[0]))}
    checked = []
    for target in targets:
        words = list(dict.fromkeys(f"{check_of(c.backend).short} = {check_name(c.backend, c.env)} ({c.backend})"
                                   for c in primary if check_of(c.backend).target == target))
        checked.append(f"{target}: {'; '.join(words)}")
    missing = {t: str(d.device_check) for t in targets if (d := device_tier(t)) and d.device_check and not any(
        backend_class(c.backend).hardware and check_of(c.backend).target == t for c in cols)}
    main = {check_of(c.backend).target: str(triton_of(c)) for c in primary
            if triton_of(c) and any(m.backend == c.backend for m in matrix)}
    return Verdict(targets, rows, checked, ordered, missing, main, versions, frozenset(c.label for c in matrix),
                   tuple(every))


def _release_notes(v: Verdict) -> tuple[list[str], dict[str, list[str]]]:
    """(the releases the matrix adds, kernel -> one note per release), kernels that differ from the table only."""
    releases = sorted({r for notes in v.versions.values() for r in notes}, key=version_key)
    differ = {k: [notes.get(r, Result("–", "not run")).text for r in releases]
              for k, notes in v.versions.items() if any(n.mark != SAME for n in notes.values())}
    return releases, differ


def _main_text(v: Verdict) -> str:
    return ", ".join(f"{t} {r}" for t, r in v.main.items()) or "the default pin"


# the wrappers around a message that the same failure gets on different tiers ("InterpreterError:
# NotImplementedError('…')", "at 19:15: …"), and where it was raised: the reason without them
_WRAPPER = re.compile(r"^(?:at \d+:\d+:\s*|\w+(?:Error|Exception)(?::\s*|\(\s*[\"']?))+")
_RAISED_AT = re.compile(r"\s*\(raised at [^)]*\)")


def gist(key: str) -> str:
    """A key line's message without its exception wrappers, position and tail, for grouping one reason."""
    text = _WRAPPER.sub("", _RAISED_AT.sub("", key)).split(" … ")[0]
    return text.strip(" '\")") or key


def versions_md(v: Verdict) -> str:
    """Other releases (the version matrix) as one note per kernel that differs, and a count of the rest."""
    releases, differ = _release_notes(v)
    if not releases:
        return ""
    main = _main_text(v)
    same = len(v.versions) - len(differ)
    rows = [[md_escape(k), *(md_escape(fnd.clip(n, 90), 100) for n in notes)] for k, notes in sorted(differ.items())]
    if same:
        rows.append([f"the other {same} kernel(s)", *(f"as {_main_text(v)}" for _ in releases)])
    reasons = [f"- {md_escape(r, 400)}" for r in release_reasons(v, 200)]
    return "\n".join([f"### Other Triton releases (the version matrix; the table above is {main})", "",
                      table(rows, ["kernel", *(f"Triton {r}" for r in releases)]), "",
                      *(["Why, each reason once:", "", *reasons, ""] if reasons else [])])


FINDING_HEADERS = ["#", "kernel", "tier", "cases", "what, and whose", "compiler's key line", "repro"]


def _finding_row(i: int, f: fnd.Finding, key_limit: int) -> list[str]:
    what = ("expected: " + fnd.clip(f.known["reason"], 90) if f.outcome == "expected" and f.known
            else f"{f.outcome}: {fnd.owner_words(f.owner)}")
    evidence = f.owner.evidence if f.outcome != "expected" else ""
    if evidence:
        what += f" — {fnd.clip(evidence, 100)}"
    if f.fit:
        what += f"; {fnd.clip(fit_line(f.fit), 200)}"
    link = f.known.get("link") if f.outcome == "expected" and f.known else None
    repro = " ".join(x for x in (f"[repro]({f.repro})" if f.repro else "",
                                 f"[draft]({f.draft})" if f.draft and f.outcome != "expected" else "",
                                 f"[why]({link})" if link else "") if x)
    return [str(i), md_escape(f.kernel), md_escape(dir_name(f.column)), md_escape(fnd.cases_text(f), 200),
            md_escape(what, 400), md_code(fnd.clip(f.key, key_limit), 400), repro]


def render_md(v: Verdict, key_limit: int = 160) -> str:
    """What was checked, the verdict table, the other releases, what no tier here checks, and the numbered
    findings, as markdown."""
    if not v.rows:
        return "No records to judge."
    parts = ["What each word checked:", "", *(f"- {md_escape(c, 300)}" for c in v.checked), ""]
    if v.missing:
        parts += [not_checkable(v.missing), ""]
    parts += [table([[md_escape(k), *(ascend_perf_md.relink(md_escape(c, 260)) for c in cells)] for k, cells in v.rows],
                    ["kernel", *v.targets]),
              "", md_escape(legend(_marked(v)), 600) + ".", ""]
    notes = versions_md(v)
    if notes:
        parts += [notes]
    bad = [f for f in v.findings if f.outcome != "expected"]
    expected = [f for f in v.findings if f.outcome == "expected"]
    if bad:
        parts += ["### Findings", "", "Identical failures of a kernel on a tier are one row; `cases` counts them.",
                  "", table([_finding_row(v.findings.index(f) + 1, f, key_limit) for f in bad], FINDING_HEADERS), ""]
    if expected:
        parts += ["### Known and expected", "",
                  "Declared in the kernel's spec (`known_divergences`), each with its public source: these fail "
                  "here for a documented reason and are not counted as failures.", "",
                  table([_finding_row(v.findings.index(f) + 1, f, key_limit) for f in expected],
                        FINDING_HEADERS), ""]
    return "\n".join(parts)


def _wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    """Lines of at most `width` columns, broken between words (nothing is cut)."""
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=False, break_on_hyphens=False) or [indent]


def _versions_text(v: Verdict, width: int) -> list[str]:
    releases, differ = _release_notes(v)
    if not releases:
        return []
    main = _main_text(v)
    same = len(v.versions) - len(differ)
    lines = _wrap(f"Other Triton releases ({', '.join(releases)}; the table is {main}): "
                  + (f"{same} kernel(s) as on the table" if same else "every kernel differs somewhere")
                  + ("; these differ:" if differ else "."), width, "")
    for kernel, notes in sorted(differ.items()):
        text = " · ".join(f"{r} {n}" for r, n in zip(releases, notes, strict=True))
        lines += _wrap(f"{kernel}: {text}", width)
    for reason in release_reasons(v, width + width // 2):
        lines += _wrap(reason, width)
    return lines


def release_reasons(v: Verdict, limit: int) -> list[str]:
    """Each distinct reason the other releases fail for, once, with whose it is and the findings it stands for."""
    reasons: dict[tuple[str, str], tuple[list[str], list[int]]] = {}
    for f in v.findings:
        if f.column in v.matrix and f.outcome != "expected":
            release = f.column.rsplit("@triton-", 1)[-1]
            tags, numbers = reasons.setdefault((release, gist(f.key)), ([], []))
            tags.append(owner_tag(f.owner))
            numbers.append(v.findings.index(f) + 1)
    out = []
    for (release, why), (tags, numbers) in reasons.items():
        tag = "; ".join(t for t in dict.fromkeys(tags) if not (t.endswith("?") and t[:-1] in tags))
        out.append(f"{release} {tag} ({refs_text(numbers)}): {fnd.clip(why, limit)}")
    return out


def dir_name(column: str) -> str:
    """A results dir as the findings name it: `libraries-ascend-lowered`, not `ascend-lowered@libraries-…`."""
    backend, _, rest = column.partition("@")
    return rest if rest and backend in rest else column


def render_text(v: Verdict, width: int = 100) -> str:
    """The verdict for a terminal, no line over `width`: what each word checked, the kernel × target table,
    the other releases folded, then the findings of the table's own release, a few lines each."""
    from tabulate import tabulate

    lines = [ln for c in v.checked for ln in _wrap(c, width, "")]
    if v.missing:
        lines += _wrap(f"Not checked by any tier here: {' and '.join(v.missing.values())} (each needs its device: "
                       f"{' / '.join(device_run(t) for t in v.missing)}).", width, "")
    lines += [tabulate([[k, *map(ascend_perf_md.unlink, cells)] for k, cells in v.rows], headers=["kernel", *v.targets],
                       tablefmt="simple"), ""]
    lines += _wrap(legend(_marked(v)), width, "")
    lines += _versions_text(v, width)
    for f in [f for f in v.findings if f.outcome != "expected" and f.column not in v.matrix]:
        n = v.findings.index(f) + 1
        head = f"#{n} {f.kernel} [{dir_name(f.column)}]: "
        lines.append(fnd.clip(head + fnd.cases_text(f, max(20, width - len(head) - 10)), width))
        evidence = f.owner.evidence
        words = fnd.owner_words(dataclasses.replace(f.owner, provisional=False))
        lines += _wrap(words + (f": {fnd.clip(evidence, width)}" if evidence else ""), width, "    ")[:2]
        if f.owner.provisional:
            settle = f.owner.settle or "another tier's run"
            lines.append("    " + fnd.clip(f"provisional: settled by {settle}", width - 4))
        if f.key:
            lines.append("    " + fnd.clip(f.key, width - 4))
        if f.fit:  # the answer, then what to change, each on its line
            lines.append("    " + fnd.clip(f"fit advisor: {fit_answer(f.fit)}", width - 4))
            change = proven_change(f.fit)  # as strong as its proof: a fix only where it computes the fp64 answer
            if change:
                lines += _wrap(f"change: {change}", width - 4, "    ")[:4]
        if f.draft or f.repro:
            lines.append(f"    {f.draft or f.repro}")
    expected = sum(len(f.cases) for f in v.findings if f.outcome == "expected")
    if expected:
        lines += _wrap(f"{expected} result(s) fail as declared known divergences (expected; why and link in "
                       "the report)", width, "")
    return "\n".join(lines)
