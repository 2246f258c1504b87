"""Prompt-cache prices → hold cost → memory tier, against hand arithmetic on Anthropic's published multiples.

Independent numbers: Anthropic's 5-minute write 1.25x, 1-hour write 2x and read 0.1x of a $5 input (lecture g.3),
the lecture's 2,048 B/token KV layout (f.2), and each memory tier's capacity, bandwidth and price from data/.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.fits import cache_tiers as cache
from fits.pricing_data import frames

ANTHROPIC = {
    "input_usd_per_mtok": 5.0,
    "cache_read_usd_per_mtok": 0.5,
    "cache_write_5m_usd_per_mtok": 6.25,
    "cache_write_1h_usd_per_mtok": 10.0,
    "cache_write_12h_usd_per_mtok": None,
    "cache_storage_usd_per_mtok_hour": None,
}


def price_rows(**overrides) -> pl.DataFrame:
    row = {
        "source": "hand",
        "provider": "anthropic",
        "model": "claude-opus-4-6",
        "name_key": "claude-opus-4-6",
        "variant": "standard",
        **ANTHROPIC,
        "params_active": 1e11,
        "params_total": None,
        "kv_bytes_per_token": 2048.0,
        "tier_threshold_tokens": None,
        **overrides,
    }
    return pl.DataFrame(
        [row], schema_overrides={k: pl.Float64 for k in (*ANTHROPIC, "params_total", "tier_threshold_tokens")}
    )


def test_anthropic_hold_prices_by_hand():
    """5 min: (6.25 - 5)/(5/60 h) = $15/MTok-hour; 1 h: (10 - 5)/1 h = $5/MTok-hour; cache price = premium + 0.5
    read."""
    items = cache.cache_items(price_rows()).sort("hold_time_s")
    assert items["cache_item"].to_list() == ["write_5m", "write_1h"]
    assert items["hold_price_usd_per_mtok_hour"].to_list() == pytest.approx([15.0, 5.0])
    assert items["cache_price_usd_per_mtok"].to_list() == pytest.approx([1.75, 5.5])
    assert set(items["status"]) == {"ok"}


def test_per_gb_hour_with_the_lecture_layout_by_hand():
    """2,048 B/token (lecture f.2 layout) at the scenario margin: $15/MTok-hour x (1 - m) / 2,048 B = per GB-hour."""
    a = frames()["assumptions"]
    frame = cache.with_kv_methods(cache.cache_items(price_rows()), None)
    out = cache.implied_hold_costs(frame, a).filter(pl.col("cache_item") == "write_5m").row(0, named=True)
    assert out["kv_method"] == "architecture"
    kv = 2048.0 * a.kv_scale
    margin = a.central["gross_margin_frac"]
    assert out["hold_cost_usd_per_gb_hour"] == pytest.approx(15.0 * (1 - margin) / 1e6 / kv * 1e9)
    assert (
        out["hold_cost_scenario_low_usd_per_gb_hour"]
        <= out["hold_cost_usd_per_gb_hour"]
        <= out["hold_cost_scenario_high_usd_per_gb_hour"]
    )
    assert out["fit_interval_kind"] == "not a fit"


def test_write_not_above_input_implies_no_hold_price():
    """DeepSeek/GLM-style rows publish a write price of 0 (automatic caching): no hold price is implied."""
    items = cache.cache_items(price_rows(cache_write_5m_usd_per_mtok=0.0, cache_write_1h_usd_per_mtok=None))
    assert items["status"].to_list() == ["write_not_above_input"]
    assert items["hold_price_usd_per_mtok_hour"].to_list() == [None]


def test_storage_price_is_a_hold_price_per_hour():
    items = cache.cache_items(
        price_rows(
            cache_write_5m_usd_per_mtok=None, cache_write_1h_usd_per_mtok=None, cache_storage_usd_per_mtok_hour=4.5
        )
    )
    assert items.row(0, named=True)["cache_item"] == "storage_1h"
    assert items["hold_price_usd_per_mtok_hour"].to_list() == [4.5]


def test_closed_models_get_one_row_per_kv_reading():
    slope = pl.DataFrame(
        {
            "name_key": ["claude-opus-4-6"],
            "slope_usd_per_mtok_per_mtok_context": [5.0],
            "slope_fit_low_usd_per_mtok_per_mtok_context": [-np.inf],
            "slope_fit_high_usd_per_mtok_per_mtok_context": [np.inf],
            "fit_interval_kind": ["none"],
        }
    )
    frame = cache.with_kv_methods(cache.cache_items(price_rows(kv_bytes_per_token=None)), slope)
    assert sorted(set(frame["kv_method"])) == ["crossover", "slope"]
    assert set(frame.filter(pl.col("kv_method") == "crossover")["crossover_source"]) == {"lecture L* = 200k (no tiers)"}


@pytest.fixture(scope="module")
def compared():
    a = frames()["assumptions"]
    frame = cache.implied_hold_costs(cache.with_kv_methods(cache.cache_items(price_rows()), None), a)
    frame = frame.with_columns(pl.col("params_active").alias("params_active_used")).with_row_index("row_id")
    return cache.compare_tiers(frame, frames()["memory_tiers"], a)


def test_tier_costs_by_hand(compared):
    """H100 HBM holds 2,048 B of 80 GB at $2/hour: (2,048/80e9) x 2 = $0.0512 per MTok-hour (x KV format)."""
    _, detail = compared
    a = frames()["assumptions"]
    hbm = detail.filter((pl.col("tier") == "hbm") & pl.col("device").str.contains("H100")).row(0, named=True)
    assert hbm["tier_hold_cost_usd_per_mtok_hour"] == pytest.approx(2048 * a.kv_scale / 80e9 * 2.0 * 1e6)
    assert hbm["drain_time_s"] == pytest.approx(80e9 / 3.35e12)


def test_drain_time_rule_and_cheapest_tier(compared):
    """Drain times in data/: flash 3,840 GB / 6.8 GB/s = 565 s, disk 24 TB / 285 MB/s = 23 h, DDR 4 s, HBM ~24 ms:
    5 min and 1 h are closest to flash in log terms (lecture g.4 says flash ~1 min for 5 min, disk ~1 h for 1 h)."""
    verdict, detail = compared
    by_item = {r["cache_item"]: r for r in verdict.iter_rows(named=True)}
    assert by_item["write_5m"]["drain_time_tier"] == "flash"
    assert by_item["write_1h"]["drain_time_tier"] == "flash"
    assert by_item["write_5m"]["drain_time_tier_s"] == pytest.approx(3840e9 / 6.8e9)
    # the cheapest mechanism is the argmin of the per-tier costs in the detail table
    for row_id, group in detail.group_by("row_id"):
        cheapest = group.sort("tier_cost_for_hold_time_usd_per_mtok").row(0, named=True)
        assert verdict.filter(pl.col("row_id") == row_id[0])["cheapest_tier"][0] == cheapest["tier"]
    assert all(0 < m < 1 for m in verdict["margin_over_cheapest_frac"])
    assert set(detail["tier"]) == {"recompute", "hbm", "ddr", "flash", "disk"}


def test_no_usable_item_still_has_the_kv_method_column():
    """A schedule whose only cache write is not above the input price (status write_not_above_input) gives no
    KV reading, but the frame keeps ``kv_method`` so rows of other statuses stack under it (found by econ diff)."""
    empty = pl.DataFrame(
        {"name_key": ["x"], "kv_bytes_per_token": [None], "params_active": [None]},
        schema={"name_key": pl.String, "kv_bytes_per_token": pl.Float64, "params_active": pl.Float64},
    ).clear()
    out = cache.with_kv_methods(empty, None)
    assert out.height == 0 and out.schema["kv_method"] == pl.String
