"""The fast-mode chart: contract and schema, and the lecture's Opus fast mode where a.5 puts it."""

from __future__ import annotations

import polars as pl

from econ.report.charts import fast_mode as charts
from econ.report.figures import chart_problems

FAST = pl.DataFrame(
    {
        "provider": ["anthropic"],
        "model": ["claude-opus-4-6"],
        "tier_min_prompt_tokens": [0],
        "speed_ratio": [2.5],
        "output_price_ratio": [6.0],
        "batch_ratio": [15.0],
    }
)
FAST_GUIDES = pl.DataFrame(
    {
        "batch_ratio": [15.0, 15.0],
        "speed_ratio": [1.0, 3.75],
        "output_price_ratio": [15.0, 4.0],
        "label": ["m·s = 15", "m·s = 15"],
        "label_here": [False, True],
    }
)


def test_the_fast_mode_chart_meets_the_contract_and_the_schema():
    assert chart_problems(charts.fast_multiples(FAST, FAST_GUIDES).to_dict(validate=True)) == []


def test_fast_multiples_put_opus_at_six_times_the_price_for_two_and_a_half_times_the_speed():
    spec = charts.fast_multiples(FAST, FAST_GUIDES).to_dict()
    (row,) = spec["datasets"]["fast"]
    assert (row["output_price_ratio"], row["speed_ratio"], row["batch_ratio"]) == (6.0, 2.5, 15.0)  # lecture a.5
    lines, labels, dots = spec["layer"]
    assert dots["encoding"]["x"]["scale"]["type"] == "log" and labels["transform"] == [{"filter": "datum.label_here"}]
