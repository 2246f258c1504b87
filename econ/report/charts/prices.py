"""Charts of the Prices page: output vs input prices, the ratio across the market, and price changes."""

from __future__ import annotations

import altair as alt
import polars as pl

from econ.report.charts import (
    HEIGHT,
    LEGEND_PROVIDER,
    WIDTH,
    axis_title,
    date_axis,
    fold_series,
    guide_rule,
    provider_color,
    source_color,
)
from econ.report.charts.data import ChartWithData, named, with_datasets

LECTURE_RATIOS = (1.0, 5.0)  # equal prices, and the lecture's "use 5" output/input ratio (section f.3)


def io_price_scatter(frame: pl.DataFrame) -> ChartWithData:
    """Output against input price per model (log–log), with lines of constant ratio ρ = 1 and 5.

    ``frame``: provider, model, variant, tier_min_prompt_tokens, input_usd_per_mtok,
    output_usd_per_mtok, output_over_input_ratio (positive prices only).
    """
    frame = fold_series(frame)
    low = float(frame["input_usd_per_mtok"].min()) / 1.5
    high = float(frame["input_usd_per_mtok"].max()) * 1.5
    guides = pl.DataFrame(
        {
            "ratio": [r for r in LECTURE_RATIOS for _ in (0, 1)],
            "input_usd_per_mtok": [x for _ in LECTURE_RATIOS for x in (low, high)],
        }
    ).with_columns(
        (pl.col("input_usd_per_mtok") * pl.col("ratio")).alias("output_usd_per_mtok"),
        pl.format("output = {} × input", pl.col("ratio").cast(pl.Int64)).alias("guide"),
        (pl.col("input_usd_per_mtok") == high).alias("label_here"),
    )
    x = alt.X("input_usd_per_mtok:Q", title=axis_title("Input price", "USD/MTok"), scale=alt.Scale(type="log"))
    y = alt.Y("output_usd_per_mtok:Q", title=axis_title("Output price", "USD/MTok"), scale=alt.Scale(type="log"))
    lines = (
        alt.Chart(named("guides"))
        .mark_line(strokeDash=[4, 4], color="#8a94a3")
        .encode(
            x=x,
            y=y,
            detail="guide:N",
            tooltip=[alt.Tooltip("guide:N", title="Guide")],
        )
    )
    points = (
        alt.Chart(named("prices"))
        .mark_point(filled=True, size=70, opacity=0.85)
        .encode(
            x=x,
            y=y,
            color=provider_color(frame[LEGEND_PROVIDER].unique(), field=LEGEND_PROVIDER),
            shape=alt.Shape("variant:N", title="Variant"),
            tooltip=[
                alt.Tooltip("provider:N", title="Provider"),
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("variant:N", title="Variant"),
                alt.Tooltip("tier_min_prompt_tokens:Q", title="Tier above (tokens)", format=","),
                alt.Tooltip("input_usd_per_mtok:Q", title="Input (USD/MTok)", format=",.4~g"),
                alt.Tooltip("output_usd_per_mtok:Q", title="Output (USD/MTok)", format=",.4~g"),
                alt.Tooltip("output_over_input_ratio:Q", title="Output / input", format=".3~g"),
            ],
        )
    )
    labels = (
        alt.Chart(named("guides"))
        .transform_filter("datum.label_here")
        .mark_text(align="right", dx=-6, dy=-10, color="#5b6575")
        .encode(x=x, y=y, text="guide:N", tooltip=[alt.Tooltip("guide:N", title="Guide")])
    )
    chart = alt.layer(lines, labels, points).properties(
        title="First-party output vs input price (current, every tier)", width=WIDTH, height=HEIGHT
    )
    return with_datasets(chart, prices=frame, guides=guides)


def io_ratio_histogram(frame: pl.DataFrame) -> ChartWithData:
    """How many current prices have each output/input ratio, in half-octave bins, by price source.

    ``frame``: source, ratio_low, ratio_high, price_rows (one row per source × bin, from SQL).
    """
    rule = pl.DataFrame({"ratio": [5.0], "label": ["lecture: output ≈ 5 × input"]})
    x_title = axis_title("Output price / input price", "ratio")
    bars = (
        alt.Chart(named("bins"))
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("ratio_low:Q", title=x_title, scale=alt.Scale(type="log")),
            x2="ratio_high:Q",
            y=alt.Y("sum(price_rows):Q", title=axis_title("Current prices", "rows"), stack="zero"),
            color=source_color(),
            order=alt.Order("source:O"),
            tooltip=[
                alt.Tooltip("source:N", title="Source"),
                alt.Tooltip("ratio_low:Q", title="Ratio from", format=".3~g"),
                alt.Tooltip("ratio_high:Q", title="Ratio below", format=".3~g"),
                alt.Tooltip("sum(price_rows):Q", title="Prices (rows)"),
            ],
        )
    )
    guide = guide_rule("guide", alt.X("ratio:Q", title=x_title, scale=alt.Scale(type="log")))
    chart = alt.layer(bars, guide).properties(
        title="Output/input price ratio across all current prices", width=WIDTH, height=HEIGHT
    )
    return with_datasets(chart, bins=frame, guide=rule)


LEVEL_LABELS = 8
"""Most snapshot dates whose labels sit level under the bars; more (a replayed history has dozens) are slanted."""


def price_changes(frame: pl.DataFrame) -> ChartWithData:
    """Price changes per snapshot date as diverging bars: raises up, cuts down, input and output side by side.

    ``frame``: change_date (date), component (input, output), direction (cut, raised), price_rows.
    """
    data = frame.with_columns(
        pl.when(pl.col("direction") == "cut")
        .then(-pl.col("price_rows"))
        .otherwise(pl.col("price_rows"))
        .alias("signed_rows"),
        pl.col("change_date").cast(pl.String).alias("change_date"),
    )
    dates = data["change_date"].n_unique()
    chart = (
        alt.Chart(named("changes"))
        .mark_bar()
        .encode(
            x=alt.X(
                "change_date:O",
                title="Date the new price first appeared",
                # a long history's dates would overlap: slanted, and on a phone the labels that still would are left out
                axis=alt.Axis(labelAngle=0 if dates <= LEVEL_LABELS else -45, labelOverlap="greedy"),
            ),
            xOffset=alt.XOffset("component:N", title="Component"),
            y=alt.Y("signed_rows:Q", title=axis_title("Price changes, cuts below zero", "rows")),
            color=alt.Color(
                "component:N",
                title="Component",
                scale=alt.Scale(domain=["input", "output"], range=["#1f5fa8", "#e4892b"]),
            ),
            opacity=alt.Opacity(
                "direction:O", title="Direction", scale=alt.Scale(domain=["cut", "raised"], range=[0.55, 1.0])
            ),
            tooltip=[
                alt.Tooltip("change_date:O", title="Date"),
                alt.Tooltip("component:N", title="Component"),
                alt.Tooltip("direction:N", title="Direction"),
                alt.Tooltip("price_rows:Q", title="Changes (rows)"),
            ],
        )
        .properties(
            title="Input and output price changes between snapshots",
            width=max(320, min(WIDTH, 120 * dates)),
            height=HEIGHT,
        )
    )
    return with_datasets(chart, changes=data)


def first_party_history(frame: pl.DataFrame) -> ChartWithData:
    """First-party prices over time (step lines), one line per model × variant × tier × component.

    ``frame``: provider, model, variant, tier_min_prompt_tokens, component, from_date (date), usd_per_mtok.
    """
    tier = (
        pl.when(pl.col("tier_min_prompt_tokens") > 0)
        .then(pl.format(" >{}k", (pl.col("tier_min_prompt_tokens") // 1000).cast(pl.String)))
        .otherwise(pl.lit(""))
    )
    variant = pl.when(pl.col("variant") != "standard").then(pl.format(" [{}]", pl.col("variant"))).otherwise(pl.lit(""))
    data = frame.with_columns(
        pl.concat_str([pl.col("model"), pl.lit(" "), pl.col("component"), tier, variant]).alias("series")
    )
    chart = (
        alt.Chart(named("history"))
        .mark_line(interpolate="step-after", point=True)
        .encode(
            x=alt.X("from_date:T", title="Effective from", axis=date_axis(frame["from_date"])),
            y=alt.Y("usd_per_mtok:Q", title=axis_title("Price", "USD/MTok"), scale=alt.Scale(type="log")),
            color=alt.Color(
                "series:N",
                title="Model, component",
                scale=alt.Scale(scheme="category20"),
                legend=alt.Legend(labelLimit=280, symbolLimit=40),
            ),
            tooltip=[
                alt.Tooltip("provider:N", title="Provider"),
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("component:N", title="Component"),
                alt.Tooltip("variant:N", title="Variant"),
                alt.Tooltip("tier_min_prompt_tokens:Q", title="Tier above (tokens)", format=","),
                alt.Tooltip("from_date:T", title="From"),
                alt.Tooltip("usd_per_mtok:Q", title="Price (USD/MTok)", format=",.4~g"),
            ],
        )
        .properties(title="First-party prices over time", width=WIDTH, height=HEIGHT)
    )
    return with_datasets(chart, history=data)
