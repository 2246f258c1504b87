"""The static site: ``build_site`` (called by ``econ build``) and ``write_report`` (``econ report``).

The site is one HTML page per analysis plus an index and a Sources page, written from the
database's tables and views only (the report knows no physics). A page whose tables are
missing or empty is skipped and the index says why. Every chart is inline Vega-Lite
rendered by ``assets/vega.js`` (written once, no network), with its data as CSV in a folder
named after the page; SVG and PNG come from each chart's export menu in the reader's browser.

Output is deterministic: the same database gives byte-identical files (no clock times;
the date printed is ``SOURCE_DATE_EPOCH`` when set, else the build's ``as_of``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import duckdb

from econ.db import connect_read_only
from econ.errors import ReportError
from econ.files import source_date
from econ.fingerprint import code_fingerprint
from econ.progress import step
from econ.report import assets
from econ.report.downloads import inline_csv, utc_times, write_csv
from econ.report.figures import Figure
from econ.report.html import Markup, NavItem, esc, join, json_for_script, page_shell, tag
from econ.report.page import Download, PageContent, SiteContext, anchor, findings_html, first_value
from econ.report.pages import SITE
from econ.report.pages import index as index_page
from econ.report.reuse import PageCache, Recorder
from econ.uptodate import library_versions

SITE_TITLE = "LLM economics"


@dataclass
class PageStatus:
    """A page of the site and whether this report has it."""

    name: str
    title: str
    summary: str
    rendered: bool
    reason: str = ""  # why it was skipped


@dataclass
class SiteResult:
    out_dir: Path
    pages: dict[str, int] = field(default_factory=dict)  # file name -> bytes
    skipped: dict[str, str] = field(default_factory=dict)  # page -> reason
    reused: list[str] = field(default_factory=list)  # pages copied from the cache, not drawn (econ.report.reuse)
    figures: int = 0
    timings_s: dict[str, float] = field(default_factory=dict)


def generated_on(as_of: date) -> date:
    """The report's printed date: ``SOURCE_DATE_EPOCH`` (UTC) when set, else ``as_of``."""
    return source_date() or as_of


def build_site(
    con: duckdb.DuckDBPyConnection,
    out_dir: Path,
    *,
    as_of: date,
    scenario: str = "base",
    cache_dir: Path | None = None,
    versions: dict[str, str] | None = None,
) -> SiteResult:
    """Write the whole site into ``out_dir`` (replaced) from the database behind ``con``.

    Parameters
    ----------
    con
        Connection to the database (read only here); ``price_current`` must see ``as_of``.
    out_dir
        Folder to write (removed first; removed again if anything fails, so a failed report
        leaves no half-written folder).
    as_of
        Date of "current" prices, printed on every page.
    scenario
        Scenario the headline figures refer to.
    cache_dir
        The build cache: a page whose reads did not change since it was stored there is reused, not drawn
        (``econ.report.reuse``); None draws every page.
    versions
        A version of some relations that stands for their contents (the build gives each result table its
        analysis's key); the others are hashed when a page read them.
    """
    out_dir = Path(out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    try:
        return _build(con, out_dir, as_of=as_of, scenario=scenario, cache_dir=cache_dir, versions=versions or {})
    except BaseException:
        shutil.rmtree(out_dir, ignore_errors=True)
        raise


@dataclass
class _Page:
    """A page of this site: drawn now (``content``) or reused from the cache (``body``)."""

    title: str
    findings: list
    content: PageContent | None = None
    body: Markup | None = None
    figures: int = 0
    recorder: Recorder | None = None


def _build(con, out_dir: Path, *, as_of: date, scenario: str, cache_dir: Path | None, versions) -> SiteResult:
    result = SiteResult(out_dir)
    clock = time.perf_counter()
    con.complete()  # finish any result the caller left open on this connection
    ctx = SiteContext(con=con, as_of=as_of, generated_on=generated_on(as_of), scenario=scenario)
    cache = None if cache_dir is None else _page_cache(Path(cache_dir), ctx, versions)

    pages: dict[str, _Page] = {}
    statuses: list[PageStatus] = []
    for done, entry in enumerate(SITE):
        step("report", entry.NAME, done, len(SITE))
        missing = ctx.missing(entry.REQUIRES)
        if missing:
            statuses.append(PageStatus(entry.NAME, entry.TITLE, entry.SUMMARY, False, f"needs {', '.join(missing)}"))
            continue
        statuses.append(PageStatus(entry.NAME, entry.TITLE, entry.SUMMARY, True))
        stored = cache.load(entry.NAME, out_dir) if cache is not None else None
        if stored is not None:
            title, body, findings, figures = stored
            pages[entry.NAME] = _Page(title, findings, body=body, figures=figures)
            result.reused.append(entry.NAME)
            continue
        recorder = Recorder(con) if cache is not None else None
        content = entry.render(ctx if recorder is None else dataclasses.replace(ctx, con=recorder))
        content.findings = [dataclasses.replace(f, page=entry.NAME) for f in content.findings]
        pages[entry.NAME] = _Page(content.title, content.findings, content=content, recorder=recorder)
    findings = {name: (page.title, page.findings) for name, page in pages.items()}
    index = index_page.render(ctx, statuses, findings)
    pages = {index_page.NAME: _Page(index.title, index.findings, content=index)} | pages
    result.skipped = {s.name: s.reason for s in statuses if not s.rendered}
    result.timings_s["query_s"] = time.perf_counter() - clock

    nav = [NavItem(name, page.title if name != index_page.NAME else "Overview") for name, page in pages.items()]
    footer = _footer(ctx)
    clock = time.perf_counter()
    for name, page in pages.items():
        if page.content is not None:
            page.figures = len([b for s in page.content.sections for b in s.blocks if isinstance(b, Figure)])
            _write_figure_data(out_dir, name, page.content)
            page.body = _body(name, page.content, out_dir)
        html = page_shell(
            title=page.title,
            site_title=SITE_TITLE,
            nav=nav,
            current=name,
            body=page.body,
            footer=footer,
            charts=bool(page.figures),
        )
        data = html.encode("utf-8")
        (out_dir / f"{name}.html").write_bytes(data)
        result.pages[f"{name}.html"] = len(data)
        result.figures += page.figures
        reads = page.recorder.reads() if page.recorder is not None else None
        if cache is not None and reads is not None:
            cache.store(
                name, reads, out_dir, title=page.title, body=page.body, findings=page.findings, figures=page.figures
            )
    result.timings_s["pages_s"] = time.perf_counter() - clock
    clock = time.perf_counter()
    assets.write_assets(out_dir / "assets")
    result.timings_s["assets_s"] = time.perf_counter() - clock
    return result


def _page_cache(cache_dir: Path, ctx: SiteContext, versions: dict[str, str]) -> PageCache:
    """The stored pages, keyed by this report's stamp: the code, the dates and scenario it prints, the versions of
    the libraries that draw it and every object's name, kind and comment (a page may list them)."""
    parts = [
        code_fingerprint(),
        ctx.as_of.isoformat(),
        ctx.generated_on.isoformat(),
        ctx.scenario,
        library_versions(),
        json.dumps([ctx.objects, ctx.comments], sort_keys=True),
    ]
    stamp = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    return PageCache(cache_dir / "pages", ctx.con, stamp=stamp, versions=versions)


def _check_unique(page: str, slugs: list[str]) -> None:
    seen = set()
    for slug in slugs:
        if slug in seen:
            raise ReportError(f"page {page}: two figures or downloads are named {slug!r}", "give each a unique slug")
        seen.add(slug)


def _body(page: str, content: PageContent, out_dir: Path) -> Markup:
    parts = [tag("h1", content.title), tag("p", content.lead, class_="lead")]
    if content.findings:
        parts.append(findings_html(content.findings))
    anchors = [section.anchor or anchor(section.heading) for section in content.sections]
    if len(content.sections) > 1:
        links = join(
            tag("li", tag("a", s.heading, href=f"#{a}")) for s, a in zip(content.sections, anchors, strict=True)
        )
        parts.append(Markup('<nav class="toc" aria-label="On this page"><strong>On this page</strong><ol>'))
        parts.append(links + Markup("</ol></nav>"))
    for section, section_id in zip(content.sections, anchors, strict=True):
        parts.append(tag("h2", section.heading, id=section_id))
        if section.intro:
            parts.append(tag("p", section.intro))
        for block in section.blocks:
            if isinstance(block, Figure):
                parts.append(figure_html(page, block))
            elif isinstance(block, Download):
                parts.append(_download(page, block, out_dir))
            else:
                parts.append(esc(block))
    return Markup("\n".join(parts))


def figure_html(page: str, figure: Figure) -> Markup:
    """The ``<figure>``: chart container, inline spec, caption with formula, source and downloads."""
    chart_id = f"spec-{page}-{figure.slug}"
    base = f"{page}/{figure.slug}"
    downloads = join(
        [
            tag("a", "data (CSV, gzip)", href=f"{base}.csv.gz", download=True),
            Markup(" · SVG or PNG: the chart's ⋯ menu"),
        ]
    )
    caption = join(
        [
            tag("p", figure.caption),
            tag("p", Markup(tag("strong", "Formula: ") + esc(figure.formula)), class_="formula-line"),
            tag("p", Markup(tag("strong", "Data: ") + esc(figure.source))),
            tag("p", Markup("Download: " + downloads), class_="downloads"),
        ]
    )
    return Markup(
        f'<figure class="chart" id="fig-{esc(page)}-{esc(figure.slug)}">'
        f'<div class="vega" data-spec="{esc(chart_id)}" role="img" aria-label="{esc(figure.title)}"></div>'
        f'<script type="application/json" id="{esc(chart_id)}">'
        f"{json_for_script(inline_csv(utc_times(figure.spec)))}</script>"
        f"<noscript>{esc('The chart needs JavaScript; its data is in ' + base + '.csv.gz.')}</noscript>"
        f"<figcaption>{caption}</figcaption></figure>"
    )


def _download(page: str, block: Download, out_dir: Path) -> Markup:
    folder = out_dir / page
    folder.mkdir(parents=True, exist_ok=True)
    write_csv(block.frame, folder / f"{block.slug}.csv.gz", compress=True)
    rows = f"{block.frame.height:,} row{'s' if block.frame.height != 1 else ''}"
    link = tag("a", block.label, href=f"{page}/{block.slug}.csv.gz", download=True)
    return tag("p", Markup(f"{link} (CSV, gzip, {rows})"), class_="downloads")


def _write_figure_data(out_dir: Path, page: str, content: PageContent) -> None:
    """Write each figure's CSV beside the page (after checking slugs are unique)."""
    figures = [b for s in content.sections for b in s.blocks if isinstance(b, Figure)]
    _check_unique(
        page,
        [f.slug for f in figures] + [b.slug for s in content.sections for b in s.blocks if isinstance(b, Download)],
    )
    if figures:
        folder = out_dir / page
        folder.mkdir(parents=True, exist_ok=True)
        for figure in figures:
            write_csv(figure.data, folder / f"{figure.slug}.csv.gz", compress=True)


def _footer(ctx: SiteContext) -> Markup:
    parts = [
        f"Prices as of {ctx.as_of.isoformat()}",
        f"scenario {ctx.scenario}",
        f"generated {ctx.generated_on.isoformat()}",
    ]
    return Markup(
        esc(" · ".join(parts))
        + Markup(" · ")
        + tag("a", "sources and formulas", href="sources.html")
        + Markup(
            ". Built with econ from public price tables, datasheets and open model configs; "
            "the math follows Reiner Pope's lecture."
        )
    )


# ---------------------------------------------------------------------------- econ report


def write_report(
    db_path: Path,
    out_dir: Path,
    *,
    as_of: date | None = None,
    scenario: str = "base",
    cache_dir: Path | None = None,
) -> Path:
    """Write the site from a built database (opened read-only) into ``out_dir``, reusing the pages stored in
    ``cache_dir`` whose reads did not change.

    The database must have been built by this code; ``as_of`` defaults to the date it was
    built for (``build_info``), so the same file always gives the same report. ``econ report``
    (``econ.build.report``) writes to a staging folder and swaps it in with the database's
    journal. Returns the path of ``index.html``.
    """
    out_dir = Path(out_dir)
    with connect_read_only(Path(db_path), current=True) as con:
        as_of = as_of or stored_as_of(con)
        con.sql(f"set variable as_of = date '{as_of.isoformat()}'")
        build_site(con, out_dir, as_of=as_of, scenario=scenario, cache_dir=cache_dir)
    return out_dir / "index.html"


def stored_as_of(con: duckdb.DuckDBPyConnection) -> date:
    """The as-of date the database was built for (``build_info``)."""
    return first_value(con, "select as_of from build_info")
