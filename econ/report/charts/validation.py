"""Charts of the Validation page: predicted against measured operating points (log–log, y = x and ±1.5× bands)."""

from __future__ import annotations

import altair as alt
import polars as pl

from econ.report.charts import axis_title, chip_color
from econ.report.charts.data import ChartWithData, named, with_datasets

BAND = 1.5
BASES = ("roofline bound", "calibrated, source held out")


def predicted_vs_measured(points: pl.DataFrame) -> ChartWithData:
    """One panel per basis of :data:`BASES` (the roofline bound; the calibrated prediction with the point's source
    held out):
    predicted against measured, coloured by chip, shaped by engine, with y = x and the ±1.5× band.

    ``points``: basis, point_id, source, chip, engine, arch_model, regime, measured_quantity, measured_value,
    predicted_value.
    """
    low = float(points["measured_value"].min()) / 2
    high = float(points["measured_value"].max()) * 2
    lines = pl.DataFrame(
        {
            "x": [low, high] * 3,
            "y": [low, high, low * BAND, high * BAND, low / BAND, high / BAND],
            "line": ["y = x"] * 2 + ["×1.5"] * 2 + ["÷1.5"] * 2,
        }
    )
    log = alt.Scale(type="log", domain=[low, high], nice=False)
    guides = (
        alt.Chart(named("guides"))
        .mark_line(color="#888", strokeWidth=1)
        .encode(
            x=alt.X("x:Q", scale=log, title=axis_title("Measured", "tokens/s")),
            y=alt.Y("y:Q", scale=log, title=axis_title("Predicted", "tokens/s")),
            detail="line:N",
            strokeDash=alt.condition(alt.datum.line == "y = x", alt.value([1, 0]), alt.value([4, 3])),
        )
    )
    marks = (
        alt.Chart(named("points"))
        .mark_point(filled=True, size=55, opacity=0.85)
        .encode(
            x=alt.X("measured_value:Q", scale=log, title=axis_title("Measured", "tokens/s")),
            y=alt.Y("predicted_value:Q", scale=log, title=axis_title("Predicted", "tokens/s")),
            color=chip_color(points["chip"].unique()),
            shape=alt.Shape("engine:N", title="Engine"),
            tooltip=[
                alt.Tooltip("point_id:N", title="Point"),
                alt.Tooltip("source:N", title="Source"),
                alt.Tooltip("arch_model:N", title="Model"),
                alt.Tooltip("chip:N", title="Chip"),
                alt.Tooltip("engine:N", title="Engine"),
                alt.Tooltip("regime:N", title="Regime"),
                alt.Tooltip("measured_quantity:N", title="Quantity"),
                alt.Tooltip("measured_value:Q", title="Measured", format=",.4~g"),
                alt.Tooltip("predicted_value:Q", title="Predicted", format=",.4~g"),
            ],
        )
    )
    panels = [
        alt.layer(guides, marks.transform_filter(alt.datum.basis == basis)).properties(
            width=360, height=340, title=basis
        )
        for basis in BASES
    ]
    chart = alt.hconcat(*panels).properties(
        title="Predicted against measured: a perfect prediction sits on y = x; dashed lines are ×1.5 and ÷1.5"
    )
    return with_datasets(chart, points=points, guides=lines)


def runs_density(cells: pl.DataFrame) -> ChartWithData:
    """Held-out prediction against measurement for the InferenceX runs, one panel per target (TTFT, TPOT): a 2-d
    histogram on log axes (how many runs fall in each cell), with y = x and the ±1.5× and ±2× lines.

    ``cells``: target, x_low_ms, x_high_ms, y_low_ms, y_high_ms, runs (one row per non-empty cell).
    """
    low = float(cells["x_low_ms"].min())
    high = float(cells["x_high_ms"].max())
    lines = pl.DataFrame(
        {
            "x": [low, high] * 5,
            "y": [low, high, low * 1.5, high * 1.5, low / 1.5, high / 1.5, low * 2, high * 2, low / 2, high / 2],
            "line": ["y = x"] * 2 + ["×1.5"] * 2 + ["÷1.5"] * 2 + ["×2"] * 2 + ["÷2"] * 2,
        }
    )
    log = alt.Scale(type="log", domain=[low, high], nice=False)
    guides = (
        alt.Chart(named("guides"))
        .mark_line(color="#555", strokeWidth=1)
        .encode(
            x=alt.X("x:Q", scale=log, title=axis_title("Measured", "ms")),
            y=alt.Y("y:Q", scale=log, title=axis_title("Predicted, model held out", "ms")),
            detail="line:N",
            strokeDash=alt.condition(alt.datum.line == "y = x", alt.value([1, 0]), alt.value([4, 3])),
        )
    )
    rects = (
        alt.Chart(named("cells"))
        .mark_rect()
        .encode(
            x=alt.X("x_low_ms:Q", scale=log, title=axis_title("Measured", "ms")),
            x2="x_high_ms:Q",
            y=alt.Y("y_low_ms:Q", scale=log, title=axis_title("Predicted, model held out", "ms")),
            y2="y_high_ms:Q",
            color=alt.Color("runs:Q", scale=alt.Scale(type="log", scheme="blues"), title="Runs"),
            tooltip=[
                alt.Tooltip("target:N", title="Target"),
                alt.Tooltip("x_low_ms:Q", title="Measured from (ms)", format=",.3~g"),
                alt.Tooltip("y_low_ms:Q", title="Predicted from (ms)", format=",.3~g"),
                alt.Tooltip("runs:Q", title="Runs"),
            ],
        )
    )
    panels = [
        alt.layer(rects.transform_filter(alt.datum.target == target), guides).properties(
            width=340, height=320, title=title
        )
        for target, title in (("ttft", "Time to first token"), ("tpot", "Time per output token"))
    ]
    chart = alt.hconcat(*panels).properties(
        title="InferenceX runs: held-out prediction against measurement (dashed: ×1.5 and ×2)"
    )
    return with_datasets(chart, cells=cells, guides=lines)
