"""Charts of the Serving page: the latency and cost rooflines against batch, balance batch and drain time by
chip, what fits in memory against context, and where attention FLOPs overtake the weights."""

from __future__ import annotations

import altair as alt
import polars as pl

from econ.report.charts import HEIGHT, WIDTH, axis_title, guide_rule
from econ.report.charts.data import ChartWithData, equals, named, with_datasets

BOUND_DOMAIN = ["memory", "compute", "communication"]
BOUND_SHAPES = ["circle", "square", "triangle"]
FIT_DOMAIN = ["fits", "does not fit"]
MODEL_PALETTE = ["#1f5fa8", "#e4892b", "#3b9c5a", "#c4424b", "#7a5aa8", "#8a6d3b"]

LATENCY_CHART_MAX_S = 10.0
"""Longest decode step the latency chart draws (the rows stay in its CSV): beyond it the axis would run to
hundreds of seconds per token and squash the region where serving happens."""
CURVE_METRICS = {
    # metric -> (column, axis quantity, unit, title)
    "latency": (
        "decode_step_time_s",
        "Decode step time per output token",
        "s",
        "Decode latency per token against batch",
    ),
    "cost": ("output_usd_per_mtok", "Output cost", "USD/MTok", "Decode cost per token against batch"),
}


BINARY_LABELS = (
    "datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + 'M' : "
    "datum.value >= 1024 ? format(datum.value / 1024, '~g') + 'k' : format(datum.value, '~g')"
)


def binary_axis(values: list[int] | None = None) -> alt.Axis:
    """Powers-of-two axis labels as 1k = 1,024 and 1M = 1,048,576 (the sweep's grid), not SI's 1.024k."""
    return alt.Axis(values=values, labelExpr=BINARY_LABELS) if values else alt.Axis(labelExpr=BINARY_LABELS)


def model_color(models: list[str]) -> alt.Color:
    """A fixed colour per model of the selection, so every panel and legend agrees."""
    return alt.Color("model:N", title="Model", scale=alt.Scale(domain=models, range=MODEL_PALETTE[: len(models)]))


def roofline_panels(
    curves: pl.DataFrame, marks: pl.DataFrame, *, metric: str, models: list[str], chips: list[str]
) -> ChartWithData:
    """Latency or cost per token against batch, one panel per chip, log–log.

    ``curves``: model, chip, context_tokens, batch_seqs, decode_step_time_s, output_usd_per_mtok,
    decode_bound (compute/memory), fit (fits/does not fit), replica_chips. ``marks``: model, chip,
    balance_batch_seqs (B*₀, a vertical rule on every panel) and latency_floor_s (a horizontal
    rule on the latency panels). Points are shaped by the bound that sets the step (the
    roofline regime) and faded where weights + KV do not fit the replica's HBM.
    """
    column, quantity, unit, title = CURVE_METRICS[metric]
    data = curves.join(marks, on=["model", "chip"], how="left").with_columns(
        (pl.col("batch_seqs") == pl.col("batch_seqs").min().over("model", "chip", "context_tokens")).alias("first")
    )
    x_title = axis_title("Decode batch B", "sequences")
    x = alt.X(
        "batch_seqs:Q",
        title=x_title,
        scale=alt.Scale(type="log", base=2),
        axis=binary_axis([1, 8, 64, 512, 4096, 32768]),
    )
    y = alt.Y(f"{column}:Q", title=axis_title(quantity, unit), scale=alt.Scale(type="log"))
    color = model_color(models)
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("chip:N", title="Chip"),
        alt.Tooltip("replica_chips:Q", title="Chips per replica"),
        alt.Tooltip("context_tokens:Q", title="Context (tokens)", format=","),
        alt.Tooltip("batch_seqs:Q", title="Batch (sequences)", format=","),
        alt.Tooltip("decode_step_time_s:Q", title="Step time (s)", format=".3~g"),
        alt.Tooltip("output_usd_per_mtok:Q", title="Output cost (USD/MTok)", format=",.3~g"),
        alt.Tooltip("decode_bound:N", title="Bound"),
        alt.Tooltip("fit:N", title="Memory"),
        alt.Tooltip("balance_batch_seqs:Q", title="B*₀ (sequences)", format=",.0f"),
        alt.Tooltip("latency_floor_s:Q", title="Latency floor (s)", format=".3~g"),
    ]
    base = alt.Chart()
    line = base.mark_line(strokeWidth=1.5).encode(x=x, y=y, color=color, detail="model:N")
    points = base.mark_point(filled=True, size=38).encode(
        x=x,
        y=y,
        color=color,
        shape=alt.Shape("decode_bound:N", title="Step bound", scale=alt.Scale(domain=BOUND_DOMAIN, range=BOUND_SHAPES)),
        opacity=alt.Opacity(
            "fit:O", title="Weights + KV in HBM", sort=FIT_DOMAIN, scale=alt.Scale(domain=FIT_DOMAIN, range=[1.0, 0.25])
        ),
        tooltip=tooltip,
    )
    firsts = base.transform_filter("datum.first")
    layers = [
        line,
        points,
        firsts.mark_rule(strokeDash=[6, 3], strokeWidth=1.2).encode(
            x=alt.X("balance_batch_seqs:Q", title=x_title), color=color, tooltip=tooltip
        ),
    ]
    if metric == "latency":
        layers.append(
            firsts.mark_rule(strokeDash=[2, 2], strokeWidth=1.2).encode(
                y=alt.Y("latency_floor_s:Q", title=axis_title(quantity, unit)), color=color, tooltip=tooltip
            )
        )
    chart = alt.layer(*layers, data=named("curves"))
    if metric == "latency":  # a step of seconds per token is no serving point: keep the 1-100 ms region readable
        chart = chart.transform_filter(f"datum.decode_step_time_s <= {LATENCY_CHART_MAX_S}")
    chart = (
        chart.properties(width=270, height=260)
        .facet(column=alt.Column("chip:N", title="Chip", sort=chips))
        .properties(title=title)
    )
    return with_datasets(chart, curves=data)


def balance_and_drain(balance: pl.DataFrame, drain: pl.DataFrame, *, models: list[str]) -> alt.HConcatChart:
    """B*₀ of each selected model on every chip (log) beside the chip's HBM drain time C/W.

    ``balance``: chip, model, number_format, balance_batch_seqs, critical_batch_ratio.
    ``drain``: chip, hbm_drain_time_s, hbm_capacity_bytes, hbm_bandwidth_bytes_per_s.
    """
    chip_order = sorted(drain["chip"].unique().to_list())
    y = alt.Y("chip:N", title="Chip", sort=chip_order)
    left = (
        alt.Chart(named("balance"))
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X(
                "balance_batch_seqs:Q",
                title=axis_title("Balance batch B*0", "sequences"),
                scale=alt.Scale(type="log"),
                axis=alt.Axis(labelOverlap="greedy"),
            ),
            y=y,
            color=model_color(models),
            tooltip=[
                alt.Tooltip("chip:N", title="Chip"),
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("number_format:N", title="Format"),
                alt.Tooltip("critical_batch_ratio:Q", title="R", format=",.0f"),
                alt.Tooltip("balance_batch_seqs:Q", title="B*₀ (sequences)", format=",.0f"),
            ],
        )
        .properties(width=300, height=max(160, 18 * len(chip_order)), title="B*0 = R x N_tot / N_act")
    )
    right = (
        alt.Chart(named("drain"))
        .mark_bar(color="#8a94a3")
        .encode(
            x=alt.X("hbm_drain_time_s:Q", title=axis_title("HBM drain time C/W", "s")),
            y=alt.Y("chip:N", title="Chip", sort=chip_order, axis=alt.Axis(labels=False, title=None)),
            tooltip=[
                alt.Tooltip("chip:N", title="Chip"),
                alt.Tooltip("hbm_drain_time_s:Q", title="Drain time (s)", format=".3~g"),
                alt.Tooltip("hbm_capacity_bytes:Q", title="HBM (bytes)", format=".3~s"),
                alt.Tooltip("hbm_bandwidth_bytes_per_s:Q", title="HBM bandwidth (bytes/s)", format=".3~s"),
            ],
        )
        .properties(width=220, height=max(160, 18 * len(chip_order)), title="Drain time = capacity / bandwidth")
    )
    chart = alt.hconcat(left, right).properties(title="Balance batch and HBM drain time by chip")
    return with_datasets(chart, balance=balance, drain=drain)


def memory_fit(frame: pl.DataFrame, *, models: list[str], context_tokens: float | None) -> alt.LayerChart:
    """Largest batch (on the sweep's power-of-two grid) whose weights and KV fit the replica, against context.

    ``frame``: model, chip, replica_chips, context_tokens, max_batch_seqs (null where not even one
    sequence fits).
    """
    x = alt.X(
        "context_tokens:Q",
        title=axis_title("Context L", "tokens"),
        scale=alt.Scale(type="log", base=2),
        axis=binary_axis([1024, 4096, 16384, 65536, 262144, 1048576]),
    )
    lines = (
        alt.Chart(named("fit"))
        .mark_line(point=True)
        .encode(
            x=x,
            y=alt.Y(
                "max_batch_seqs:Q",
                title=axis_title("Largest batch that fits in HBM", "sequences"),
                scale=alt.Scale(type="log", base=2),
                axis=binary_axis(),
            ),
            color=model_color(models),
            strokeDash=alt.StrokeDash("chip:N", title="Chip"),
            tooltip=[
                alt.Tooltip("model:N", title="Model"),
                alt.Tooltip("chip:N", title="Chip"),
                alt.Tooltip("replica_chips:Q", title="Chips per replica"),
                alt.Tooltip("context_tokens:Q", title="Context (tokens)", format=","),
                alt.Tooltip("max_batch_seqs:Q", title="Largest batch (sequences)", format=","),
            ],
        )
    )
    guide = _scenario_guide(context_tokens)
    layers = [lines, *_scenario_rule(guide, x)]
    chart = alt.layer(*layers).properties(
        title="What fits in memory: largest batch against context", width=WIDTH, height=HEIGHT
    )
    return with_datasets(chart, fit=frame, guide=guide)


def _scenario_guide(context_tokens: float | None) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "context_tokens": [float(context_tokens)] if context_tokens else [],
            "label": ["scenario context"] if context_tokens else [],
        },
        schema={"context_tokens": pl.Float64, "label": pl.String},
    )


def _scenario_rule(guide: pl.DataFrame, x: alt.X) -> list[alt.Chart]:
    """The scenario's context as a guide line on ``x`` (none when the scenario sets no context)."""
    return [guide_rule("guide", x, alt.Tooltip("context_tokens:Q", title="Tokens", format=","))] if guide.height else []


def attention_crossover(frame: pl.DataFrame, *, context_tokens: float | None) -> alt.LayerChart:
    """Context where attention FLOPs per decode token equal the weights' 2·N_act, per model (log).

    ``frame``: model, attention, crossover_context_tokens, crossover_context_absorbed_mla_tokens,
    attention_over_weight_flop_at_128k_ratio (models that never cross are left out by the caller).
    """
    order = frame.sort("crossover_context_tokens")["model"].to_list()
    x_title = axis_title("Context where attention FLOPs = weight FLOPs", "tokens")
    y = alt.Y("model:N", title="Model", sort=order)
    tooltip = [
        alt.Tooltip("model:N", title="Model"),
        alt.Tooltip("attention:N", title="Attention"),
        alt.Tooltip("crossover_context_tokens:Q", title="Crossover (tokens)", format=",.0f"),
        alt.Tooltip("crossover_context_absorbed_mla_tokens:Q", title="Crossover, MLA absorbed (tokens)", format=",.0f"),
        alt.Tooltip("attention_over_weight_flop_at_128k_ratio:Q", title="Attention/weights at 128k", format=".3~g"),
    ]
    bars = (
        alt.Chart(named("crossover"))
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X(
                "crossover_context_tokens:Q", title=x_title, scale=alt.Scale(type="log", base=2), axis=binary_axis()
            ),
            y=y,
            color=alt.Color("attention:N", title="Attention"),
            tooltip=tooltip,
        )
    )
    absorbed = (
        alt.Chart(named("crossover"))
        .transform_filter(equals("attention", "mla"))
        .mark_tick(color="#111", thickness=2, size=12)
        .encode(x=alt.X("crossover_context_absorbed_mla_tokens:Q", title=x_title), y=y, tooltip=tooltip)
    )
    guide = _scenario_guide(context_tokens)
    layers = [bars, absorbed, *_scenario_rule(guide, alt.X("context_tokens:Q", title=x_title))]
    chart = alt.layer(*layers).properties(
        title="Where attention overtakes the weights (FLOPs per decode token)",
        width=WIDTH,
        height=max(160, 13 * len(order)),
    )
    return with_datasets(chart, crossover=frame, guide=guide)
