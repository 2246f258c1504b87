"""Prompt-cache charts: contract and schema, tier rules at device price over capacity, hold-cost bars drawn only
with two ends."""

from __future__ import annotations

import polars as pl
import pytest

from econ.report.charts import BOTH_ENDS
from econ.report.charts import cache as charts
from econ.report.figures import chart_problems

HOLD = pl.DataFrame(
    {
        "label": ["anthropic · claude-opus-4-6", "deepseek · deepseek-chat"],
        "kv_method": ["implied_kv_read", "architecture"],
        "hold_cost_usd_per_gb_hour": [4.69, 1.56],
        "hold_cost_low_usd_per_gb_hour": [0.95, 0.32],
        "hold_cost_high_usd_per_gb_hour": [12.5, 4.16],
        "tier": ["not identified: consistent with hbm,ddr", "hbm"],
    }
)
TIER_RATES = pl.DataFrame(
    {"tier": ["hbm", "ddr"], "device": ["H100 HBM3", "DDR5 host memory 2TB"], "usd_per_gb_hour": [2.0 / 80, 0.5 / 2000]}
)
COSTS = pl.DataFrame(
    [
        {
            "mechanism": m,
            "device": m,
            "hold_time_s": t,
            "cost_usd_per_mtok": c * t + r,
            "cheapest": "cheapest" if m == "ddr" else "",
        }
        for m, c, r in (("hbm", 1e-3, 0.0), ("ddr", 1e-5, 0.01), ("recompute", 0.0, 0.5))
        for t in (1.0, 60.0, 3600.0)
    ]
)
MARKS = pl.DataFrame(
    {
        "label": ["drain time of hbm", "cache duration 5 min"],
        "hold_time_s": [0.024, 300.0],
        "kind": ["drain time", "cache duration"],
    }
)


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: charts.cache_hold(HOLD, TIER_RATES), id="cache-hold"),
        pytest.param(lambda: charts.tier_costs(COSTS, MARKS, model="DeepSeek-V3"), id="tier-costs"),
    ],
)
def test_every_cache_chart_meets_the_contract_and_the_schema(make):
    assert chart_problems(make().to_dict(validate=True)) == []


def test_hold_cost_bars_are_drawn_only_where_both_ends_exist():
    """A not-identified interval (±inf, null in the page) must not draw a bar to NaN (Chromium logs an error)."""
    bar = charts.cache_hold(HOLD, TIER_RATES).to_dict()["layer"][1]
    low, high = "hold_cost_low_usd_per_gb_hour", "hold_cost_high_usd_per_gb_hour"
    assert bar["transform"] == [{"filter": BOTH_ENDS.format(low=low, high=high)}]
    assert bar["encoding"]["x"]["field"] == low


def test_cache_hold_tier_rules_are_device_price_over_capacity():
    spec = charts.cache_hold(HOLD, TIER_RATES).to_dict()
    assert [r["usd_per_gb_hour"] for r in spec["datasets"]["tiers"]] == pytest.approx([0.025, 0.00025])
    assert spec["layer"][2]["encoding"]["x"]["scale"]["type"] == "log"
