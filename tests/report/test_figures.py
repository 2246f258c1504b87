"""Figures enforce the chart contract; records are JSON-ready."""

from __future__ import annotations

from datetime import date

import altair as alt
import polars as pl
import pytest

from econ.errors import ReportError
from econ.report.figures import Figure, chart_problems, records

FRAME = pl.DataFrame({"x": [1.0, 10.0, 100.0], "y": [2.0, 20.0, 200.0], "name": ["a", "b", "c"]})


def good_chart() -> alt.Chart:
    return (
        alt.Chart(alt.Data(values=records(FRAME)))
        .mark_point()
        .encode(
            x=alt.X("x:Q", title="Input price (USD/MTok)", scale=alt.Scale(type="log")),
            y=alt.Y("y:Q", title="Output price (USD/MTok)"),
            tooltip=[alt.Tooltip("name:N", title="Name")],
        )
        .properties(title="A chart")
    )


def spec_of(chart) -> dict:
    return chart.to_dict()


CASES = [
    pytest.param(lambda c: c.properties(title=""), ["no title"], id="no-title"),
    pytest.param(lambda c: c.encode(tooltip=alt.value(None)), ["no tooltip"], id="no-tooltip"),
    pytest.param(
        lambda c: c.encode(y=alt.Y("y:Q", title="Output price")),
        ["y axis title 'Output price' does not end with its unit in parentheses"],
        id="no-unit",
    ),
    pytest.param(lambda c: c.encode(x=alt.X("x:Q")), ["x axis of 'x' has no title"], id="no-axis-title"),
    pytest.param(lambda c: c.encode(y=alt.Y("name:N", title="Model")), [], id="nominal-axis-needs-no-unit"),
    pytest.param(lambda c: c.encode(y=alt.Y("y:Q", title="Share [ratio]")), [], id="bracket-unit"),
]


@pytest.mark.parametrize(("change", "expected"), CASES)
def test_chart_problems(change, expected):
    assert chart_problems(spec_of(change(good_chart()))) == expected


def test_chart_problems_reads_layers_and_requires_explicit_types():
    spec = {
        "title": "t",
        "layer": [
            {
                "mark": "line",
                "encoding": {
                    "x": {"field": "a", "title": "A (s)", "type": "quantitative"},
                    "y": {"field": "b", "title": "B (s)"},
                },
            },
            {"mark": {"type": "point", "tooltip": True}},
        ],
    }
    assert chart_problems(spec) == ["y encoding of 'b' has no explicit type"]


def test_figure_refuses_a_chart_without_units_and_pins_the_message():
    chart = good_chart().encode(y=alt.Y("y:Q", title="Output price"))
    with pytest.raises(ReportError) as err:
        Figure("bad", chart, FRAME, caption="c", formula="f", source="s")
    assert str(err.value) == (
        "figure bad: y axis title 'Output price' does not end with its unit in parentheses — give the chart a title, "
        "explicit encoding types, axis titles with units and a tooltip"
    )


@pytest.mark.parametrize(
    ("slug", "caption", "formula", "source", "message"),
    [
        ("Bad Slug", "c", "f", "s", "figure slug 'Bad Slug' is not lowercase-with-dashes — use [a-z0-9-] only"),
        ("ok", "c", " ", "s", "figure ok: every chart needs a formula — say what it shows, how and from where"),
        ("ok", "c", "f", "", "figure ok: every chart needs a source — say what it shows, how and from where"),
    ],
)
def test_figure_needs_caption_formula_and_source(slug, caption, formula, source, message):
    with pytest.raises(ReportError) as err:
        Figure(slug, good_chart(), FRAME, caption=caption, formula=formula, source=source)
    assert str(err.value) == message


def test_figure_spec_refers_to_nothing_online():
    fig = Figure("ok", good_chart(), FRAME, caption="c", formula="f", source="s")
    assert "$schema" not in fig.spec
    assert fig.title == "A chart"


def test_records_are_json_ready():
    frame = pl.DataFrame(
        {"d": [date(2026, 1, 2), None], "v": [float("nan"), float("inf")], "n": [1, 2], "s": ["a", None]}
    )
    assert records(frame) == [
        {"d": "2026-01-02", "v": None, "n": 1, "s": "a"},
        {"d": None, "v": None, "n": 2, "s": None},
    ]
