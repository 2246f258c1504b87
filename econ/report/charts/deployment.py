"""Charts of the deployment model on the Serving page: the throughput–speed frontier by chip, where a decode
step's time goes, and the weight bytes a small batch really reads."""

from __future__ import annotations

import altair as alt
import polars as pl

from econ.report.charts import axis_title, chip_color
from econ.report.charts.data import ChartWithData, named, with_datasets

TERM_ORDER = ["weights", "KV and state", "compute", "communication"]
TERM_COLORS = ["#1f5fa8", "#7fb3e6", "#e4892b", "#c4424b"]


def frontier_by_chip(frontier: pl.DataFrame, *, models: list[str]) -> ChartWithData:
    """Tokens/s per chip against tokens/s per user, one line per chip, one panel per model (log–log).

    Solid: at the calibrated efficiencies (a prediction); dashed: the roofline bound.
    ``frontier``: efficiency_basis, model, chip, number_format, tokens_per_s_per_user, tokens_per_s_per_chip,
    usd_per_mtok,
    replica_chips, tensor_parallel, attention_data_parallel, batch_per_replica, layout.
    """
    x = alt.X("tokens_per_s_per_user:Q", title=axis_title("Speed per user", "tokens/s"), scale=alt.Scale(type="log"))
    y = alt.Y(
        "tokens_per_s_per_chip:Q", title=axis_title("Throughput per chip", "tokens/s"), scale=alt.Scale(type="log")
    )
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("chip:N", title="Chip"),
        alt.Tooltip("number_format:N", title="Format"),
        alt.Tooltip("efficiency_basis:N", title="Efficiencies"),
        alt.Tooltip("layout:N", title="Layout"),
        alt.Tooltip("replica_chips:Q", title="Chips per replica", format=","),
        alt.Tooltip("tensor_parallel:Q", title="TP"),
        alt.Tooltip("attention_data_parallel:Q", title="DP"),
        alt.Tooltip("batch_per_replica:Q", title="Batch per replica", format=","),
        alt.Tooltip("tokens_per_s_per_user:Q", title="Speed (tokens/s/user)", format=",.3~g"),
        alt.Tooltip("tokens_per_s_per_chip:Q", title="Throughput (tokens/s/chip)", format=",.3~g"),
        alt.Tooltip("usd_per_mtok:Q", title="Cost (USD/MTok)", format=",.3~g"),
    ]
    color = chip_color(frontier["chip"].unique())
    base = alt.Chart().encode(x=x, y=y, color=color, detail="efficiency_basis:N", tooltip=tooltip)
    lines = base.mark_line(strokeWidth=1.5).encode(
        strokeDash=alt.StrokeDash(
            "efficiency_basis:N",
            title="Efficiencies",
            sort=["calibrated", "bound"],
            scale=alt.Scale(domain=["calibrated", "bound"], range=[[1, 0], [4, 3]]),
            legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2, symbolSize=500),
        ),  # a line layer of its own: the legend draws each line style (solid: calibrated, dashed: bound)
        order="tokens_per_s_per_user:Q",
    )
    points = base.mark_point(filled=True, size=18)
    chart = (
        alt.layer(lines, points, data=named("frontier"))
        .properties(width=300, height=260)
        .facet(column=alt.Column("model:N", title="Model", sort=models))
        .properties(title="Throughput per chip against speed per user: the best layout and batch at each speed")
    )
    return with_datasets(chart, frontier=frontier)


def step_terms(terms: pl.DataFrame, *, batches: list[int]) -> ChartWithData:
    """Stacked step-time terms per batch, one panel per model × chip.

    ``terms``: model, chip, batch_seqs, term (one of ``TERM_ORDER``), time_s, step_time_s.
    """
    chart = (
        alt.Chart(named("terms"))
        .mark_bar()
        .encode(
            x=alt.X("batch_seqs:O", title=axis_title("Decode batch", "sequences"), sort=batches),
            y=alt.Y("time_s:Q", title=axis_title("Time per step, terms in series", "s"), stack="zero"),
            color=alt.Color(
                "term:N", title="Term", sort=TERM_ORDER, scale=alt.Scale(domain=TERM_ORDER, range=TERM_COLORS)
            ),
            order=alt.Order("term_order:Q"),
            tooltip=[
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("chip:N", title="Chip"),
                alt.Tooltip("batch_seqs:Q", title="Batch", format=","),
                alt.Tooltip("term:N", title="Term"),
                alt.Tooltip("time_s:Q", title="Time (s)", format=".3~g"),
                alt.Tooltip("step_time_s:Q", title="Step, lower bound (s)", format=".3~g"),
            ],
        )
        .properties(width=250, height=220)
        .facet(column=alt.Column("chip:N", title="Chip"), row=alt.Row("model:N", title="Model"))
        .resolve_scale(y="independent")
        .properties(title="Where a decode step's time goes: each term on its own (the lower bound is the largest)")
    )
    return with_datasets(chart, terms=terms)


def touched_bytes(frame: pl.DataFrame) -> ChartWithData:
    """Weight bytes a decode step reads at batch 1 and 16 against all the weights, per model (points, log).

    ``frame``: model, reading (batch 1 / batch 16 / all weights), bytes.
    """
    order = ["batch 1", "batch 16", "all weights"]
    chart = (
        alt.Chart(named("touched"))
        .transform_calculate(gigabytes="datum.bytes / 1e9")
        .mark_point(filled=True, size=60)
        .encode(
            y=alt.Y("model:N", title="Model"),
            x=alt.X("gigabytes:Q", title=axis_title("Weights read per decode step", "GB"), scale=alt.Scale(type="log")),
            color=alt.Color("reading:N", title="Reading", sort=order),
            tooltip=[
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("reading:N", title="Reading"),
                alt.Tooltip("gigabytes:Q", title="GB", format=",.1f"),
            ],
        )
        .properties(width=520, height=alt.Step(16), title="What a small batch really reads (one copy of the weights)")
    )
    return with_datasets(chart, touched=frame)
