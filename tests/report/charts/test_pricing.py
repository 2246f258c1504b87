"""Price-inference charts: contract and schema, log axes, intervals drawn only with two ends, guides where the lecture
puts them."""

from __future__ import annotations

import polars as pl
import pytest

from econ.report.charts import BOTH_ENDS
from econ.report.charts import pricing as charts
from econ.report.figures import _unit_specs, chart_problems

TIERS = pl.DataFrame(
    {
        "provider": ["google"] * 5,
        "model": ["gemini-3.1-pro-preview"] * 5,
        "kind": ["tier"] * 3 + ["fit"] * 2,
        "context_tokens": [0.0, 200_000.0, 1_048_576.0, 0.0, 1_048_576.0],
        "usd_per_mtok": [2.0, 4.0, 4.0, 1.6, 4.6],
        "tier_min_prompt_tokens": [0, 200_000, None, None, None],
        "status": [None, None, None, "exact", "exact"],
        "slope_usd_per_mtok_per_mtok_context": [None, None, None, 2.9, 2.9],
    }
)
KV = pl.DataFrame(
    {
        "label": ["hand · google · gemini"] * 2 + ["litellm · x · glm"] * 3,
        "reading": ["slope", "crossover", "slope", "crossover", "architecture (true)"],
        "bytes_per_token": [21972.0, 1600.0, 15625.0, 4180.0, 89856.0],
        "fit_low": [None, None, 9000.0, None, None],
        "fit_high": [None, None, 20000.0, None, None],
        "scenario_low": [5368.0, 622.0, 4000.0, 1600.0, None],
        "scenario_high": [30705.0, 8410.0, 30000.0, 20000.0, None],
    }
)
LECTURE = pl.DataFrame({"label": ["lecture f.1"], "bytes_per_token": [1667.0]})
IO = pl.DataFrame(
    {
        "provider": ["anthropic", "openai"],
        "model": ["claude-opus-4-6", "gpt-5.6-sol"],
        "variant": ["standard"] * 2,
        "output_over_input_ratio": [5.0, 8.0],
        "batch_over_balance_ratio": [0.15, 0.09],
        "batch_over_balance_scenario_low_ratio": [0.1, None],
        "batch_over_balance_scenario_high_ratio": [0.3, None],
        "critical_context_source": ["price_tier_threshold"] * 2,
        "lecture_f3_check": ["batch below"] * 2,
        "regime": ["memory_bound"] * 2,
    }
)
IO_GUIDES = pl.DataFrame({"label": ["B = B*₀", "scenario's batch m = 2"], "batch_over_balance_ratio": [1.0, 2.0]})
MARKET = pl.DataFrame(
    {
        "arch_model": ["DeepSeek-V3", "DeepSeek-V3"],
        "component": ["input", "output"],
        "providers": [5, 5],
        "predicted_usd_per_mtok": [0.3, 1.1],
        "observed_median_usd_per_mtok": [0.27, 1.1],
        "observed_low_usd_per_mtok": [0.2, 0.8],
        "observed_high_usd_per_mtok": [0.9, 2.5],
    }
)
# memory_tiers: H100 HBM $2/h for 80 GB; DDR5 2 TB at $0.5/h (fixture rows)

CHARTS = [
    pytest.param(lambda: charts.tier_prices(TIERS), id="tier-prices"),
    pytest.param(lambda: charts.implied_kv(KV, LECTURE), id="implied-kv"),
    pytest.param(lambda: charts.io_batch(IO, IO_GUIDES), id="io-batch"),
    pytest.param(lambda: charts.market(MARKET), id="market"),
]


@pytest.mark.parametrize("make", CHARTS)
def test_every_pricing_chart_meets_the_contract_and_the_schema(make):
    assert chart_problems(make().to_dict(validate=True)) == []


def marks(spec):
    return [u for u in _unit_specs(spec) if "mark" in u]


def test_tier_prices_facet_by_provider_with_steps_and_the_fitted_line():
    spec = charts.tier_prices(TIERS).to_dict()
    assert spec["facet"]["field"] == "provider" and spec["resolve"]["scale"]["y"] == "independent"
    steps, fit, labels = spec["spec"]["layer"]
    assert labels["mark"]["type"] == "text" and labels["encoding"]["text"]["field"] == "model"  # lines labelled
    assert steps["mark"]["interpolate"] == "step-after" and steps["transform"] == [
        {"filter": {"field": "kind", "equal": "tier"}}
    ]
    assert fit["transform"] == [{"filter": {"field": "kind", "equal": "fit"}}]


@pytest.mark.parametrize(
    ("chart", "layer", "low", "high"),
    [
        (lambda: charts.implied_kv(KV, LECTURE), 1, "scenario_low", "scenario_high"),
        (lambda: charts.implied_kv(KV, LECTURE), 2, "fit_low", "fit_high"),
        (
            lambda: charts.io_batch(IO, IO_GUIDES),
            1,
            "batch_over_balance_scenario_low_ratio",
            "batch_over_balance_scenario_high_ratio",
        ),
    ],
)
def test_interval_bars_are_drawn_only_where_both_ends_exist(chart, layer, low, high):
    """A not-identified fit interval (±inf, null in the page) must not draw a bar to NaN (Chromium logs an error)."""
    bar = chart().to_dict()["layer"][layer]
    assert bar["transform"] == [{"filter": BOTH_ENDS.format(low=low, high=high)}]
    assert bar["encoding"]["x" if "x2" in bar["encoding"] else "y"]["field"] == low


def test_a_chart_whose_intervals_are_all_unidentified_draws_no_interval_layer():
    exact = KV.with_columns(pl.lit(None, pl.Float64).alias("fit_low"), pl.lit(float("inf")).alias("fit_high"))
    spec = charts.implied_kv(exact, LECTURE).to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["rule", "rule", "point"]  # guides, scenario, dots
    assert "fit_low" not in str([layer.get("transform") for layer in spec["layer"]])


def test_implied_kv_keeps_the_fit_and_scenario_intervals_apart_and_shows_true_values():
    spec = charts.implied_kv(KV, LECTURE).to_dict()
    rules, scenario, fit, dots = spec["layer"]
    assert scenario["mark"]["strokeWidth"] < fit["mark"]["strokeWidth"]  # thin: scenario; thick: fit
    assert dots["encoding"]["color"]["scale"]["domain"] == ["slope", "crossover", "architecture (true)"]
    assert spec["datasets"]["guides"] == [{"label": "lecture f.1", "bytes_per_token": 1667.0}]


def test_market_diagonal_spans_every_point():
    spec = charts.market(MARKET).to_dict()
    diagonal = spec["datasets"]["diagonal"]
    assert diagonal[0]["predicted_usd_per_mtok"] < 0.2 and diagonal[1]["predicted_usd_per_mtok"] > 2.5
    assert all(d["predicted_usd_per_mtok"] == d["observed_median_usd_per_mtok"] for d in diagonal)
