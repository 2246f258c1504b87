"""The site: pages and chart data exist, deterministic, escaped, offline, small, atomic, and degrading gracefully."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
from datetime import date
from html import escape as html_escape
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import polars as pl
import pytest

from econ.build import report
from econ.errors import EconError, ReportError
from econ.outputs import write_marker
from econ.report import site
from econ.report.pages import SITE

from .conftest import (
    AMPERSAND_MODEL,
    AS_OF,
    GENERATED_ON,
    SOURCE_DATE_EPOCH,
    XSS_MODEL,
    XSS_PROVIDER,
    XSS_URL,
    build_report,
)

PAGE_LIMIT_BYTES = 300_000
RENDERED = [
    "context-pricing.html",
    "fast-mode.html",
    "fleet.html",
    "index.html",
    "inferences.html",
    "io-cache.html",
    "prices.html",
    "serving.html",
    "sources.html",
    "training.html",
    "validation.html",
    "what-changed.html",
]


def tree(folder: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``folder``."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


class Refs(HTMLParser):
    """Every tag with its attributes, and the text of inline JSON scripts."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.json: list[str] = []
        self._in_json = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        self._in_json = tag == "script" and attrs.get("type") == "application/json"

    def handle_endtag(self, tag):
        self._in_json = False

    def handle_data(self, data):
        if self._in_json:
            self.json.append(data)


def inline_datasets(spec) -> list[list]:
    """Every inline data set of a Vega-Lite spec (top-level ``datasets`` and ``data.values`` at any depth)."""
    found = []
    if isinstance(spec, dict):
        found += [v if isinstance(v, list) else v.splitlines()[1:] for v in (spec.get("datasets") or {}).values()]
        data = spec.get("data")
        if isinstance(data, dict) and isinstance(data.get("values"), list):
            found.append(data["values"])
        for value in spec.values():
            found += inline_datasets(value) if isinstance(value, (dict, list)) else []
    elif isinstance(spec, list):
        for item in spec:
            found += inline_datasets(item)
    return found


def parse(path: Path) -> Refs:
    refs = Refs()
    refs.feed(path.read_text(encoding="utf-8"))
    return refs


def test_pages_assets_and_chart_data_exist(built_report):
    files = tree(built_report)
    for name in RENDERED + ["assets/vega.js", "assets/econ.js", "assets/econ.css"]:
        assert name in files, name
    assert [p for p in files if p.endswith(".html")] == RENDERED  # planned pages are not written
    assert [p for p in files if p.endswith(".js")] == ["assets/econ.js", "assets/vega.js"]  # the bundle exactly once
    assert not [p for p in files if p.endswith((".svg", ".png"))]  # images are made in the browser, on request
    figures = sorted(
        f"{page.removesuffix('.html')}/{spec.removeprefix('spec-' + page.removesuffix('.html') + '-')}"
        for page in RENDERED
        for spec in re.findall(r'data-spec="([^"]+)"', (built_report / page).read_text(encoding="utf-8"))
    )
    families = [f for f in figures if f.startswith("what-changed/family-")]  # one per family whose price moved
    assert "what-changed/family-gpt" in families
    assert [f for f in figures if f not in families] == [
        "context-pricing/implied-kv",
        "context-pricing/tier-prices",
        "fast-mode/fast-multiples",
        "fleet/cost-breakdown",
        "fleet/fleet-split",
        "fleet/frontier",
        "fleet/frontier-cost",
        "fleet/margins",
        "io-cache/cache-hold",
        "io-cache/io-batch",
        "io-cache/io-market",
        "io-cache/tier-costs",
        "prices/changes",
        "prices/first-party-history",
        "prices/io-ratio",
        "prices/io-scatter",
        "serving/attention-crossover",
        "serving/balance-drain",
        "serving/cost-vs-batch",
        "serving/frontier-by-chip",
        "serving/latency-vs-batch",
        "serving/memory-fit",
        "serving/small-batch-bytes",
        "serving/step-terms",
        "training/compute-optimal",
        "training/isoflop",
        "training/overtraining",
        "training/sardana",
        "training/tornado",
        "validation/predicted-vs-measured",
        "validation/runs-predicted-vs-measured",
        "what-changed/changes-over-time",
    ]
    for base in figures:
        assert f"{base}.csv.gz" in files


def test_every_figure_links_its_csv_and_the_csv_holds_the_charted_rows(built_report):
    refs = parse(built_report / "prices.html")
    hrefs = {a.get("href") for tag, a in refs.tags if tag == "a"}
    specs = {
        a["id"].removeprefix("spec-prices-"): None
        for tag, a in refs.tags
        if tag == "script" and a.get("type") == "application/json"
    }
    assert specs, "the prices page has charts"
    for slug, text in zip(specs, refs.json):
        assert f"prices/{slug}.csv.gz" in hrefs
        inline = inline_datasets(json.loads(text))
        csv_rows = pl.read_csv(built_report / "prices" / f"{slug}.csv.gz").height
        assert csv_rows in [len(d) for d in inline], slug  # the CSV is exactly one of the inline data sets


def test_build_is_byte_identical_with_a_cold_bundle(report_data, built_report, tmp_path):
    """Same inputs, a second database and a freshly made Vega bundle: every file is byte-identical."""
    _, again = build_report(report_data, tmp_path, cache_dir=tmp_path / "fresh-cache")
    assert tree(again) == tree(built_report)


def test_printed_date_is_source_date_epoch_else_as_of(built_report, monkeypatch):
    footer = re.search(r'<footer class="site">(.*?)</footer>', (built_report / "index.html").read_text()).group(1)
    assert f"Prices as of {AS_OF.isoformat()}" in footer and f"generated {GENERATED_ON}" in footer
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    assert site.generated_on(AS_OF) == AS_OF
    monkeypatch.setenv("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
    assert site.generated_on(AS_OF) == date.fromisoformat(GENERATED_ON)


def test_bad_source_date_epoch_is_refused(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(EconError) as err:
        site.generated_on(AS_OF)
    assert str(err.value) == (
        "SOURCE_DATE_EPOCH='yesterday' is not a Unix time — set it to whole seconds since 1970-01-01 UTC (before the "
        "year 10000), or unset it"
    )


@pytest.mark.parametrize("page", RENDERED)
def test_hostile_names_never_appear_as_markup(built_report, page):
    html = (built_report / page).read_text(encoding="utf-8")
    for raw in (XSS_MODEL, XSS_PROVIDER, "\u2028", "\u2029"):
        assert raw not in html
    assert "javascript:" not in " ".join(a.get("href", "") for _, a in parse(built_report / page).tags)
    assert len(re.findall(r"<script\b", html)) == len(re.findall(r"</script>", html))


def test_hostile_names_show_escaped_in_tables_and_intact_in_chart_data(built_report):
    html = (built_report / "prices.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "evil&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert "<td>javascript:alert(3)</td>" in html  # shown as text, never a link
    values = json.dumps([json.loads(t) for t in parse(built_report / "prices.html").json])
    assert json.dumps(XSS_MODEL)[1:-1] in values  # the chart shows the real name (Vega draws it as text)
    assert json.dumps(AMPERSAND_MODEL)[1:-1] in values
    assert XSS_URL in gzip.decompress((built_report / "prices" / "current-prices.csv.gz").read_bytes()).decode()


@pytest.mark.parametrize("page", RENDERED)
def test_pages_reference_nothing_online(built_report, page):
    """Scripts, styles, images and frames load from the report folder; only plain links may leave it."""
    for tag, attrs in parse(built_report / page).tags:
        for attr in ("src", "href", "data", "srcset", "action", "poster"):
            value = (attrs.get(attr) or "").strip().lower()
            if not value or (tag == "a" and attr == "href"):
                continue
            assert not value.startswith(("http:", "https:", "//", "ws:", "wss:")), (tag, attrs)
    html = (built_report / page).read_text(encoding="utf-8")
    assert "@import" not in html and "url(http" not in html


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Balance(HTMLParser):
    """Checks that every element is closed, in order (an escaped closing tag would leave one open)."""

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()


@pytest.mark.parametrize("page", RENDERED)
def test_pages_are_well_formed(built_report, page):
    checker = Balance()
    checker.feed((built_report / page).read_text(encoding="utf-8"))
    assert checker.errors == [] and checker.stack == []


@pytest.mark.parametrize("page", RENDERED)
def test_pages_are_small(built_report, page):
    assert (built_report / page).stat().st_size < PAGE_LIMIT_BYTES


@pytest.mark.slow
def test_the_shipped_datas_pages_are_small(real_db, tmp_path, monkeypatch):
    """The report of the shipped data (thousands of validation and history rows, not the fixture's dozens) keeps every
    page under the limit: long tables show their first-party or newest rows and link the whole CSV."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
    db = shutil.copy(real_db, tmp_path / "econ.duckdb")  # econ report locks and journals beside its database
    reports = report(db, tmp_path / "reports", as_of=AS_OF, cache_dir=None).parent
    sizes = {p.name: p.stat().st_size for p in reports.glob("*.html")}
    assert sorted(sizes) == sorted(RENDERED)
    assert {n: b for n, b in sizes.items() if b >= PAGE_LIMIT_BYTES} == {}


@pytest.mark.parametrize("page", RENDERED)
def test_no_section_fell_back_to_a_schema_note(built_report, page):
    """guarded() turns a missing column into a note; on the full data set that can only be a bug in the page's SQL."""
    from econ.report.pages.common import UNDRAWABLE

    assert UNDRAWABLE not in (built_report / page).read_text(encoding="utf-8")


def test_index_lists_every_page(built_report):
    html = (built_report / "index.html").read_text(encoding="utf-8")
    for page in SITE:
        assert f'<a href="{page.NAME}.html">{html_escape(page.TITLE)}</a>' in html
    assert "not in this report" not in html  # every page of this version is in the report


def test_failed_report_leaves_previous_reports_untouched(
    report_data, built_report, built_db, tmp_path, monkeypatch, asset_cache
):
    import shutil

    shutil.copy(built_db, tmp_path / "econ.duckdb")  # the previous build (the session's, byte-identical to a rebuild)
    reports = shutil.copytree(built_report, tmp_path / "reports")
    before = tree(reports)
    from econ.report.pages import prices

    def broken(ctx):
        raise RuntimeError("page failed")

    monkeypatch.setattr(prices, "render", broken)
    with pytest.raises(RuntimeError, match="page failed"):
        build_report(report_data, tmp_path, cache_dir=asset_cache)
    assert tree(reports) == before
    left = [".econ.duckdb.lock", ".reports.lock", "econ.duckdb", "reports"]  # nothing staged; the lock files stay
    assert sorted(p.name for p in tmp_path.iterdir()) == left

    with pytest.raises(RuntimeError, match="page failed"):
        report(tmp_path / "econ.duckdb", reports, as_of=AS_OF)
    assert tree(reports) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == left


def test_econ_report_reads_the_database_read_only_and_swaps_in(built_db, built_report, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
    db_before = hashlib.sha256(built_db.read_bytes()).hexdigest()
    target = tmp_path / "out"
    (target / "stale").mkdir(parents=True)
    write_marker(target)  # an older report of econ's: replaced whole
    index = report(built_db, target, as_of=AS_OF)
    assert index == target / "index.html"
    assert hashlib.sha256(built_db.read_bytes()).hexdigest() == db_before
    assert tree(target) == tree(built_report)  # the same site as econ build wrote, the stale folder is gone
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.lock", "out"]


def test_write_report_defaults_as_of_to_the_builds_date(built_db, tmp_path):
    import os
    import shutil

    old_file = 1_700_000_000  # 2023-11-14: the file's date must not matter
    built = shutil.copy(built_db, tmp_path / "built.duckdb")
    os.utime(built, (old_file, old_file))
    with duckdb.connect(str(built), read_only=True) as con:
        assert site.stored_as_of(con) == AS_OF  # build_info records the build's as-of date


def test_write_report_refuses_a_database_built_by_other_code(tmp_path):
    bare = tmp_path / "bare.duckdb"
    duckdb.connect(str(bare)).close()  # no build_info: not built by this econ
    with pytest.raises(EconError) as err:
        site.write_report(bare, tmp_path / "out")
    assert str(err.value) == f"{bare} was built by another version of econ — run econ build to rebuild it with this one"
    assert not (tmp_path / "out").exists()


def test_a_database_without_prices_still_gets_an_index_that_says_why(tmp_path):
    con = duckdb.connect()
    con.sql(
        "create table scenarios as select 'base' as scenario, 'gpu_usd_per_hour' as name, 2.0 as value, "
        "null::varchar as text, 'USD/GPU-hour' as unit, 1.5 as low, 4.0 as high, null::varchar as alternatives, "
        "'lecture' as rationale, 'https://www.dwarkesh.com/p/reiner-pope' as source_url"
    )
    result = site.build_site(con, tmp_path / "r", as_of=AS_OF)
    assert sorted(result.pages) == ["index.html"]
    assert result.skipped["prices"] == (
        "needs prices (missing), price_current (missing), price_history (missing), io_price_ratio (missing), "
        "billing_example_bills (missing)"
    )
    html = (tmp_path / "r" / "index.html").read_text()
    assert "<strong>Prices</strong> — not in this report: needs prices (missing)" in html
    assert "gpu_usd_per_hour" in html  # the scenario is still shown
    assert 'src="assets/vega.js"' not in html  # no charts, no bundle needed on the page


def test_two_figures_with_one_slug_are_refused():
    with pytest.raises(ReportError, match="page p: two figures or downloads are named 'a'"):
        site._check_unique("p", ["a", "b", "a"])


def test_econ_report_command_prints_the_index_path(built_db, tmp_path, capsys, monkeypatch):
    from econ.cli import main

    monkeypatch.setenv("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
    assert main(["report", "--db", str(built_db), "--reports", str(tmp_path / "site")]) == 0
    pages = len(list((tmp_path / "site").glob("*.html")))
    assert (
        capsys.readouterr().out == f"report: {tmp_path / 'site' / 'index.html'} ({pages} pages); open it in a browser\n"
    )
    assert (tmp_path / "site" / "prices.html").exists()


def test_econ_report_without_a_database_says_what_to_do(tmp_path, capsys):
    from econ.cli import main

    assert main(["report", "--db", str(tmp_path / "none.duckdb"), "--reports", str(tmp_path / "site")]) == 1
    assert (
        capsys.readouterr().err
        == f"Error: no database at {tmp_path / 'none.duckdb'} — run econ build first (or pass --db)\n"
    )
    assert not (tmp_path / "site").exists()
