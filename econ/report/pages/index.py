"""Index page: every page's findings (each linking to its evidence), the scenario used, and every page.

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
            "Scenario", [note(f"Scenario {ctx.scenario} has no assumptions in this database.", kind="pending")]
        )
    shown = [text or fmt_num(value) for text, value in zip(frame["text"].to_list(), frame["value"].to_list())]
    frame = frame.with_columns(pl.Series("shown", shown, dtype=pl.String))
    return Section(
        f"Scenario used: {ctx.scenario}",
        [
            table(
                frame,
                [
                    Col("name", "Assumption"),
                    Col("shown", "Value"),
                    Col("unit", "Unit"),
                    Col("low", "Low", kind="num"),
                    Col("high", "High", kind="num"),
                    Col("defined_in", "Defined in scenario"),
                ],
                caption="The stated assumptions behind the analyses; the rationale and source of each are on the "
                "Sources page",
                id="scenario",
            ),
        ],
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
