"""Named datasets: written once at the top of the spec, floats shortened for the page, validation on demand."""

from __future__ import annotations

import math

import altair as alt
import polars as pl
import pytest

from econ.report.charts.data import SIGNIFICANT_DIGITS, compact, equals, named, with_datasets


def test_each_frame_is_written_once_and_layers_refer_to_it_by_name():
    frame = pl.DataFrame({"x": [1.0, 2.0], "name": ["a", "b"]})
    base = alt.Chart(named("points"))
    chart = alt.layer(base.mark_point().encode(x="x:Q"), base.mark_line().encode(x="x:Q"))
    spec = with_datasets(chart, points=frame).to_dict()
    assert spec["datasets"] == {"points": [{"x": 1.0, "name": "a"}, {"x": 2.0, "name": "b"}]}
    refs = [spec.get("data")] + [layer.get("data") for layer in spec["layer"]]
    assert {"name": "points"} in refs and all(r in (None, {"name": "points"}) for r in refs)
    assert "values" not in str(refs)  # no inline copy of the rows


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.027231788290123, 0.02723),
        (5299.227799, 5299.0),
        (1.4e-18, 1.4e-18),
        (0.0, 0.0),
        (-0.6, -0.6),
        (math.inf, math.inf),
        (123456789.0, 123500000.0),
    ],
)
def test_floats_keep_four_significant_digits_in_the_page(value, expected):
    assert SIGNIFICANT_DIGITS == 4
    got = compact(pl.DataFrame({"v": [value]}))["v"][0]
    assert got == pytest.approx(expected, rel=1e-12) if math.isfinite(expected) else got == expected


def test_infinities_become_null_in_the_spec_and_integers_are_untouched():
    spec = with_datasets(
        alt.Chart(named("d")).mark_point().encode(x="v:Q"), d=pl.DataFrame({"v": [math.inf, 1.0], "n": [123456789, 2]})
    ).to_dict()
    assert spec["datasets"]["d"] == [{"v": None, "n": 123456789}, {"v": 1.0, "n": 2}]


def test_altair_validates_only_when_asked():
    bad = alt.Chart(named("d")).mark_point().encode(x=alt.X("v:Q", scale=alt.Scale(type="log")))
    bad.mark = "not-a-mark"  # invalid spec structure
    wrapped = with_datasets(bad, d=pl.DataFrame({"v": [1.0]}))
    assert wrapped.to_dict()["mark"]["type"] == "not-a-mark"  # the site build skips the schema check …
    with pytest.raises(Exception, match="not-a-mark"):
        wrapped.to_dict(validate=True)  # … the chart tests do not


def test_equality_filter_takes_any_value_without_building_an_expression():
    hostile = "x' || alert(1) || '"
    assert equals("model", hostile).to_dict() == {"field": "model", "equal": hostile}
