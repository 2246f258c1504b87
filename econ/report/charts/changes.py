"""Charts of the What-changed page: every price change over time, as the ratio of the new price to the old."""

from __future__ import annotations

import altair as alt
import polars as pl

from econ.report.charts import HEIGHT, WIDTH, axis_title, date_axis, guide_rule
from econ.report.charts.data import named, with_datasets

COMPONENT_DOMAIN = ["input", "output", "cache read"]
COMPONENT_RANGE = ["#1f5fa8", "#e4892b", "#3b9c5a"]


def changes_over_time(frame: pl.DataFrame) -> alt.LayerChart:
    """Each changed price component at the date the new price took effect, as new/old on a log axis.

    ``frame``: from_date (date), component (input, output, cache read), new_over_old_ratio, status
    (in effect, announced), source, provider, model, variant, tier_min_prompt_tokens,
    old_usd_per_mtok, new_usd_per_mtok, change_frac.
    """
    y_title = axis_title("New price / old price, log scale", "ratio")
    points = (
        alt.Chart(named("changes"))
        .mark_point(size=55, opacity=0.7, filled=True)
        .encode(
            x=alt.X("from_date:T", title="Date the new price took effect", axis=date_axis(frame["from_date"])),
            y=alt.Y("new_over_old_ratio:Q", title=y_title, scale=alt.Scale(type="log")),
            color=alt.Color(
                "component:N", title="Component", scale=alt.Scale(domain=COMPONENT_DOMAIN, range=COMPONENT_RANGE)
            ),
            shape=alt.Shape(
                "status:N",
                title="Status",
                scale=alt.Scale(domain=["in effect", "announced"], range=["circle", "triangle-up"]),
            ),
            tooltip=[
                alt.Tooltip("from_date:T", title="From"),
                alt.Tooltip("status:N", title="Status"),
                alt.Tooltip("source:N", title="Source"),
                alt.Tooltip("provider:N", title="Provider"),
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("variant:N", title="Variant"),
                alt.Tooltip("tier_min_prompt_tokens:Q", title="Tier above (tokens)", format=","),
                alt.Tooltip("component:N", title="Component"),
                alt.Tooltip("old_usd_per_mtok:Q", title="Old (USD/MTok)", format=",.4~g"),
                alt.Tooltip("new_usd_per_mtok:Q", title="New (USD/MTok)", format=",.4~g"),
                alt.Tooltip("change_frac:Q", title="Change", format="+.1%"),
            ],
        )
    )
    guide = pl.DataFrame({"new_over_old_ratio": [1.0], "label": ["unchanged"]})
    rule = guide_rule("guide", alt.Y("new_over_old_ratio:Q", title=y_title, scale=alt.Scale(type="log")))
    chart = alt.layer(rule, points).properties(
        title="Every price change over time (above 1: raised; below: cut)", width=WIDTH, height=HEIGHT
    )
    return with_datasets(chart, changes=frame, guide=guide)


PRICE_COMPONENTS = ["input", "output"]


def family_prices_over_time(frame: pl.DataFrame, family: str) -> alt.Chart:
    """The first-party list price of each model of one family over time, as steps on a log axis.

    ``frame``: one row per model x component x period end point: ``date`` (the period's first day, then the day
    before its end), canonical_model, provider, component (input, output), usd_per_mtok, source (prevailing),
    period (a number per period, so a gap breaks the line).
    """
    y_title = axis_title("List price, log scale", "USD/MTok")
    chart = (
        alt.Chart(named("prices"))
        .mark_line(interpolate="step-after", point=alt.OverlayMarkDef(size=18, filled=True))
        .encode(
            x=alt.X("date:T", title="Date", axis=date_axis(frame["date"])),
            y=alt.Y("usd_per_mtok:Q", title=y_title, scale=alt.Scale(type="log")),
            color=alt.Color("canonical_model:N", title="Model", legend=alt.Legend(columns=2, labelLimit=160)),
            strokeDash=alt.StrokeDash(
                "component:N", title="Component", scale=alt.Scale(domain=PRICE_COMPONENTS, range=[[1, 0], [5, 3]])
            ),
            detail="period:N",
            tooltip=[
                alt.Tooltip("canonical_model:N", title="Model"),
                alt.Tooltip("provider:N", title="Seller"),
                alt.Tooltip("component:N", title="Component"),
                alt.Tooltip("date:T", title="Date"),
                alt.Tooltip("usd_per_mtok:Q", title="Price (USD/MTok)", format=",.4~g"),
                alt.Tooltip("source:N", title="Source (prevailing)"),
            ],
        )
        .properties(title=f"{family}: first-party list price over time", width=WIDTH, height=HEIGHT)
    )
    return with_datasets(chart, prices=frame)
