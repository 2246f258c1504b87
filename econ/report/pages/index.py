"""Index page: every page's findings (each linking to its evidence), the assumptions behind them (the scenario, and
the calibrated efficiencies that replace its bounds in calibrated findings), and every page.

The findings are those the rendered pages open with, in the site's order; a skipped page has none and the page
list says why it is missing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from econ.report.html import Col, Markup, esc, fmt_num, table, tag
from econ.report.page import Finding, PageContent, Section, SiteContext, findings_html, note

if TYPE_CHECKING:
    from econ.report.site import PageStatus

NAME = "index"
TITLE = "LLM economics from public data"

SCENARIO = """
select name, value, text, unit, low, high, alternatives, scenario as defined_in
from scenarios where scenario in ('base', ?)
qualify row_number() over (partition by name order by (scenario = ?) desc) = 1
order by name
"""

CALIBRATED = """
select unnest(string_split(scenario_fields, ',')) as name,
       estimate as calibrated_value, low as calibrated_low, high as calibrated_high, n_points
from calibration_parameters where coalesce(group_kind, '') = '' and status = 'ok' and scenario_fields <> ''
"""
"""The pooled fitted values (calibration_parameters) by the scenario fields each sets (the HBM share sets both pools'
bandwidth use, the GEMM efficiency both pools' MFU)."""


def render(ctx: SiteContext, statuses: list[PageStatus], findings: dict[str, tuple[str, list[Finding]]]) -> PageContent:
    sections = []
    for name, (title, page_findings) in findings.items():
        if page_findings:
            sections.append(Section(title, [findings_html(page_findings, link_pages=True)], anchor=f"findings-{name}"))
    if not sections:
        sections.append(Section("Findings", [note("No page of this report has a finding to state.", kind="pending")]))
    if ctx.has("scenarios"):
        sections.append(_scenario(ctx))
    sections.append(_pages(statuses))
    return PageContent(
        title=TITLE,
        lead=(
            "What public API prices, accelerator datasheets and open model architectures imply about the cost of "
            "serving and training large language models, following Reiner Pope's lecture "
            f"“The math behind how LLMs are trained and served”. Prices as of {ctx.as_of.isoformat()}. Each finding "
            "below says how sure it is: a bound, a calibrated prediction with its measured error, a price inference "
            "with its validation on open models, or that it is weak or not identified."
        ),
        sections=sections,
    )


def _scenario(ctx: SiteContext) -> Section:
    frame = ctx.query(SCENARIO, [ctx.scenario, ctx.scenario])
    if frame.is_empty():
        return Section(
            "Assumptions", [note(f"Scenario {ctx.scenario} has no assumptions in this database.", kind="pending")]
        )
    shown = [text or fmt_num(value) for text, value in zip(frame["text"].to_list(), frame["value"].to_list())]
    frame = frame.with_columns(pl.Series("shown", shown, dtype=pl.String))
    cols = [
        Col("name", "Assumption"),
        Col("shown", "Value (bound)"),
        Col("unit", "Unit"),
        Col("low", "Low", kind="num"),
        Col("high", "High", kind="num"),
        Col("defined_in", "Defined in scenario"),
    ]
    calibrated = ctx.query(CALIBRATED) if ctx.has("calibration_parameters") else pl.DataFrame()
    if calibrated.height:
        frame = frame.join(calibrated, on="name", how="left")
        cols.insert(
            2,
            Col(
                "calibrated_value",
                "Calibrated (fitted)",
                kind="num",
                help="the efficiency fitted to measured systems (calibration_parameters, all chips pooled); per chip "
                "family on the Validation page",
            ),
        )
        intro = (
            f"The findings use scenario {ctx.scenario}. Those marked bound take its idealised efficiencies (every "
            "share of peak 1, no overhead); those marked calibrated replace them with the efficiencies fitted to "
            f"{fmt_num(calibrated['n_points'].max())} measured operating points (the calibrated scenario: the column "
            "Calibrated, pooled over chips; the fit per chip family is on the Validation page). Every other "
            "assumption is the same for both."
        )
        heading = f"Assumptions: scenario {ctx.scenario}, calibrated where fitted"
    else:
        intro = f"The findings use scenario {ctx.scenario}; this database has no calibration, so every one is a bound."
        heading = f"Assumptions: scenario {ctx.scenario}"
    return Section(
        heading,
        [
            table(
                frame,
                cols,
                caption="The stated assumptions behind the analyses; the rationale and source of each are on the "
                "Sources page",
                id="scenario",
            ),
        ],
        intro=intro,
        anchor="assumptions",
    )


def _pages(statuses: list[PageStatus]) -> Section:
    items = []
    for s in statuses:
        if s.rendered:
            items.append(tag("li", Markup(tag("a", s.title, href=f"{s.name}.html") + esc(f" — {s.summary}"))))
        else:
            items.append(
                tag(
                    "li",
                    Markup(tag("strong", s.title) + esc(f" — not in this report: {s.reason}.")),
                    class_="status-skipped",
                )
            )
    return Section("Pages", [Markup('<ul class="pages">' + "".join(items) + "</ul>")])
