"""reports/index.html read with the standard library's HTML parser (no browser needed): its structure, its
escaping of hostile names, no network fetch, and links that resolve (tests/test_report_browser.py clicks it)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest

from parity import cli
from parity.report import html as h
from parity.report import index_page
from tests.report_pages import HOSTILE, REPRO, build_page, report_dirs


class Page(HTMLParser):
    """Elements with their attributes, the text of each <script>, and the verdict table's rows."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.scripts: list[str] = []
        self.rows: list[dict[str, str]] = []
        self.headers: list[str] = []
        self.text: list[str] = []
        self._in: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k: v or "" for k, v in attrs}
        self.elements.append((tag, values))
        self._in.append(tag)
        if tag == "tr" and "data-tier" in values:
            self.rows.append(values)
        if tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._in:
            del self._in[len(self._in) - 1 - self._in[::-1].index(tag):]

    def handle_data(self, data: str) -> None:
        if self._in and self._in[-1] == "script":
            self.scripts[-1] += data
        elif self._in and self._in[-1] == "th":
            self.headers.append(data)
        self.text.append(data)

    def urls(self) -> list[str]:
        return [v for _, a in self.elements for k, v in a.items() if k in ("href", "src", "action", "srcset")]


@pytest.fixture(scope="module")
def page_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_page(tmp_path_factory.mktemp("html"))


def test_the_page_holds_the_verdict_table_its_filters_and_the_findings(page_path):
    text = page_path.read_text()
    page = Page(text)
    assert page.headers == index_page.HEADERS
    tables = [a for t, a in page.elements if t == "table"]
    assert [a.get("class") for a in tables] == ["sortable filterable"]
    # one row per kernel and results dir that holds its records
    assert len(page.rows) == 4 + 3 + 2
    assert {(r["data-kernel"], r["data-tier"], r["data-status"]) for r in page.rows} >= {
        ("softmax", "interpret", "fail"), ("matmul", "interpret", "known"), ("matmul", "ascend-compile", "fail"),
        ("vector_add", "cuda-compile", "pass")}
    assert {r["data-owner"] for r in page.rows if r["data-status"] == "fail"} == {"kernel fix", "undecided"}
    filters = [a["data-filter"] for t, a in page.elements if t == "select"]
    assert filters == ["target", "tier", "owner", "status"]
    details = [a["id"] for t, a in page.elements if t == "details"]
    assert details == ["finding-1", "finding-2", "finding-3"]
    assert "cd interpret/repros/softmax__N=781 && python repro.py" in "".join(page.text)
    assert "# softmax: a change in the kernel" in "".join(page.text)  # the draft, inline
    assert "repros/matmul__N=1 (not present beside this page)" in "".join(page.text)  # said, never a dead link
    assert "No heatmap" in text or "data:image/png;base64," in text


def test_hostile_names_and_messages_are_text_never_markup(page_path):
    page = Page(page_path.read_text())
    assert len(page.scripts) == 1 and "alert" not in page.scripts[0]  # the page's own script only
    assert not [a for t, a in page.elements if t == "img" and a.get("src") == "x"]
    assert HOSTILE in "".join(page.text)  # shown as the kernel's name
    assert HOSTILE in {r["data-kernel"] for r in page.rows}


def test_the_page_fetches_nothing_from_the_network(page_path):
    urls = Page(page_path.read_text()).urls()
    assert urls, "the page has links to check"
    external = [u for u in urls if "://" in u or u.startswith("//")]
    assert external == []
    assert "<link" not in page_path.read_text() and "@import" not in page_path.read_text()
    with pytest.raises(ValueError, match="relative"):  # control: the link helper refuses a network address
        h.href("https://example.com/x.js")


def test_every_link_resolves_beside_the_page(page_path):
    page = Page(page_path.read_text())
    relative = [u for u in page.urls() if not u.startswith(("#", "data:"))]
    assert f"interpret/{REPRO}" in [unquote(u) for u in relative]
    missing = [u for u in relative if not (page_path.parent / unquote(u)).exists()]
    assert missing == []
    anchors = {a["id"] for _, a in page.elements if "id" in a}
    assert {u[1:] for u in page.urls() if u.startswith("#")} <= anchors


def test_the_heatmap_is_inlined_when_it_exists(tmp_path):
    dirs = report_dirs(tmp_path)
    columns, records, _ = cli.build_columns(dirs, tmp_path)
    png = tmp_path / "divergence.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    out = index_page.write(tmp_path / "DIVERGENCE.md", columns, records, [], png, None)
    assert out == tmp_path / "index.html"
    assert 'src="data:image/png;base64,iVBORw0KGgpub3QgcmVhbGx5"' in out.read_text()
    out = index_page.write(tmp_path / "mine.md", columns, records, [], None, "matplotlib is not installed")
    assert out == tmp_path / "mine.html" and "No heatmap: matplotlib is not installed" in out.read_text()


def test_a_failed_report_removes_a_stale_page(tmp_path, capsys):
    page = build_page(tmp_path)
    assert page.exists()
    assert cli.main(["report", str(tmp_path / "missing"), "--out", str(page.parent / "DIVERGENCE.md")]) == 2
    assert not page.exists() and "index.html" in capsys.readouterr().err


def test_the_escaping_check_catches_a_page_that_does_not_escape(tmp_path, monkeypatch):
    """Negative control: with escaping turned off, the hostile kernel name becomes a second script."""
    monkeypatch.setattr(h, "esc", str)
    page = Page(build_page(tmp_path).read_text())
    assert len(page.scripts) > 1 and any("alert" in s for s in page.scripts)
