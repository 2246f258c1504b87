"""Chart of fast-mode variants: price multiple against published speed multiple, with lines of constant m·s."""

from __future__ import annotations

import altair as alt
import polars as pl

from econ.report.charts import (
    HEIGHT,
    LOG,
    WIDTH,
    axis_title,
)
from econ.report.charts.data import named, with_datasets


def fast_multiples(frame: pl.DataFrame, guides: pl.DataFrame) -> alt.LayerChart:
    """Price multiple m against published speed multiple s of fast variants, with lines of constant m·s.

    ``frame``: provider, model, tier_min_prompt_tokens, speed_ratio, output_price_ratio, batch_ratio.
    ``guides``: speed_ratio, output_price_ratio, batch_ratio (points along m·s = const).
    """
    x = alt.X("speed_ratio:Q", title=axis_title("Speed multiple s", "× standard"), scale=LOG)
    y_title = axis_title("Output price multiple m", "× standard")
    lines = (
        alt.Chart(named("guides"))
        .mark_line(strokeDash=[4, 4], color="#8a94a3")
        .encode(
            x=x,
            y=alt.Y("output_price_ratio:Q", title=y_title, scale=LOG),
            detail="batch_ratio:Q",
            tooltip=[alt.Tooltip("batch_ratio:Q", title="m·s = B0/B1", format=".3~g")],
        )
    )
    dots = (
        alt.Chart(named("fast"))
        .mark_point(filled=True, size=90)
        .encode(
            x=x,
            y=alt.Y("output_price_ratio:Q", title=y_title, scale=LOG),
            color=alt.Color("model:N", title="Model"),
            shape=alt.Shape("provider:N", title="Provider"),
            tooltip=[
                alt.Tooltip("provider:N", title="Provider"),
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("tier_min_prompt_tokens:Q", title="Tier above (tokens)", format=","),
                alt.Tooltip("output_price_ratio:Q", title="m", format=".3~g"),
                alt.Tooltip("speed_ratio:Q", title="s", format=".3~g"),
                alt.Tooltip("batch_ratio:Q", title="m·s = B0/B1", format=".3~g"),
            ],
        )
    )
    labels = (
        alt.Chart(named("guides"))
        .transform_filter("datum.label_here")
        .mark_text(align="left", dx=4, dy=-4, fontSize=10, color="#5b6575")
        .encode(
            x=x,
            y=alt.Y("output_price_ratio:Q", title=y_title, scale=LOG),
            text="label:N",
            tooltip=[alt.Tooltip("batch_ratio:Q", title="m·s", format=".3~g")],
        )
    )
    chart = alt.layer(lines, labels, dots).properties(
        title="Fast modes: price multiple against speed multiple (dashed: constant batch ratio m·s)",
        width=WIDTH - 100,
        height=HEIGHT - 40,
    )
    return with_datasets(chart, fast=frame, guides=guides)
