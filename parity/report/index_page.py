"""reports/index.html: the merged view of `parity report` as one self-contained page beside DIVERGENCE.md.

The verdict as one row per kernel and results dir (sortable, filterable by target, tier, owner and status),
the heatmap inlined as a data: URI, and the numbered findings, each expanding to its key line, evidence,
repro command, draft and a relative link to its repro folder. It is built from the same columns, records and
divergences as the markdown, after it; it reads repro folders and drafts but never writes a results dir.
`render` is pure; `write` reads what the page inlines (the heatmap, the drafts) and writes the page.
"""

from __future__ import annotations

import base64
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parity.report import findings as fnd
from parity.report import html as h
from parity.report import npu_unseen_md
from parity.report import verdict as vd
from parity.report.divergence import Column, Divergence
from parity.report.divergence_md import headline
from parity.report.fit_md import fit_line
from parity.report.html_assets import SCRIPT, STYLE
from parity.report.legend import legend, not_checkable
from parity.results import Record, atomic_write_text

DEFAULT_MD = "DIVERGENCE.md"
DRAFT_LIMIT = 20_000  # characters of a draft shown inline; the file itself is linked
STATUS = {"✓": "pass", "⚠": "known", "✗": "fail", "–": "not checked", "…": "interrupted"}
HEADERS = ["kernel", "target", "tier", "status", "owner", "cases", "checked", "findings"]
FILTERS = (("target", "target"), ("tier", "tier"), ("owner", "owner"), ("status", "status"))


def html_path(md: Path) -> Path:
    """The page beside a markdown report: reports/DIVERGENCE.md -> reports/index.html, X.md -> X.html."""
    return md.with_name("index.html") if md.name == DEFAULT_MD else md.with_suffix(".html")


@dataclass(frozen=True)
class Row:
    """One kernel on one results dir, as the verdict judged it."""

    kernel: str
    target: str
    tier: str
    status: str
    owner: str
    cases: int
    text: str
    numbers: tuple[int, ...]


def rows(columns: Sequence[Column], records: Mapping[str, Sequence[Record]],
         number: Mapping[tuple[Any, ...], int]) -> list[Row]:
    """Every (kernel, results dir) that holds records, judged by the verdict's own rule (parity.report.verdict)."""
    out = []
    for c in columns:
        target, word = vd.check_of(c.backend).target, vd.check_of(c.backend).short
        by_kernel: dict[str, list[Record]] = {}
        for r in records.get(c.label, ()):
            by_kernel.setdefault(r["kernel"], []).append(r)
        for kernel, recs in sorted(by_kernel.items()):
            res = vd.result(word, recs, c.label, c.link_prefix, number)
            bad = [f for f in res.findings if f.outcome != "expected"]
            owners = list(dict.fromkeys(vd.owner_tag(f.owner) for f in bad or res.findings))
            nums = tuple(sorted(number[f.ident] for f in res.findings if f.ident in number))
            blind = npu_unseen_md.cell_note(word, recs)  # a pass that cannot see a known NPU bug says so
            out.append(Row(kernel, target, c.label, STATUS.get(res.mark, res.mark), "; ".join(owners) or "none",
                           sum(1 for r in recs if fnd.scored(r)), res.text + (f" ({res.why})" if res.why else "")
                           + (f" · {blind}" if blind else ""), nums))
    return out


def verdict_table(table_rows: Sequence[Row]) -> str:
    cells = [[h.esc(r.kernel), h.esc(r.target), h.esc(r.tier), h.esc(r.status), h.esc(r.owner), str(r.cases),
              h.esc(r.text), " ".join(f'<a href="#finding-{n}">#{n}</a>' for n in r.numbers)] for r in table_rows]
    attrs = [{"class": f"st-{r.status.replace(' ', '-')}", "data-kernel": r.kernel, "data-target": r.target,
              "data-tier": r.tier, "data-status": r.status, "data-owner": r.owner} for r in table_rows]
    filters = "".join(h.select(name, label, sorted({getattr(r, name) for r in table_rows})) for name, label in FILTERS)
    return (f'<div class="filters">{filters}<span id="shown" class="note"></span></div>\n'
            + h.table(HEADERS, cells, attrs, table_id="verdict", classes="sortable filterable"))


def finding_details(n: int, f: fnd.Finding, present: Collection[str], drafts: Mapping[str, str]) -> str:
    """One finding as an expandable section: the summary line, then what a reader needs to act on it."""
    what = (f"expected: {f.known['reason']}" if f.outcome == "expected" and f.known
            else f"{f.outcome}: {fnd.owner_words(f.owner)}")
    summary = (f"<b>#{n}</b> {h.esc(f.kernel)} [{h.esc(vd.dir_name(f.column))}] — {h.esc(what)} — "
               f"{h.esc(fnd.cases_text(f, 120))}")
    repro_dir = f.repro if f.repro and f.repro in present else None
    command = f"cd {repro_dir} && python repro.py" if repro_dir else ""
    draft = f.draft if f.draft and f.draft in drafts and f.outcome != "expected" else None
    link = (f.known or {}).get("link") if f.outcome == "expected" else None
    items = [("key line", h.code(f.key) if f.key else ""),
             ("evidence", h.esc(f.owner.evidence or "") if f.outcome != "expected" else ""),
             ("settled by", h.esc(f.owner.settle or "") if f.owner.provisional else ""),
             ("fit advisor", h.esc(fit_line(f.fit)) if f.fit else ""),
             ("why (public source)", h.esc(link) if link else ""),
             ("cases", h.esc(", ".join(sorted(f.cases)))),
             ("repro folder", h.link(repro_dir, repro_dir) if repro_dir else
              h.esc(f"{f.repro} (not present beside this page)") if f.repro else "none written"),
             ("repro command", h.code(command) if command else ""),
             ("draft", h.link(draft, draft) + h.pre(drafts[draft]) if draft else "")]
    return h.details(summary, h.dl(items), f"finding-{n}")


def findings_section(v: vd.Verdict, present: Collection[str], drafts: Mapping[str, str]) -> str:
    if not v.findings:
        return "<p>No findings: no case failed, and none is a declared known divergence.</p>"
    bad = [(i + 1, f) for i, f in enumerate(v.findings) if f.outcome != "expected"]
    expected = [(i + 1, f) for i, f in enumerate(v.findings) if f.outcome == "expected"]
    parts = []
    if bad:
        parts += ["<h3>Failures</h3>", *(finding_details(n, f, present, drafts) for n, f in bad)]
    if expected:
        parts += ["<h3>Known and expected</h3>", "<p class=\"note\">Declared in the kernel's spec "
                  "(<code>known_divergences</code>), each with its public source; not counted as failures.</p>",
                  *(finding_details(n, f, present, drafts) for n, f in expected)]
    return "\n".join(parts)


def render(columns: Sequence[Column], records: Mapping[str, Sequence[Record]],
           divs: Sequence[Divergence], md_name: str, heatmap_uri: str | None, heatmap_note: str | None,
           present: Collection[str] = (), drafts: Mapping[str, str] | None = None,
           v: vd.Verdict | None = None, envelope: str = "") -> str:
    """The whole page. `heatmap_uri`: the heatmap as a data: URI (else `heatmap_note` says why there is none);
    `present`: the repro folders (relative to the page) that exist; `drafts`: draft path -> its text;
    `v`: the verdict of these columns and records where the caller has it already; `envelope`: the production
    envelope's section (parity.report.envelope_md.html), after the findings."""
    v = v or vd.build(columns, records)
    number = {f.ident: i + 1 for i, f in enumerate(v.findings)}
    table_rows = rows(columns, records, number)
    marks = {m for m, word in STATUS.items() if any(r.status == word for r in table_rows)}
    body = ["<h1>parity: does each kernel port?</h1>",
            f"<p>{h.esc(headline(columns, divs, records))} The full text: {h.link(md_name, md_name)}.</p>",
            "<h2>Verdict</h2>", "<ul>", *(f"<li>{h.esc(c)}</li>" for c in v.checked), "</ul>"]
    if v.missing:
        body.append(f'<p class="note">{h.esc(not_checkable(v.missing))}</p>')
    body += [f'<p class="note">{h.esc(legend(marks))}. Click a header to sort; pick a value to filter.</p>',
             verdict_table(table_rows), "<h2>Heatmap</h2>"]
    if heatmap_uri:
        body.append(f'<img alt="kernel × results dir heatmap: worst err/tol, compile failures marked C" '
                    f'src="{h.esc(heatmap_uri)}">')
    else:
        body.append(f'<p class="note">No heatmap: {h.esc(heatmap_note or "nothing to draw")}.</p>')
    body += ["<h2>Findings</h2>", findings_section(v, present, drafts or {}), envelope]
    return h.page("parity report", STYLE, SCRIPT, "\n".join(body))


def data_uri(png: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(png.read_bytes()).decode("ascii")


def write(md: Path, columns: Sequence[Column], records: Mapping[str, Sequence[Record]],
          divs: Sequence[Divergence], png: Path | None, png_note: str | None, envelope: str = "") -> Path:
    """Write the page beside `md` (see html_path); returns its path."""
    root = md.parent
    v = vd.build(columns, records)
    present = {f.repro for f in v.findings if f.repro and (root / f.repro).is_dir()}
    drafts = {}
    for f in v.findings:
        if f.draft and f.draft not in drafts and (root / f.draft).is_file():
            drafts[f.draft] = (root / f.draft).read_text(encoding="utf-8", errors="replace")[:DRAFT_LIMIT]
    uri = data_uri(png) if png is not None and png.exists() else None
    page = render(columns, records, divs, md.name, uri, png_note, present, drafts, v, envelope)
    out = html_path(md)
    atomic_write_text(out, page)
    return out
