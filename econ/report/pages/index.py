"""Index page: the headline figures with their intervals, data age, the scenario used, and every page.

Headline figures come from the pages that were rendered (a page returns them with its
content); a skipped page's headline is left out and the page list says why the page is
missing. When the Serving page is skipped (its tables are missing), the balance batch is
still shown for a dense model (B*₀ = R) from the ``hardware_derived`` view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import polars as pl

from econ.report.html import Col, Markup, esc, fmt_interval, fmt_num, join, table, tag
from econ.report.page import Headline, HeadlineRow, PageContent, Section, SiteContext, note
from econ.report.pages.common import dense_balance

if TYPE_CHECKING:
    from econ.report.site import PageStatus

NAME = "index"
TITLE = "LLM economics from public data"
HEADLINE_ORDER = ("balance_batch", "kv_bytes_per_token", "cache_tier", "over_training", "data_age")

SCENARIO = """
select name, value, text, unit, low, high, alternatives, scenario as defined_in
from scenarios where scenario in ('base', ?)
qualify row_number() over (partition by name order by (scenario = ?) desc) = 1
order by name
"""


def render(ctx: SiteContext, statuses: list[PageStatus], headlines: list[Headline]) -> PageContent:
    by_key = {h.key: h for h in headlines}
    if "balance_batch" not in by_key and ctx.has("hardware_derived"):
        fallback = _dense_balance_batch(ctx)
        if fallback is not None:
            by_key["balance_batch"] = fallback
    keys = [k for k in HEADLINE_ORDER if k in by_key] + sorted(set(by_key) - set(HEADLINE_ORDER))
    cards = [_card(by_key[key]) for key in keys]
    sections = [
        Section(
            "Headline figures",
            [Markup('<div class="cards">' + "".join(cards) + "</div>")],
            intro="Each figure with its interval and what the interval means; follow the links for the "
            "charts and tables behind it.",
        )
    ]
    if ctx.has("scenarios"):
        sections.append(_scenario(ctx))
    sections.append(_pages(statuses))
    return PageContent(
        title=TITLE,
        lead=(
            "What public API prices, accelerator datasheets and open model architectures imply about the cost of "
            "serving and training large language models, following Reiner Pope's lecture "
            f"“The math behind how LLMs are trained and served”. Prices as of {ctx.as_of.isoformat()}."
        ),
        sections=sections,
    )


def _dense_balance_batch(ctx: SiteContext) -> Headline | None:
    chosen, formats, frame = dense_balance(ctx)
    if frame.is_empty():
        return None
    rows = tuple(
        HeadlineRow(
            subject=r["chip"],
            value=fmt_num(r["value_ratio"], sig=3),
            interval=fmt_interval(r["low_ratio"], r["high_ratio"]),
            note=r["formats"] if r["chosen"] else f"{r['formats']}: no {chosen}, value at bf16",
        )
        for r in frame.iter_rows(named=True)
    )
    return Headline(
        "balance_batch",
        f"Balance batch of a dense model, per chip (B*₀ = R, {chosen} weights)",
        "sequences per step",
        rows,
        interval_kind=f"range over the weight formats {', '.join(formats)} (weights stored at the math's precision); "
        f"the value is at scenario {ctx.scenario}'s {chosen}. For a mixture of experts multiply by the "
        "sparsity N_tot/N_act",
        formula=f"{ctx.cite('econ.physics.roofline.balance_batch')}; "
        f"{ctx.cite('econ.physics.roofline.critical_batch_ratio')}",
        source="hardware_derived view of the hardware table (vendor datasheets); weight format from the scenario",
    )


def _card(h: Headline) -> Markup:
    rows = pl.DataFrame(
        [{"subject": r.subject, "value": r.value, "interval": r.interval, "note": r.note} for r in h.rows],
        schema={"subject": pl.String, "value": pl.String, "interval": pl.String, "note": pl.String},
    )
    body = table(
        rows,
        [
            Col("subject", "For"),
            Col("value", f"Value ({h.unit})"),
            Col("interval", "Interval"),
            Col("note", "Note", wrap=True),
        ],
        sortable=False,
        id=f"headline-{h.key}-rows",
    )
    link = tag("a", "details", href=f"{h.page}.html") if h.page else Markup("")
    meta = join(
        [
            tag("p", Markup(tag("strong", "Interval: ") + esc(h.interval_kind)), class_="meta"),
            tag("p", Markup(tag("strong", "Formula: ") + esc(h.formula)), class_="meta"),
            tag(
                "p",
                Markup(tag("strong", "Data: ") + esc(h.source) + (Markup(" · ") + link if h.page else "")),
                class_="meta",
            ),
        ]
    )
    return Markup(
        f'<section class="card" id="headline-{esc(h.key)}">' + tag("h3", h.title) + body + meta + "</section>"
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
