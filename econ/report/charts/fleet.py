"""Charts of the Fleet page: the cost of each serving fleet, its margin, the cost–speed frontier, and the fleet
split."""

from __future__ import annotations

import altair as alt
import polars as pl

from econ.report.charts import HEIGHT, WIDTH, axis_title, guide_rule
from econ.report.charts.data import ChartWithData, named, with_datasets

POOL_DOMAIN = ["prefill", "decode"]
POOL_RANGE = ["#e4892b", "#1f5fa8"]
PRICE_AND_COST = [  # tooltips of the per-deployment charts
    alt.Tooltip("usd_per_chip_hour:Q", title="Price (USD/chip-hour)", format=",.3~g"),
    alt.Tooltip("usd_per_day:Q", title="Cost (USD/day)", format=",.0f"),
]


def cost_breakdown(frame: pl.DataFrame) -> ChartWithData:
    """$/day of each deployment's fleet, stacked by pool (prefill, decode), at one price per chip-hour.

    ``frame``: deployment, pool, usd_per_day, chips, usd_per_chip_hour (one row per deployment × pool).
    """
    chart = (
        alt.Chart(named("pools"))
        .mark_bar()
        .encode(
            y=alt.Y("deployment:N", title="Deployment", sort="-x"),
            x=alt.X("sum(usd_per_day):Q", title=axis_title("Fleet rental cost", "USD/day"), stack="zero"),
            color=alt.Color("pool:N", title="Pool", scale=alt.Scale(domain=POOL_DOMAIN, range=POOL_RANGE)),
            order=alt.Order("pool:N", sort="descending"),
            tooltip=[
                alt.Tooltip("deployment:N", title="Deployment"),
                alt.Tooltip("pool:N", title="Pool"),
                alt.Tooltip("chips:Q", title="Chips", format=","),
                *PRICE_AND_COST,
            ],
        )
        .properties(title="Daily cost of each serving fleet, prefill and decode pools", width=WIDTH, height=HEIGHT)
    )
    return with_datasets(chart, pools=frame)


MARGIN_FLOOR_FRAC = -1.0
"""Where the margin axis starts: a margin is at most 1 and has no floor (a fleet costing 31x its revenue is -30),
so one deployment far below break-even would squeeze every other onto zero. A margin under -100% (cost above twice the
revenue) is drawn at the axis's edge, hollow, its value in the tooltip."""


def margins(frame: pl.DataFrame) -> ChartWithData:
    """Gross margin at list prices of each deployment, one point per rental price kind; the axis runs from
    :data:`MARGIN_FLOOR_FRAC` (or the lowest margin above it) to 1 at most.

    ``frame``: deployment, price_kind, usd_per_chip_hour, usd_per_day, revenue_usd_per_day, gross_margin_frac.
    """
    values = frame["gross_margin_frac"].drop_nulls()
    low = max(min(float(values.min()), 0.0), MARGIN_FLOOR_FRAC) if values.len() else MARGIN_FLOOR_FRAC
    high = min(max(float(values.max()), 0.0), 1.0) if values.len() else 1.0
    x = alt.X(
        "gross_margin_frac:Q",
        title=axis_title("Gross margin at list prices", "fraction of revenue"),
        scale=alt.Scale(domain=[low, high], clamp=True, nice=True),
    )
    points = (
        alt.Chart(named("margins"))
        .mark_point(size=80)
        .encode(
            y=alt.Y("deployment:N", title="Deployment"),
            x=x,
            color=alt.Color("price_kind:N", title="Rental price kind"),
            fill=alt.condition(
                f"datum.gross_margin_frac < {MARGIN_FLOOR_FRAC}",
                alt.value("transparent"),
                alt.Fill("price_kind:N", title="Rental price kind"),
            ),
            tooltip=[
                alt.Tooltip("deployment:N", title="Deployment"),
                alt.Tooltip("price_kind:N", title="Price kind"),
                *PRICE_AND_COST,
                alt.Tooltip("revenue_usd_per_day:Q", title="Revenue (USD/day)", format=",.0f"),
                alt.Tooltip("gross_margin_frac:Q", title="Gross margin", format=".1%"),
            ],
        )
    )
    chart = alt.layer(guide_rule("zero", x), points).properties(
        title="Gross margin of each deployment at each rental price", width=WIDTH, height=HEIGHT
    )
    return with_datasets(chart, margins=frame, zero=pl.DataFrame({"gross_margin_frac": [0.0], "label": ["break-even"]}))


def _series(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.format("{} on {} ({})", "model", "chip", "number_format").alias("series"))


def frontier(points: pl.DataFrame, plans: pl.DataFrame, *, y: str, y_title: str, title: str) -> ChartWithData:
    """A quantity against per-user speed along the batch (log–log), one line per deployment's model × chip × format,
    with each plan's operating point marked.

    ``points``: model, chip, number_format, batch_seqs, tokens_per_s_per_user, tokens_per_s_per_chip, usd_per_mtok;
    ``plans``: deployment, model, chip, number_format, decode_batch_seqs, tokens_per_s_per_user and the ``y`` column.
    """
    x = alt.X("tokens_per_s_per_user:Q", title=axis_title("Speed per user", "tokens/s"), scale=alt.Scale(type="log"))
    yy = alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(type="log"))
    color = alt.Color("series:N", title="Model on chip (format)", legend=alt.Legend(labelLimit=320))
    lines = (
        alt.Chart(named("curves"))
        .mark_line(strokeWidth=1.8)
        .encode(
            x=x,
            y=yy,
            color=color,
            order=alt.Order("batch_seqs:Q"),
            tooltip=[
                alt.Tooltip("series:N", title="Model on chip"),
                alt.Tooltip("batch_seqs:Q", title="Batch (sequences)", format=","),
                alt.Tooltip("tokens_per_s_per_user:Q", title="Speed (tokens/s/user)", format=",.4~g"),
                alt.Tooltip("tokens_per_s_per_chip:Q", title="Throughput (tokens/s/chip)", format=",.4~g"),
                alt.Tooltip("usd_per_mtok:Q", title="Cost (USD/MTok)", format=",.4~g"),
            ],
        )
    )
    marks = (
        alt.Chart(named("plans"))
        .mark_point(shape="diamond", size=140, filled=True, stroke="#222")
        .encode(
            x=x,
            y=yy,
            color=color,
            tooltip=[
                alt.Tooltip("deployment:N", title="Deployment (plan)"),
                alt.Tooltip("decode_batch_seqs:Q", title="Batch (sequences)", format=","),
                alt.Tooltip("tokens_per_s_per_user:Q", title="Speed (tokens/s/user)", format=",.4~g"),
                alt.Tooltip(f"{y}:Q", title=y_title, format=",.4~g"),
            ],
        )
    )
    chart = alt.layer(lines, marks).properties(title=title, width=WIDTH, height=HEIGHT)
    return with_datasets(chart, curves=_series(points), plans=_series(plans))


def fleet_split(frame: pl.DataFrame) -> ChartWithData:
    """Chips of the fleet that serves a deployment and trains its model, with separate fleets and time-shared.

    ``frame``: deployment, mode (separate, time-shared), component (serving at peak, training on its own chips), chips.
    """
    chart = (
        alt.Chart(named("split"))
        .mark_bar()
        .encode(
            y=alt.Y("mode:N", title="Fleet"),
            yOffset=alt.YOffset("mode:N"),
            x=alt.X("sum(chips):Q", title=axis_title("Chips", "chips"), stack="zero"),
            color=alt.Color("component:N", title="Chips for"),
            row=alt.Row("deployment:N", title="Deployment", header=alt.Header(labelAngle=0, labelAlign="left")),
            tooltip=[
                alt.Tooltip("deployment:N", title="Deployment"),
                alt.Tooltip("mode:N", title="Fleet"),
                alt.Tooltip("component:N", title="Chips for"),
                alt.Tooltip("chips:Q", title="Chips", format=",.0f"),
            ],
        )
        .properties(
            title="Serving and training one model: separate fleets vs serving by day, training by night",
            width=WIDTH - 120,
            height=40,
        )
    )
    return with_datasets(chart, split=frame)
