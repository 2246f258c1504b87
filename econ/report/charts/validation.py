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
