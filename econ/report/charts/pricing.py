"""Charts of the price-inference pages: long-context tiers with their fitted cost line, the KV bytes per token
they imply, output/input ratios and the decode batch, and the open-weight market regression (prompt-cache charts:
:mod:`econ.report.charts.cache`; fast mode: :mod:`econ.report.charts.fast_mode`)."""

from __future__ import annotations

import altair as alt
import numpy as np
import polars as pl

from econ.report.charts import (
    BOTH_ENDS,
    HEIGHT,
    LEGEND_PROVIDER,
    LOG,
    WIDTH,
    axis_title,
    fold_series,
    guide_rule,
    if_any_interval,
    provider_color,
    spread,
)
from econ.report.charts.data import equals, named, with_datasets

READING_DOMAIN = ["slope", "crossover", "architecture (true)"]
READING_RANGE = ["#1f5fa8", "#e4892b", "#111111"]


def tier_prices(frame: pl.DataFrame, *, columns: int = 3) -> alt.FacetChart:
    """Price against prompt length per tiered model (steps) with the fitted line c(L) = a + k·L, one panel per provider.

    ``frame``: provider, model, kind (tier or fit), context_tokens, usd_per_mtok, plus for tier rows
    tier_min_prompt_tokens and for fit rows status and slope_usd_per_mtok_per_mtok_context.
    """
    x = alt.X("context_tokens:Q", title=axis_title("Prompt length", "tokens"))
    price_title = axis_title("Input price", "USD/MTok")
    y = alt.Y("usd_per_mtok:Q", title=price_title, scale=alt.Scale(zero=True, nice=False))
    color = alt.Color("model:N", title="Model", legend=None)  # each line is labelled at its end instead
    labels = (
        alt.Chart()
        .transform_filter(equals("kind", "label"))
        .mark_text(align="right", dx=-4, dy=-7, fontSize=10)
        .encode(
            x=x,
            y=alt.Y("label_usd_per_mtok:Q", title=price_title),
            color=color,
            text="model:N",
            tooltip=[alt.Tooltip("model:N", title="Model")],
        )
    )
    steps = (
        alt.Chart()
        .transform_filter(equals("kind", "tier"))
        .mark_line(interpolate="step-after", point=True)
        .encode(
            x=x,
            y=y,
            color=color,
            detail="model:N",
            tooltip=[
                alt.Tooltip("provider:N", title="Provider"),
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("tier_min_prompt_tokens:Q", title="Tier above (tokens)", format=","),
                alt.Tooltip("usd_per_mtok:Q", title="Price (USD/MTok)", format=",.4~g"),
            ],
        )
    )
    fit = (
        alt.Chart()
        .transform_filter(equals("kind", "fit"))
        .mark_line(strokeDash=[5, 3], opacity=0.8)
        .encode(
            x=x,
            y=y,
            color=color,
            detail="model:N",
            tooltip=[
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("status:N", title="Fit status"),
                alt.Tooltip(
                    "slope_usd_per_mtok_per_mtok_context:Q", title="k (USD/MTok per MTok of context)", format=",.4~g"
                ),
                alt.Tooltip("context_tokens:Q", title="L (tokens)", format=","),
                alt.Tooltip("usd_per_mtok:Q", title="a + k·L (USD/MTok)", format=",.4~g"),
            ],
        )
    )
    chart = (
        alt.layer(steps, fit, labels, data=named("tiers"))
        .properties(width=TIER_WIDTH, height=TIER_HEIGHT)
        .facet(
            facet=alt.Facet("provider:N", title="Provider"),
            columns=columns,
        )
        .resolve_scale(y="independent")
        .properties(title="Long-context tiers: input price against prompt length, with the fitted cost line")
    )
    return with_datasets(chart, tiers=pl.concat([frame, tier_labels(frame)], how="diagonal_relaxed"))


TIER_WIDTH, TIER_HEIGHT = 300, 190


def tier_labels(frame: pl.DataFrame) -> pl.DataFrame:
    """One label row per model (``kind = "label"``) at the end of its steps, moved up or down so no two labels of a
    provider's panel overlap (:func:`~econ.report.charts.spread`; the panel's price axis runs from 0 to its largest
    price, unrounded, so the pixel positions are known)."""
    ends = (
        frame.filter(pl.col("kind") == "tier")
        .sort("context_tokens")
        .group_by("provider", "model", maintain_order=True)
        .last()
        .join(frame.group_by("provider").agg(pl.col("usd_per_mtok").max().alias("_top")), on="provider")
        .sort("provider", "usd_per_mtok", "model", descending=[False, True, False])
    )
    if ends.is_empty():
        return ends.select("provider", "model", "kind", "context_tokens").with_columns(
            pl.lit(None, pl.Float64).alias("label_usd_per_mtok")
        )
    px = (1 - ends["usd_per_mtok"] / ends["_top"]).to_numpy() * TIER_HEIGHT
    moved = np.concatenate(
        [spread(px[idx], low=10, high=TIER_HEIGHT) for idx in ends.with_row_index().group_by(
            "provider", maintain_order=True).agg("index")["index"].to_list()]
    )  # fmt: skip
    return ends.select(
        "provider",
        "model",
        pl.lit("label").alias("kind"),
        "context_tokens",
        pl.Series("label_usd_per_mtok", (1 - moved / TIER_HEIGHT) * ends["_top"].to_numpy()),
    )


def implied_kv(frame: pl.DataFrame, guides: pl.DataFrame) -> alt.LayerChart:
    """KV bytes per token implied by each schedule (slope and crossover readings) with both intervals, and the
    architecture's true value for open models.

    ``frame``: label, reading (slope, crossover, architecture (true)), bytes_per_token, fit_low, fit_high
    (null where not identified), scenario_low, scenario_high. ``guides``: label, bytes_per_token.
    """
    order = (
        frame.filter(pl.col("reading") == "crossover").sort("bytes_per_token")["label"].to_list()
        + frame["label"].unique(maintain_order=True).to_list()
    )
    order = list(dict.fromkeys(order))
    x_title = axis_title("KV cache per context token", "bytes/token")
    y = alt.Y(
        "label:N",
        title="Price schedule (source · provider · model)",
        sort=order,
        axis=alt.Axis(labelLimit=260, titleAngle=0, titleAlign="left", titleX=-260, titleY=-8, titleBaseline="bottom"),
    )  # the title sits above the labels, from their left edge, never across them
    yoff = alt.YOffset("reading:N", title="Reading", scale=alt.Scale(domain=READING_DOMAIN))
    color = alt.Color("reading:N", title="Reading", scale=alt.Scale(domain=READING_DOMAIN, range=READING_RANGE))
    tooltip = [
        alt.Tooltip("label:N", title="Schedule"),
        alt.Tooltip("reading:N", title="Reading"),
        alt.Tooltip("bytes_per_token:Q", title="Bytes/token", format=",.4~g"),
        alt.Tooltip("fit_low:Q", title="Fit interval low", format=",.3~g"),
        alt.Tooltip("fit_high:Q", title="Fit interval high", format=",.3~g"),
        alt.Tooltip("scenario_low:Q", title="Scenario interval low", format=",.3~g"),
        alt.Tooltip("scenario_high:Q", title="Scenario interval high", format=",.3~g"),
    ]
    scenario = (
        alt.Chart(named("kv"))
        .transform_filter(BOTH_ENDS.format(low="scenario_low", high="scenario_high"))
        .mark_rule(strokeWidth=1.2, opacity=0.6)
        .encode(
            x=alt.X("scenario_low:Q", title=x_title, scale=LOG),
            x2="scenario_high:Q",
            y=y,
            yOffset=yoff,
            color=color,
            tooltip=tooltip,
        )
    )
    fit = (
        alt.Chart(named("kv"))
        .transform_filter(BOTH_ENDS.format(low="fit_low", high="fit_high"))
        .mark_rule(strokeWidth=4)
        .encode(
            x=alt.X("fit_low:Q", title=x_title, scale=LOG),
            x2="fit_high:Q",
            y=y,
            yOffset=yoff,
            color=color,
            tooltip=tooltip,
        )
    )
    dots = (
        alt.Chart(named("kv"))
        .mark_point(filled=True, size=45)
        .encode(
            x=alt.X("bytes_per_token:Q", title=x_title, scale=LOG),
            y=y,
            yOffset=yoff,
            color=color,
            shape=alt.Shape(
                "reading:N",
                title="Reading",
                scale=alt.Scale(domain=READING_DOMAIN, range=["circle", "square", "diamond"]),
            ),
            tooltip=tooltip,
        )
    )
    rules = (
        alt.Chart(named("guides"))
        .mark_rule(strokeDash=[4, 4], color="#5b6575")
        .encode(
            x=alt.X("bytes_per_token:Q", title=x_title, scale=LOG),
            tooltip=[
                alt.Tooltip("label:N", title="Guide"),
                alt.Tooltip("bytes_per_token:Q", title="Bytes/token", format=","),
            ],
        )
    )
    layers = [
        rules,
        *if_any_interval(frame, "scenario_low", "scenario_high", scenario),
        *if_any_interval(frame, "fit_low", "fit_high", fit),
        dots,
    ]
    chart = alt.layer(*layers).properties(
        title="KV bytes per token implied by long-context prices (thin: scenario interval; thick: fit interval)",
        width=WIDTH - 120,
        height=max(200, 26 * len(order)),
    )
    return with_datasets(chart, kv=frame, guides=guides)


def io_batch(frame: pl.DataFrame, guides: pl.DataFrame) -> alt.LayerChart:
    """Output/input price ratio against the decode batch it implies (B/B*₀), with the scenario interval.

    ``frame``: provider, model, variant, output_over_input_ratio, batch_over_balance_ratio and its scenario
    low/high, regime, lecture_f3_check. ``guides``: label, batch_over_balance_ratio (horizontal rules).
    """
    frame = fold_series(frame)
    x = alt.X("output_over_input_ratio:Q", title=axis_title("Output price / input price ρ", "ratio"), scale=LOG)
    y_title = axis_title("Implied decode batch B / B*0", "ratio")
    tooltip = [
        alt.Tooltip("provider:N", title="Provider"),
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("output_over_input_ratio:Q", title="ρ", format=".3~g"),
        alt.Tooltip("batch_over_balance_ratio:Q", title="B/B*₀", format=".3~g"),
        alt.Tooltip("batch_over_balance_scenario_low_ratio:Q", title="Scenario low", format=".3~g"),
        alt.Tooltip("batch_over_balance_scenario_high_ratio:Q", title="Scenario high", format=".3~g"),
        alt.Tooltip("critical_context_source:N", title="L* from"),
        alt.Tooltip("lecture_f3_check:N", title="Lecture f.3 check"),
    ]
    bars = (
        alt.Chart(named("io"))
        .transform_filter(
            BOTH_ENDS.format(low="batch_over_balance_scenario_low_ratio", high="batch_over_balance_scenario_high_ratio")
        )
        .mark_rule(opacity=0.5)
        .encode(
            x=x,
            y=alt.Y("batch_over_balance_scenario_low_ratio:Q", title=y_title, scale=LOG),
            y2="batch_over_balance_scenario_high_ratio:Q",
            color=provider_color(frame[LEGEND_PROVIDER].unique(), field=LEGEND_PROVIDER),
            tooltip=tooltip,
        )
    )
    dots = (
        alt.Chart(named("io"))
        .mark_point(filled=True, size=60)
        .encode(
            x=x,
            y=alt.Y("batch_over_balance_ratio:Q", title=y_title, scale=LOG),
            color=provider_color(frame[LEGEND_PROVIDER].unique(), field=LEGEND_PROVIDER),
            tooltip=tooltip,
        )
    )
    rules = guide_rule(
        "guides",
        alt.Y("batch_over_balance_ratio:Q", title=y_title, scale=LOG),
        alt.Tooltip("batch_over_balance_ratio:Q", title="B/B*₀", format=".3~g"),
    )
    bars = if_any_interval(
        frame, "batch_over_balance_scenario_low_ratio", "batch_over_balance_scenario_high_ratio", bars
    )
    chart = alt.layer(rules, *bars, dots).properties(
        title="The decode batch implied by each output/input price ratio", width=WIDTH, height=HEIGHT
    )
    return with_datasets(chart, io=frame, guides=guides)


def market(frame: pl.DataFrame) -> alt.LayerChart:
    """Published prices of open-weight models (median and range over providers) against the regression's price.

    ``frame``: arch_model, component, predicted_usd_per_mtok, observed_median_usd_per_mtok, observed_low_usd_per_mtok,
    observed_high_usd_per_mtok, providers.
    """
    low = (
        float(frame.select(pl.min_horizontal("predicted_usd_per_mtok", "observed_low_usd_per_mtok").min()).item()) / 1.5
    )
    high = (
        float(frame.select(pl.max_horizontal("predicted_usd_per_mtok", "observed_high_usd_per_mtok").max()).item())
        * 1.5
    )
    diagonal = pl.DataFrame(
        {
            "predicted_usd_per_mtok": [low, high],
            "observed_median_usd_per_mtok": [low, high],
            "label": ["published = predicted"] * 2,
        }
    )
    x = alt.X("predicted_usd_per_mtok:Q", title=axis_title("Regression's price", "USD/MTok"), scale=LOG)
    y_title = axis_title("Published price, median over providers", "USD/MTok")
    color = alt.Color(
        "component:N", title="Component", scale=alt.Scale(domain=["input", "output"], range=["#1f5fa8", "#e4892b"])
    )
    tooltip = [
        alt.Tooltip("arch_model:N", title="Model"),
        alt.Tooltip("component:N", title="Component"),
        alt.Tooltip("providers:Q", title="Price rows"),
        alt.Tooltip("predicted_usd_per_mtok:Q", title="Predicted (USD/MTok)", format=",.3~g"),
        alt.Tooltip("observed_median_usd_per_mtok:Q", title="Median published (USD/MTok)", format=",.3~g"),
        alt.Tooltip("observed_low_usd_per_mtok:Q", title="Lowest (USD/MTok)", format=",.3~g"),
        alt.Tooltip("observed_high_usd_per_mtok:Q", title="Highest (USD/MTok)", format=",.3~g"),
    ]
    line = (
        alt.Chart(named("diagonal"))
        .mark_line(strokeDash=[4, 4], color="#8a94a3")
        .encode(
            x=x,
            y=alt.Y("observed_median_usd_per_mtok:Q", title=y_title, scale=LOG),
            tooltip=[alt.Tooltip("label:N", title="Guide")],
        )
    )
    ranges = (
        alt.Chart(named("market"))
        .mark_rule(opacity=0.5)
        .encode(
            x=x,
            y=alt.Y("observed_low_usd_per_mtok:Q", title=y_title, scale=LOG),
            y2="observed_high_usd_per_mtok:Q",
            color=color,
            tooltip=tooltip,
        )
    )
    dots = (
        alt.Chart(named("market"))
        .mark_point(filled=True, size=55)
        .encode(x=x, y=alt.Y("observed_median_usd_per_mtok:Q", title=y_title, scale=LOG), color=color, tooltip=tooltip)
    )
    chart = alt.layer(line, ranges, dots).properties(
        title="Open-weight market: published prices against the FLOP + byte regression", width=WIDTH, height=HEIGHT
    )
    return with_datasets(chart, market=frame, diagonal=diagonal)
