"""Every page in headless Chromium from file:// with the network refused: no errors, every chart drawn, fast.

Skips only where no Chromium binary exists (``.ci/run`` installs Debian's ``chromium``).
"""

from __future__ import annotations

import json

import pytest

from econ.report.browser import Chromium, find_chromium

from .conftest import XSS_MODEL, XSS_PROVIDER
from .test_site import RENDERED

CHROMIUM = find_chromium()
RENDER_LIMIT_S = 2.0

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="no Chromium on this machine (apt-get install chromium; .ci/run installs it)"
    ),
]


@pytest.fixture(scope="module")
def browser():
    with Chromium(CHROMIUM) as b:
        yield b


@pytest.mark.parametrize("page", RENDERED)
def test_page_renders_offline_without_errors(browser, built_report, page):
    path = built_report / page
    check = browser.check(path)
    assert check.problems() == []
    assert check.console_warnings == []  # Vega-Lite warns about misused encodings on the console
    expected_charts = path.read_text(encoding="utf-8").count("data-spec=")
    assert len(check.charts) == expected_charts
    assert all(c["status"] == "rendered" and c["marks"] > 0 for c in check.charts)
    assert check.render_s < RENDER_LIMIT_S


def test_hostile_names_show_as_text_and_run_nothing(browser, built_report):
    check = browser.check(built_report / "prices.html")
    assert check.dialogs == [] and check.ok
    assert browser.evaluate(f"document.body.innerText.includes({json.dumps(XSS_MODEL)})") is True
    assert browser.evaluate("document.querySelectorAll('img[src=\"x\"], script:not([src]):not([type])').length") == 0
    tooltip = browser.evaluate(
        TOOLTIP.replace("NAME", json.dumps(XSS_MODEL)).replace("PROVIDER", json.dumps(XSS_PROVIDER))
    )
    assert tooltip["injected"] == 0 and XSS_MODEL in tooltip["text"] and XSS_PROVIDER in tooltip["text"]
    assert browser.events("Page.javascriptDialogOpening", wait_s=0.3) == []  # the tooltip ran nothing either


TOOLTIP = """
(() => {
  const view = window.econViews['spec-prices-io-scatter'];
  const handler = view.tooltip();
  const event = new MouseEvent('mousemove', {clientX: 40, clientY: 40});
  handler.call(view, view, event, {}, {Model: NAME, Provider: PROVIDER});
  const tip = document.getElementById('vg-tooltip-element');
  return {text: tip ? tip.textContent : null, injected: tip ? tip.querySelectorAll('img, script').length : -1};
})()
"""

SORT = """
(() => {
  const table = document.getElementById('first-party-prices');
  const th = [...table.tHead.rows[0].cells].find(c => c.textContent.startsWith('Input (USD/MTok)'));
  const column = () => [...table.tBodies[0].rows].map(r => r.cells[th.cellIndex].textContent.trim());
  th.click(); const up = column();
  th.click(); const down = column();
  return {up, down, sort: th.getAttribute('aria-sort')};
})()
"""


def test_tables_sort_numerically_by_clicking_a_header(browser, built_report):
    browser.check(built_report / "prices.html")
    result = browser.evaluate(SORT)
    numbers = [float(v.replace(",", "")) for v in result["up"] if v]
    assert numbers == sorted(numbers) and len(numbers) >= 4
    assert [float(v.replace(",", "")) for v in result["down"] if v] == sorted(numbers, reverse=True)
    assert result["sort"] == "descending"


def test_the_checker_reports_errors_network_requests_and_dialogs(browser, tmp_path):
    """The harness itself: a page that misbehaves in every way is caught on every count."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!doctype html><html><head><script src='https://cdn.example.com/vega.js'></script>"
        "<script src='assets/missing.js'></script></head><body>"
        "<img src='http://example.com/x.png'><script>console.error('boom'); alert('hi');</script>"
        "<script>undefinedFunction();</script></body></html>",
        encoding="utf-8",
    )
    check = browser.check(page)
    assert "https://cdn.example.com/vega.js" in check.network and "http://example.com/x.png" in check.network
    assert check.console_errors == ["boom"]
    assert check.dialogs == ["alert: hi"]
    assert any("undefinedFunction" in e for e in check.exceptions)
    assert any("missing.js" in e for e in check.log_errors)  # a local file that is not there
    assert not check.ok


WIDTHS_PX = (1400, 390)  # a laptop and a phone (issue 17)

OVERFLOW = """
(() => {
  const main = document.querySelector('main');
  const style = getComputedStyle(main);
  const right = main.getBoundingClientRect().right - parseFloat(style.paddingRight) + 1;
  const scrolls = el => { for (let p = el.parentElement; p && p !== main; p = p.parentElement) {
    if (['auto', 'scroll'].includes(getComputedStyle(p).overflowX)) return true; } return false; };
  const bad = [];
  for (const el of main.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > right && !scrolls(el)) {
      bad.push(`${el.tagName.toLowerCase()}.${el.className} ends at ${Math.round(r.right)} px > ${Math.round(right)}`);
    }
  }
  if (document.documentElement.scrollWidth > window.innerWidth) bad.push('the page scrolls sideways');
  for (const svg of main.querySelectorAll('.vega svg.marks')) {
    const w = svg.getBoundingClientRect().width;
    if (w < 200) bad.push(`chart ${svg.closest('.vega').dataset.spec} is drawn ${Math.round(w)} px wide`);
  }
  return bad.slice(0, 8);
})()
"""


@pytest.mark.parametrize("width_px", WIDTHS_PX)
@pytest.mark.parametrize("page", RENDERED)
def test_nothing_overflows_its_column(browser, built_report, page, width_px):
    """At a laptop's and a phone's width every element fits its column, except inside a box that scrolls (a long
    table, a faceted chart), and that box fits; every chart is drawn with marks and the page logs no error."""
    check = browser.check(built_report / page, width_px=width_px)
    assert check.problems() == []
    assert all(c["status"] == "rendered" and c["marks"] > 0 for c in check.charts)
    assert browser.evaluate(OVERFLOW) == []


NUMBERS = """
[...document.querySelectorAll('li.finding')].map(li => ({
  table: li.dataset.table, column: li.dataset.column,
  evidence: li.querySelector('a.evidence').getAttribute('href'),
  numbers: [...li.querySelectorAll('span.num')].map(s => ({
    table: s.dataset.table, where: s.dataset.where, column: s.dataset.column, value: s.dataset.value,
    text: s.textContent}))}))
"""


def shown_number(text: str) -> tuple[float, float]:
    """The number a finding prints (``$0.601``, ``1.26×``, ``43%``, ``9,736``, ``12 ms``, ``22.7 µs``) and half a unit
    of its last printed digit: the stored value must round to what is printed."""
    import re

    digits = re.sub(r"[^0-9.eE+\-−]", "", text.split(" ")[0]).replace("−", "-")
    mantissa, _, exponent = digits.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    half = 0.5 * 10.0 ** (int(exponent or 0) - decimals)
    scale = 0.01 if text.endswith("%") else 0.001 if text.endswith(" ms") else 1e-6 if text.endswith(" µs") else 1.0
    return float(digits) * scale, half * scale * 1.000001


@pytest.mark.parametrize("page", RENDERED)
def test_every_findings_number_is_the_one_in_the_table_it_names(browser, built_report, built_db, page):
    import duckdb

    browser.check(built_report / page)
    findings = browser.evaluate(NUMBERS)
    if page != "index.html":
        assert 1 <= len(findings) <= 5, f"{page} opens with {len(findings)} findings"
    with duckdb.connect(str(built_db), read_only=True) as con:
        for f in findings:
            assert f["numbers"] and (f["table"], f["column"]) == (f["numbers"][0]["table"], f["numbers"][0]["column"])
            target = f["evidence"].split("#")
            assert (built_report / (target[0] or page)).read_text(encoding="utf-8").count(f'id="{target[1]}"') == 1
            for n in f["numbers"]:
                rows = con.sql(f'select "{n["column"]}" from "{n["table"]}" where {n["where"]}').fetchall()
                assert len(rows) == 1, n
                stored = rows[0][0]
                if hasattr(stored, "isoformat"):
                    assert n["value"] == stored.isoformat() == n["text"]
                    continue
                assert float(n["value"]) == pytest.approx(float(stored), rel=1e-12), n
                shown, half_unit = shown_number(n["text"])
                assert abs(shown - float(stored)) <= half_unit, n


TABLES_AND_CHARTS = """
(() => {
  const out = {clipped: [], tall: [], unfit: [], unpinned: [], charts: [], tables: 0, hidden: 0};
  const visible = el => getComputedStyle(el).display !== 'none';
  for (const wrap of document.querySelectorAll('.table-wrap')) {
    const table = wrap.querySelector('table.data');
    if (!table || !wrap.getClientRects().length) continue;  // inside a closed <details>
    out.tables += 1;
    out.hidden += Number(table.getAttribute('data-hidden-columns') || 0);
    const overflows = wrap.scrollWidth > wrap.clientWidth + 1;
    if (overflows) {
      out.unfit.push(table.id);
      const key = table.querySelector('tbody td.key');
      if (!key || getComputedStyle(key).position !== 'sticky') out.unpinned.push(table.id);
    }
    for (const row of table.rows) {
      let need = 0;
      for (const cell of row.cells) {
        if (!visible(cell)) continue;
        const style = getComputedStyle(cell);
        if (cell.scrollWidth > cell.clientWidth + 1) out.clipped.push(`${table.id}: ${cell.textContent.slice(0, 40)}`);
        const range = document.createRange();
        range.selectNodeContents(cell);
        const lines = new Set([...range.getClientRects()].filter(r => r.height > 0).map(r => Math.round(r.top))).size;
        const content = lines * parseFloat(style.lineHeight);  // lines of text, each a line-height tall
        need = Math.max(need, content + parseFloat(style.paddingTop) + parseFloat(style.paddingBottom)
                              + parseFloat(style.borderBottomWidth) + parseFloat(style.borderTopWidth));
      }
      const height = row.getBoundingClientRect().height;
      if (height > need + 3) out.tall.push(`${table.id}: ${Math.round(height)} px for ${Math.round(need)} px`);
    }
  }
  for (const el of document.querySelectorAll('figure.chart .vega')) {
    const svg = el.querySelector('svg.marks');
    if (svg && svg.getBoundingClientRect().width > el.clientWidth + 2) {
      out.charts.push(`${el.dataset.spec}: ${Math.round(svg.getBoundingClientRect().width)} px in ${el.clientWidth}`);
    }
  }
  out.clipped = out.clipped.slice(0, 5); out.tall = out.tall.slice(0, 5);
  return out;
})()
"""


@pytest.mark.parametrize("width_px", WIDTHS_PX)
@pytest.mark.parametrize("page", RENDERED)
def test_tables_and_charts_fit_and_rows_are_as_tall_as_their_content(browser, built_report, page, width_px):
    """Issue 26: wide tables were cut at the right edge of their box, rows were 100-170 px tall for one line of
    visible text (a wrapped cell out of view), and faceted charts lost their last column. Now no cell's text is cut,
    no row is taller than its tallest visible cell needs, no chart is wider than its column, and every table fits
    its column at a laptop's width; on a phone one that still does not fit scrolls with its key column pinned."""
    check = browser.check(built_report / page, width_px=width_px)
    assert check.problems() == []
    found = browser.evaluate(TABLES_AND_CHARTS)
    assert (found["clipped"], found["tall"], found["charts"], found["unpinned"]) == ([], [], [], [])
    if width_px >= 1000:
        assert found["unfit"] == []


def test_print_keeps_every_column(browser, built_report):
    """The print style sheet shows the columns the narrow view hid, unpinned, and the page prints to PDF."""
    browser.check(built_report / "serving.html", width_px=1400)
    hidden = browser.evaluate("document.querySelectorAll('table.data .col-hidden').length")
    assert hidden > 0  # the screen view hid some (the serving summary is wide)
    browser.call("Emulation.setEmulatedMedia", {"media": "print"}, session=True)
    try:
        shown = browser.evaluate(
            "[...document.querySelectorAll('table.data .col-hidden')].filter(c => getComputedStyle(c).display "
            "!== 'none' && getComputedStyle(c).position === 'static').length"
        )
        assert shown == hidden
    finally:
        browser.call("Emulation.setEmulatedMedia", {"media": ""}, session=True)
    pdf = browser.call("Page.printToPDF", {"printBackground": True}, session=True, timeout_s=60)
    assert len(pdf["data"]) > 10_000
