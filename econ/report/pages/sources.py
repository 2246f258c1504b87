"""Sources page: where every input table's rows come from, the scenarios with their rationale, the formulas.

Provenance travels with the data (DESIGN convention 4): every row of an input table
carries a ``source_url``; this page lists them per table with row counts and the dates the
rows carry (the ``data_sources`` view), every table and view of the database with its
description, every scenario assumption with its range, rationale and source, and every
formula with the lecture section it comes from.
"""

from __future__ import annotations

import polars as pl

from econ.db.objects import row_counts_sql
from econ.report import findings
from econ.report.html import Col, Markup, fmt_num, source_link, table, tag
from econ.report.page import Download, PageContent, Section, SiteContext, note

NAME = "sources"
TITLE = "Sources"
SUMMARY = (
    "Every data table's sources and dates, the scenarios with their rationale, and the formulas with their "
    "lecture sections."
)
REQUIRES = ("data_sources",)
LECTURE_URL = "https://www.dwarkesh.com/p/reiner-pope"

TOP_SOURCES = 12  # per table and origin; the full list is the CSV download

SUMMARY_SQL = """
select table_name, origin, count(*) as sources, sum(row_count) as row_count, min(first_date) as first_date,
       max(last_date) as last_date, any_value(date_column) as date_column
from data_sources group by table_name, origin order by table_name, origin
"""

TOP_SQL = f"""
select table_name, origin, source_url, row_count, first_date, last_date
from (
    select *, row_number() over (partition by table_name, origin order by row_count desc, source_url) as rank
    from data_sources
)
where rank <= {TOP_SOURCES}
order by table_name, origin, rank
"""


def render(ctx: SiteContext) -> PageContent:
    sections = [_data_sources(ctx), _tables(ctx)]
    if ctx.has("scenarios"):
        sections.append(_scenarios(ctx))
    sections.append(_formulas(ctx))
    return PageContent(
        title=TITLE,
        lead="Where every number in this report comes from: the sources of each input table with their dates, the "
        "stated assumptions, and the formulas with the section of the lecture each one comes from.",
        sections=sections,
        findings=findings.sources(ctx),
    )


def _data_sources(ctx: SiteContext) -> Section:
    summary = ctx.query(SUMMARY_SQL)
    top = ctx.query(TOP_SQL)
    blocks = [
        table(
            summary,
            [
                Col("table_name", "Table"),
                Col("origin", "Origin"),
                Col("sources", "Distinct sources", kind="num"),
                Col("row_count", "Rows", kind="num"),
                Col("date_column", "Dates from column"),
                Col("first_date", "Earliest", kind="date"),
                Col("last_date", "Latest", kind="date"),
            ],
            caption="Rows and sources per input table (origin hand = kept by hand in data/*.csv; litellm, openrouter = "
            "imported price maps in data/snapshots/; vendored = a third-party file kept unmodified in data/; derived = "
            "written from a third-party repository's history by a script in scripts/)",
            id="source-summary",
        ),
        table(
            top,
            [
                Col("table_name", "Table"),
                Col("origin", "Origin"),
                Col("source_url", "Source", kind="link"),
                Col("row_count", "Rows", kind="num"),
                Col("first_date", "Earliest", kind="date"),
                Col("last_date", "Latest", kind="date"),
            ],
            caption=f"Sources of each table, most rows first (at most {TOP_SOURCES} per table and origin; every source "
            "is in the CSV)",
            id="sources",
        ),
        Download(
            "data-sources",
            ctx.query("select * from data_sources order by table_name, origin, row_count desc, source_url"),
            "Every source of every input table",
        ),
    ]
    return Section("Data sources", blocks)


def _tables(ctx: SiteContext) -> Section:
    shown = sorted(ctx.objects.items(), key=lambda kv: (kv[1], kv[0]))
    counts = dict(ctx.query(row_counts_sql([name for name, _ in shown])).iter_rows()) if shown else {}
    rows = [
        {"name": name, "kind": kind, "row_count": counts[name], "description": ctx.description(name)}
        for name, kind in shown
    ]
    frame = pl.DataFrame(
        rows, schema={"name": pl.String, "kind": pl.String, "row_count": pl.Int64, "description": pl.String}
    )
    return Section(
        "Tables and views",
        [
            table(
                frame,
                [
                    Col("name", "Name"),
                    Col("kind", "Kind"),
                    Col("row_count", "Rows", kind="num"),
                    Col("description", "Description and grain", wrap=True),
                ],
                caption="Everything in the database this report was built from (query it with econ sql)",
                id="tables",
            ),
        ],
    )


def _scenarios(ctx: SiteContext) -> Section:
    frame = ctx.query("""
        select scenario, name, coalesce(text, '') as text, value, unit, low, high, coalesce(alternatives, '') as
        alternatives,
               rationale, source_url
        from scenarios order by scenario <> 'base', scenario, name
    """)
    shown = []
    for r in frame.iter_rows(named=True):  # the value, its range and unit in one cell: the rationale gets the width
        value = r["text"] or fmt_num(r["value"])
        if r["low"] is not None and r["high"] is not None:
            value += f" ({fmt_num(r['low'])}–{fmt_num(r['high'])})"
        if r["alternatives"]:
            value += f"; or {r['alternatives'].replace('|', ', ')}"
        shown.append(f"{value} {r['unit'] or ''}".strip())
    frame = frame.with_columns(pl.Series("shown", shown, dtype=pl.String))
    if frame.is_empty():
        return Section("Scenarios", [note("The scenarios table is empty.", kind="pending")])
    return Section(
        "Scenarios",
        [
            table(
                frame,
                [
                    Col("scenario", "Scenario"),
                    Col("name", "Assumption"),
                    Col("shown", "Value (low–high), unit", wrap=True),
                    Col("rationale", "Rationale", wrap=True),
                    Col("source_url", "Source", kind="link"),
                ],
                caption="Stated assumptions; scenario base is the lecture's, other scenarios override some of its "
                "values",
                id="scenarios",
            ),
        ],
        intro=f"Headline figures in this report use scenario {ctx.scenario}. Intervals from the scenario's low/high "
        "ranges are labelled as such wherever they appear.",
    )


def _formulas(ctx: SiteContext) -> Section:
    frame = ctx.query("select function, formula, source, used_in from formulas order by function").with_columns(
        pl.col("used_in").str.replace_all(", ", " · ")
    )
    intro = Markup(
        tag(
            "p",
            Markup(
                "Every formula the code computes, written once next to the function that computes it (the same "
                "text as the database's column comments and docs/formulas.md). Lecture sections refer to Reiner "
                "Pope's lecture “The math behind how LLMs are trained and served” (2026-04-29, "
            )
            + source_link(LECTURE_URL, "episode page")
            + Markup(")."),
        )
    )
    return Section(
        "Formulas",
        [
            intro,
            table(
                frame,
                [
                    Col("function", "Function"),  # the key: the function each formula is written beside
                    Col("formula", "Formula", wrap=True),
                    Col("source", "Source", wrap=True),
                    Col("used_in", "Result columns", wrap=True),
                ],
                caption="Symbols: B batch (sequences), L context (tokens), N_tot / N_act total / active parameters, "
                "b_w bytes per weight, b_kv KV-cache bytes per token, F peak FLOP/s and W memory bandwidth (bytes/s) "
                "of one chip, mfu and mbu the fractions of them achieved, G chips per replica, P pipeline stages, p "
                "price per chip-hour",
                id="formulas",
            ),
        ],
    )
