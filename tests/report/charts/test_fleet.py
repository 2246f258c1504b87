"""Fleet charts: contract and schema, cost stacked by pool, break-even marked, the frontier's curves and plans."""

from __future__ import annotations

import polars as pl
import pytest

from econ.report.charts import fleet as charts
from econ.report.figures import _unit_specs, chart_problems

# 8 decode + 2 prefill chips at $2/chip-hour: 16 × 24 and 4 × 24 $/day (the fixture's gpu_usd_per_hour).
POOLS = pl.DataFrame(
    {
        "deployment": ["llama-70b-h100"] * 2,
        "pool": ["prefill", "decode"],
        "chips": [2, 8],
        "usd_per_chip_hour": [2.0] * 2,
        "usd_per_day": [2 * 2.0 * 24, 8 * 2.0 * 24],
    }
)
MARGINS = pl.DataFrame(
    {
        "deployment": ["llama-70b-h100"] * 2,
        "price_kind": ["scenario", "on_demand"],
        "usd_per_chip_hour": [2.0, 3.0],
        "usd_per_day": [480.0, 720.0],
        "revenue_usd_per_day": [600.0, 600.0],
    }
).with_columns((1 - pl.col("usd_per_day") / pl.col("revenue_usd_per_day")).alias("gross_margin_frac"))
POINTS = pl.DataFrame(
    {
        "model": ["Llama-3.1-70B"] * 3,
        "chip": ["H100"] * 3,
        "number_format": ["bf16"] * 3,
        "batch_seqs": [1, 64, 512],
        "tokens_per_s_per_user": [40.0, 35.0, 12.0],
        "tokens_per_s_per_chip": [5.0, 280.0, 768.0],
        "usd_per_mtok": [111.0, 1.98, 0.72],
    }
)
PLANS = pl.DataFrame(
    {
        "deployment": ["llama-70b-h100"],
        "model": ["Llama-3.1-70B"],
        "chip": ["H100"],
        "number_format": ["bf16"],
        "decode_batch_seqs": [64],
        "tokens_per_s_per_user": [35.0],
        "tokens_per_s_per_chip": [280.0],
        "usd_per_mtok": [1.98],
    }
)
SPLIT = pl.DataFrame(
    {
        "deployment": ["llama-70b-h100"] * 4,
        "mode": ["separate"] * 2 + ["time-shared"] * 2,
        "component": ["serving (sized for the peak)", "training (own chips)"] * 2,
        "chips": [16.0, 10.0, 16.0, 4.0],
    }
)

CHARTS = [
    pytest.param(lambda: charts.cost_breakdown(POOLS), id="cost-breakdown"),
    pytest.param(lambda: charts.margins(MARGINS), id="margins"),
    pytest.param(
        lambda: charts.frontier(POINTS, PLANS, y="tokens_per_s_per_chip", y_title="Throughput (tokens/s)", title="t"),
        id="frontier",
    ),
    pytest.param(lambda: charts.fleet_split(SPLIT), id="fleet-split"),
]


@pytest.mark.parametrize("make", CHARTS)
def test_every_fleet_chart_meets_the_contract_and_the_schema(make):
    assert chart_problems(make().to_dict(validate=True)) == []


def test_cost_is_stacked_by_pool_from_the_rows_given():
    spec = charts.cost_breakdown(POOLS).to_dict()
    assert spec["encoding"]["x"]["aggregate"] == "sum" and spec["encoding"]["x"]["stack"] == "zero"
    assert sum(r["usd_per_day"] for r in spec["datasets"]["pools"]) == 10 * 2.0 * 24  # chips × $/chip-hour × 24


def test_margins_mark_break_even_at_zero():
    spec = charts.margins(MARGINS).to_dict()
    rule, points = spec["layer"]
    assert rule["mark"]["type"] == "rule" and spec["datasets"]["zero"] == [
        {"gross_margin_frac": 0.0, "label": "break-even"}
    ]
    assert [r["gross_margin_frac"] for r in spec["datasets"]["margins"]] == pytest.approx(
        [0.2, -0.2]
    )  # (600 − cost)/600


def test_a_margin_far_below_break_even_does_not_squeeze_the_others():
    """The shipped data's llama-3.1-70b on TPU v5e plans at batch 1 (its speed target is out of reach) and loses 30x
    its revenue: the axis stops at -100%, the point is drawn there hollow, the others keep their room."""
    frame = MARGINS.with_columns(pl.Series("gross_margin_frac", [0.2, -30.0]))
    spec = charts.margins(frame).to_dict()
    _, points = spec["layer"]
    scale = points["encoding"]["x"]["scale"]
    assert scale["domain"] == [-1.0, 0.2] and scale["clamp"] is True
    assert "< -1.0" in points["encoding"]["fill"]["condition"]["test"]
    assert chart_problems(charts.margins(frame).to_dict(validate=True)) == []


def test_frontier_draws_each_model_chip_format_as_one_series_with_its_plan():
    spec = charts.frontier(POINTS, PLANS, y="usd_per_mtok", y_title="Decode cost (USD/MTok)", title="t").to_dict()
    lines, marks = [u for u in _unit_specs(spec) if "mark" in u]
    assert lines["encoding"]["x"]["scale"]["type"] == marks["encoding"]["y"]["scale"]["type"] == "log"
    assert (
        {r["series"] for r in spec["datasets"]["curves"]}
        == {r["series"] for r in spec["datasets"]["plans"]}
        == {"Llama-3.1-70B on H100 (bf16)"}
    )
    assert lines["encoding"]["order"]["field"] == "batch_seqs"
