"""reports/index.html in a real headless browser: Playwright drives the system's chromium (Debian's `chromium`
package; `playwright install` is never needed). The page opens without a script error, a click on a header
sorts the verdict table, and a filter hides rows. The negative control opens the same page with its script
stripped: the same checks must then see no sorting and no filtering."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.report_pages import build_page

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed: `pip install playwright` (the `nox -s tests` "
    "session installs it); it drives the system chromium, so no `playwright install` is needed")
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
if BROWSER is None:
    pytest.skip("no chromium on PATH: `apt-get install chromium` (Debian; .ci/run installs it as root)",
                allow_module_level=True)

CASES_COL = 5  # index_page.HEADERS: kernel, target, tier, status, owner, cases, ...


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        # --no-sandbox: CI containers run as root, where chromium's sandbox refuses to start
        b = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def page_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_page(tmp_path_factory.mktemp("browser"))


def open_page(browser: Any, path: Path) -> tuple[Any, list[str]]:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("request", lambda req: errors.append(f"fetched {req.url}") if not req.url.startswith(("file:", "data:"))
            else None)
    page.goto(path.as_uri())
    return page, errors


def column(page: Any, index: int) -> list[str]:
    return [c.strip() for c in page.locator(f"#verdict tbody tr:visible td:nth-child({index + 1})").all_text_contents()]


def sorts(page: Any) -> bool:
    """Whether a click on the `cases` header orders the rows by it, and a second click reverses them."""
    header = page.locator(f'#verdict th[data-col="{CASES_COL}"]')
    header.click()
    up = [int(x) for x in column(page, CASES_COL)]
    header.click()
    down = [int(x) for x in column(page, CASES_COL)]
    return up == sorted(up) and down == sorted(up, reverse=True) and up != down


def filters(page: Any) -> bool:
    """Whether picking status `fail` leaves only failing rows, fewer than all."""
    total = page.locator("#verdict tbody tr").count()
    page.select_option('select[data-filter="status"]', "fail")
    shown = column(page, 3)
    return 0 < len(shown) < total and set(shown) == {"fail"}


def test_the_page_opens_sorts_and_filters(browser, page_path):
    page, errors = open_page(browser, page_path)
    assert page.title() == "parity report"
    assert page.locator("#verdict tbody tr").count() == 9
    assert sorts(page)
    assert filters(page)
    assert re.fullmatch(r"\d+ of 9 rows shown", page.locator("#shown").text_content())
    page.locator('a[href="#finding-1"]').first.click()  # a finding's link opens its details
    assert page.locator("#finding-1").get_attribute("open") is not None
    assert errors == []


def test_the_checks_see_a_page_whose_script_is_broken(browser, page_path, tmp_path):
    """Negative control: the same page without its script neither sorts nor filters, and the checks say so."""
    text = page_path.read_text()
    stripped = tmp_path / "index.html"
    stripped.write_text(re.sub(r"<script>.*?</script>", "<script></script>", text, flags=re.S))
    page, _ = open_page(browser, stripped)
    assert not sorts(page)
    assert not filters(page)
