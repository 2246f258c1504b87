"""Prices charts: the contract holds, price axes are logarithmic, the guide lines are where the lecture puts them."""

from __future__ import annotations

from datetime import date, timedelta

import polars as pl
import pytest

from econ.report.charts import prices as charts
from econ.report.figures import chart_problems

SCATTER = pl.DataFrame(
    {
        "provider": ["anthropic", "anthropic", "google", "google"],
        "model": ["claude-opus-4-6", "claude-opus-4-6", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview"],
        "variant": ["fast", "standard", "standard", "standard"],
        "tier_min_prompt_tokens": [0, 0, 0, 200_000],
        "input_usd_per_mtok": [30.0, 5.0, 2.0, 4.0],
        "output_usd_per_mtok": [150.0, 25.0, 12.0, 18.0],
    }
).with_columns((pl.col("output_usd_per_mtok") / pl.col("input_usd_per_mtok")).alias("output_over_input_ratio"))

BINS = pl.DataFrame(
    {
        "source": ["hand", "hand", "litellm"],
        "ratio_low": [4.0, 5.657, 4.0],
        "ratio_high": [5.657, 8.0, 5.657],
        "price_rows": [3, 1, 10],
    }
)
CHANGES = pl.DataFrame(
    {
        "change_date": [date(2026, 11, 20)] * 3,
        "component": ["input", "input", "output"],
        "direction": ["cut", "raised", "cut"],
        "price_rows": [57, 40, 54],
    }
)
HISTORY = pl.DataFrame(
    {
        "provider": ["anthropic"] * 4,
        "model": ["claude-opus-4-6"] * 4,
        "variant": ["standard"] * 4,
        "tier_min_prompt_tokens": [0, 0, 200_000, 200_000],
        "component": ["input", "input", "output", "output"],
        "from_date": [date(2025, 11, 1), date(2026, 2, 5)] * 2,
        "usd_per_mtok": [6.0, 5.0, 30.0, 25.0],
    }
)


def layers(spec: dict) -> list[dict]:
    return spec.get("layer", [spec])


@pytest.mark.parametrize(
    ("chart", "frame"),
    [
        (charts.io_price_scatter, SCATTER),
        (charts.io_ratio_histogram, BINS),
        (charts.price_changes, CHANGES),
        (charts.first_party_history, HISTORY),
    ],
)
def test_every_prices_chart_meets_the_contract_and_the_schema(chart, frame):
    assert chart_problems(chart(frame).to_dict(validate=True)) == []


def test_scatter_is_log_log_and_its_guides_are_output_equal_to_one_and_five_times_input():
    spec = charts.io_price_scatter(SCATTER).to_dict()
    lines, labels, points = layers(spec)
    for axis in ("x", "y"):
        assert points["encoding"][axis]["scale"] == {"type": "log"}
    assert lines["data"] == labels["data"] == {"name": "guides"} and points["data"] == {"name": "prices"}
    guide = pl.DataFrame(spec["datasets"]["guides"])
    assert sorted(guide["ratio"].unique().to_list()) == [1.0, 5.0]  # lecture f.3: "3-5x ... use 5"
    ratio = guide["output_usd_per_mtok"] / guide["input_usd_per_mtok"]
    assert ((ratio / guide["ratio"] - 1).abs() < 1e-3).all()  # on the line, to the page's 4 significant digits
    assert guide["input_usd_per_mtok"].min() < 2.0 and guide["input_usd_per_mtok"].max() > 30.0  # spans every point
    assert guide.filter(pl.col("label_here"))["input_usd_per_mtok"].to_list() == [guide["input_usd_per_mtok"].max()] * 2
    assert labels["transform"] == [{"filter": "datum.label_here"}]  # one label per line, at its right end
    assert len(spec["datasets"]["prices"]) == SCATTER.height
    assert [t["field"] for t in points["encoding"]["tooltip"]][:2] == ["provider", "model"]


def test_histogram_stacks_the_sql_bins_on_a_log_ratio_axis_with_the_lecture_ratio_marked():
    spec = charts.io_ratio_histogram(BINS).to_dict()
    bars, rule = layers(spec)
    assert bars["encoding"]["x"]["scale"] == {"type": "log"} and bars["encoding"]["x2"]["field"] == "ratio_high"
    assert bars["encoding"]["y"]["aggregate"] == "sum"
    assert rule["data"] == {"name": "guide"} and rule["encoding"]["x"]["field"] == "ratio"
    assert spec["datasets"]["guide"] == [{"ratio": 5.0, "label": "lecture: output ≈ 5 × input"}]
    assert spec["datasets"]["bins"] == BINS.to_dicts()


def test_changes_put_cuts_below_zero():
    spec = charts.price_changes(CHANGES).to_dict()
    values = spec["datasets"]["changes"]
    assert [v["signed_rows"] for v in values] == [-57, 40, -54]
    assert values[0]["change_date"] == "2026-11-20"
    assert spec["encoding"]["x"]["axis"]["labelAngle"] == 0


def test_a_long_history_slants_its_dates_so_they_do_not_overlap():
    """The replayed price history has dozens of snapshot dates: level labels ran into each other on the Prices page."""
    days = [date(2025, 1, 1) + timedelta(days=30 * k) for k in range(27)]
    many = pl.DataFrame({"change_date": days, "component": "input", "direction": "cut", "price_rows": 1})
    assert charts.price_changes(many).to_dict()["encoding"]["x"]["axis"]["labelAngle"] == -45


def test_history_names_each_series_by_model_component_and_tier():
    spec = charts.first_party_history(HISTORY).to_dict()
    assert sorted({v["series"] for v in spec["datasets"]["history"]}) == [
        "claude-opus-4-6 input",
        "claude-opus-4-6 output >200k",
    ]
    assert spec["mark"]["interpolate"] == "step-after"
