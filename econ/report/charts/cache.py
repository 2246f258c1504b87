"""Charts of prompt-cache prices: what a cache charges to hold a GB of KV for an hour against each memory tier's
cost, and the cost of each way to keep a prompt against how long it is held."""

from __future__ import annotations

import altair as alt
import polars as pl

from econ.report.charts import (
    BOTH_ENDS,
    HEIGHT,
    LOG,
    WIDTH,
    axis_title,
    if_any_interval,
)
from econ.report.charts.data import equals, named, with_datasets

TIER_DOMAIN = ["hbm", "ddr", "flash", "disk", "recompute"]
TIER_RANGE = ["#c4424b", "#e4892b", "#3b9c5a", "#7a5aa8", "#1f5fa8"]
KV_METHOD_DOMAIN = ["architecture", "implied_kv_read"]
KV_METHOD_RANGE = ["#111111", "#1f5fa8"]


def cache_hold(frame: pl.DataFrame, tiers: pl.DataFrame) -> alt.LayerChart:
    """What a prompt cache charges to hold a GB of KV for an hour (after margin) against each memory tier's cost.

    ``frame``: label, kv_method (where b_kv came from), hold_cost_usd_per_gb_hour, hold_cost_low/high (its interval:
    premium fit, margin and KV bytes), tier (the identified tier or the status naming those that remain).
    ``tiers``: tier, device, usd_per_gb_hour (vertical rules).
    """
    order = frame.sort("hold_cost_usd_per_gb_hour", descending=True)["label"].unique(maintain_order=True).to_list()
    x_title = axis_title("Hold cost of KV after margin", "USD per GB-hour")
    y = alt.Y("label:N", title="Cached prompt (provider · model)", sort=order, axis=alt.Axis(labelLimit=220))
    color = alt.Color(
        "kv_method:N", title="KV bytes from", scale=alt.Scale(domain=KV_METHOD_DOMAIN, range=KV_METHOD_RANGE)
    )
    tooltip = [
        alt.Tooltip("label:N", title="Model"),
        alt.Tooltip("kv_method:N", title="b_kv from"),
        alt.Tooltip("hold_cost_usd_per_gb_hour:Q", title="Hold cost (USD/GB-hour)", format=".3~g"),
        alt.Tooltip("hold_cost_low_usd_per_gb_hour:Q", title="Interval low", format=".3~g"),
        alt.Tooltip("hold_cost_high_usd_per_gb_hour:Q", title="Interval high", format=".3~g"),
        alt.Tooltip("tier:N", title="Memory tier"),
    ]
    yoff = alt.YOffset("kv_method:N", title="KV bytes from", scale=alt.Scale(domain=KV_METHOD_DOMAIN))
    bars = (
        alt.Chart(named("hold"))
        .transform_filter(BOTH_ENDS.format(low="hold_cost_low_usd_per_gb_hour", high="hold_cost_high_usd_per_gb_hour"))
        .mark_rule(opacity=0.6)
        .encode(
            x=alt.X("hold_cost_low_usd_per_gb_hour:Q", title=x_title, scale=LOG),
            x2="hold_cost_high_usd_per_gb_hour:Q",
            y=y,
            yOffset=yoff,
            color=color,
            tooltip=tooltip,
        )
    )
    dots = (
        alt.Chart(named("hold"))
        .mark_point(filled=True, size=40)
        .encode(
            x=alt.X("hold_cost_usd_per_gb_hour:Q", title=x_title, scale=LOG),
            y=y,
            yOffset=yoff,
            color=color,
            tooltip=tooltip,
        )
    )
    tier_tip = [
        alt.Tooltip("tier:N", title="Tier"),
        alt.Tooltip("device:N", title="Device"),
        alt.Tooltip("usd_per_gb_hour:Q", title="Cost (USD/GB-hour)", format=".3~g"),
    ]
    rules = (
        alt.Chart(named("tiers"))
        .mark_rule(strokeDash=[4, 4], strokeWidth=1.5)
        .encode(
            x=alt.X("usd_per_gb_hour:Q", title=x_title, scale=LOG),
            stroke=alt.Stroke("tier:N", title="Memory tier", scale=alt.Scale(domain=TIER_DOMAIN, range=TIER_RANGE)),
            tooltip=tier_tip,
        )
    )
    bars = if_any_interval(frame, "hold_cost_low_usd_per_gb_hour", "hold_cost_high_usd_per_gb_hour", bars)
    chart = alt.layer(rules, *bars, dots).properties(
        title="Prompt-cache hold prices against memory-tier hold costs",
        width=WIDTH - 100,
        height=max(200, 18 * len(order)),
    )
    return with_datasets(chart, hold=frame, tiers=tiers)


def tier_costs(frame: pl.DataFrame, marks: pl.DataFrame, *, model: str) -> alt.LayerChart:
    """Cost of keeping one token's KV for a hold time and reading it back, per mechanism, with drain times.

    ``frame``: mechanism, device, hold_time_s, cost_usd_per_mtok, cheapest (bool as text).
    ``marks``: label, hold_time_s, kind (drain time or cache duration) for vertical rules.
    """
    x = alt.X("hold_time_s:Q", title=axis_title("Hold time T", "s"), scale=LOG)
    y = alt.Y("cost_usd_per_mtok:Q", title=axis_title("Retrieve + hold cost", "USD/MTok"), scale=LOG)
    lines = (
        alt.Chart(named("costs"))
        .mark_line()
        .encode(
            x=x,
            y=y,
            color=alt.Color("mechanism:N", title="Mechanism", scale=alt.Scale(domain=TIER_DOMAIN, range=TIER_RANGE)),
            detail="device:N",
            tooltip=[
                alt.Tooltip("mechanism:N", title="Mechanism"),
                alt.Tooltip("device:N", title="Device"),
                alt.Tooltip("hold_time_s:Q", title="T (s)", format=",.3~g"),
                alt.Tooltip("cost_usd_per_mtok:Q", title="Cost (USD/MTok)", format=",.3~g"),
                alt.Tooltip("cheapest:N", title="Cheapest at T"),
            ],
        )
    )
    best = (
        alt.Chart(named("costs"))
        .transform_filter(equals("cheapest", "cheapest"))
        .mark_point(filled=True, size=30, color="#111")
        .encode(
            x=x,
            y=y,
            tooltip=[
                alt.Tooltip("mechanism:N", title="Cheapest"),
                alt.Tooltip("hold_time_s:Q", title="T (s)", format=",.3~g"),
                alt.Tooltip("cost_usd_per_mtok:Q", title="Cost (USD/MTok)", format=",.3~g"),
            ],
        )
    )
    rules = (
        alt.Chart(named("marks"))
        .mark_rule(opacity=0.7)
        .encode(
            x=alt.X("hold_time_s:Q", title=axis_title("Hold time T", "s"), scale=LOG),
            strokeDash=alt.StrokeDash(
                "kind:N",
                title="Marks",
                scale=alt.Scale(domain=["drain time", "cache duration"], range=[[2, 2], [6, 3]]),
            ),
            tooltip=[alt.Tooltip("label:N", title="Mark"), alt.Tooltip("hold_time_s:Q", title="T (s)", format=",.3~g")],
        )
    )
    chart = alt.layer(rules, lines, best).properties(
        title=f"Keeping a token's KV cache for a time T: recompute or a memory tier ({model})",
        width=WIDTH,
        height=HEIGHT,
    )
    return with_datasets(chart, costs=frame, marks=marks)
