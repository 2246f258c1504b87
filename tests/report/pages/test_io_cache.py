"""Input/output & cache page: ratios from the fixture's prices, memory-tier costs and drain times from its
memory_tiers file, and a cache tier named only where the prices identify one."""

from __future__ import annotations

import polars as pl
import pytest

from ..html_tables import read_tables
from ..specs import chart_spec, figure_text, rows

TIERS = rows("memory_tiers")


def test_output_input_ratio_is_read_from_the_published_prices(built_report):
    hand = {
        (r["provider"], r["model"]): float(r["output_usd_per_mtok"]) / float(r["input_usd_per_mtok"])
        for r in rows("prices")
        if r["variant"] == "standard" and r["tier_min_prompt_tokens"] == "0"
    }
    table = read_tables(built_report / "io-cache.html")["io-prices"]
    shown = {(r["Provider"], r["Model"]): float(r["ρ (ratio)"]) for r in table if (r["Provider"], r["Model"]) in hand}
    assert shown == pytest.approx({k: round(v, 2) for k, v in hand.items()}, rel=5e-3)  # opus 25/5 = 5, gemini 12/2 = 6


def test_memory_tier_hold_costs_are_device_price_over_capacity(built_report):
    spec = chart_spec(built_report / "io-cache.html", "cache-hold")
    got = {r["tier"]: r["usd_per_gb_hour"] for r in spec["datasets"]["tiers"]}
    expected = {r["tier"]: float(r["usd_per_hour"]) / float(r["capacity_gb"]) for r in TIERS}
    assert got == pytest.approx(expected, rel=1e-3)  # HBM: $2/h for 80 GB = 0.025 $/GB-hour


def test_drain_times_are_capacity_over_bandwidth(built_report):
    costs = pl.read_csv(built_report / "io-cache" / "tier-costs.csv.gz")
    drains = dict(
        costs.filter(pl.col("mechanism") != "recompute")
        .group_by("mechanism")
        .agg(pl.col("drain_time_s").first())
        .iter_rows()
    )
    expected = {r["tier"]: float(r["capacity_gb"]) / float(r["bandwidth_gb_per_s"]) for r in TIERS}
    assert drains == pytest.approx(expected, rel=1e-3)
    assert drains["hbm"] == pytest.approx(0.024, abs=0.001) and drains["ddr"] == pytest.approx(10.0)  # a.6, g.4
    assert "drain time" in figure_text(built_report / "io-cache.html", "tier-costs")


def test_market_chart_compares_each_models_median_price_with_the_regression(built_report):
    data = pl.read_csv(built_report / "io-cache" / "io-market.csv.gz")
    assert (data["observed_low_usd_per_mtok"] <= data["observed_median_usd_per_mtok"]).all()
    assert (data["observed_median_usd_per_mtok"] <= data["observed_high_usd_per_mtok"]).all()
    assert set(data["component"]) <= {"input", "output"} and data.height >= 2


def test_an_impossible_implied_mbu_is_flagged_next_to_it(built_report):
    """An efficiency above 1 is physically impossible: wherever the table shows one, its check says so."""
    table = read_tables(built_report / "io-cache.html")["io-prices"]
    for r in table:
        value = r["Implied decode mbu (frac)"]
        if value and float(value.replace(",", "")) > 1:
            assert r["Mbu check"].startswith("above 1")
        elif value:
            assert r["Mbu check"] == "within 0-1"
    assert any(r["Mbu check"] for r in table)
