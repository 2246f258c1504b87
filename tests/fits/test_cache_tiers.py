"""Prompt-cache prices → premium(T) = w + h·T → hold cost per GB-hour → the consistent memory tiers.

Independent numbers: Anthropic's 5-minute write 1.25x and 1-hour write 2x of a $5 input (lecture g.3) by hand;
synthetic cache prices made from one memory tier's holding cost (memory_tiers: its rental-equivalent $/GB-hour, the
one cost basis) on an open architecture, which must identify that tier; a 100x price that must change the answer or
the status; the distance to a tier boundary by hand.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.analyses.fit_cache_tiers import held_bytes, tables
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
PRICE_COLUMNS = tuple(ANTHROPIC)


def rows(**overrides) -> pl.DataFrame:
    return pl.DataFrame([{**ANTHROPIC, **overrides}], schema={c: pl.Float64 for c in PRICE_COLUMNS})


def test_two_durations_separate_the_write_from_the_hold_by_hand():
    """Premiums 1.25 at 1/12 h and 5 at 1 h: h = 3.75/(11/12) $/MTok-hour, w = 1.25 - h/12."""
    out = cache.fit_premiums(rows()).row(0, named=True)
    h = 3.75 / (11 / 12)
    assert out["premium_fit_status"] == "exact" and out["durations_sold"] == "5m,1h"
    assert out["hold_price_usd_per_mtok_hour"] == pytest.approx(h)
    assert out["write_usd_per_mtok"] == pytest.approx(1.25 - h / 12)
    assert out["hold_price_low_usd_per_mtok_hour"] == out["hold_price_high_usd_per_mtok_hour"]


def test_one_duration_only_bounds_the_hold_price():
    out = cache.fit_premiums(rows(cache_write_1h_usd_per_mtok=None)).row(0, named=True)
    assert out["premium_fit_status"] == "one_duration"
    assert (out["hold_price_low_usd_per_mtok_hour"], out["hold_price_high_usd_per_mtok_hour"]) == pytest.approx(
        (0.0, 1.25 * 12)
    )


def test_a_storage_price_is_the_hold_price_and_a_write_at_input_holds_nothing():
    out = cache.fit_premiums(
        rows(cache_write_5m_usd_per_mtok=None, cache_write_1h_usd_per_mtok=None, cache_storage_usd_per_mtok_hour=4.5)
    ).row(0, named=True)
    assert out["premium_fit_status"] == "storage_price" and out["hold_price_usd_per_mtok_hour"] == 4.5
    assert out["durations_sold"] == "storage"
    flat = cache.fit_premiums(rows(cache_write_5m_usd_per_mtok=5.0, cache_write_1h_usd_per_mtok=None)).row(
        0, named=True
    )
    assert flat["premium_fit_status"] == "write_not_above_input" and flat["hold_price_usd_per_mtok_hour"] is None


# ---------------------------------------------------------------------------- synthetic prices from one tier

MODEL = "DeepSeek-V3"


def synthetic(tier: str, scale: float = 1.0) -> pl.DataFrame:
    """An open model's cache prices made from one memory tier's holding cost (its first device) at the scenario's
    margin: h = cost per GB-hour x b_held / (1 - margin), plus a one-off write premium of 0.3 $/MTok."""
    f = frames()
    a = f["assumptions"]
    device = f["memory_tiers"].filter(pl.col("tier") == tier).sort("device").row(0, named=True)
    per_gb_hour = device["rental_usd_per_gb_hour"]
    held = held_bytes(f["serving"]).filter(pl.col("arch_model") == MODEL)["held"][0]
    h = scale * per_gb_hour * held / 1e9 * 1e6 / (1 - a.central["gross_margin_frac"])
    return pl.DataFrame(
        {
            "source": ["hand"],
            "provider": ["deepseek"],
            "model": [MODEL],
            "variant": ["standard"],
            "tier_min_prompt_tokens": [0],
            "input_usd_per_mtok": [1.0],
            "output_usd_per_mtok": [2.0],
            "cache_read_usd_per_mtok": [0.1],
            "cache_write_5m_usd_per_mtok": [1.0 + 0.3 + h * 300 / 3600],
            "cache_write_1h_usd_per_mtok": [1.0 + 0.3 + h],
            "cache_write_12h_usd_per_mtok": [None],
            "cache_storage_usd_per_mtok_hour": [None],
        },
        schema_overrides={"cache_write_12h_usd_per_mtok": pl.Float64, "cache_storage_usd_per_mtok_hour": pl.Float64},
    )


def read(prices: pl.DataFrame) -> dict:
    f = frames()
    main, detail = tables(prices, f["models"], f["memory_tiers"], f["assumptions"], f["serving"])
    assert main.height == 1 and detail.height == f["memory_tiers"].height
    return main.row(0, named=True)


@pytest.mark.parametrize("tier", ["hbm", "ddr", "disk"])
def test_a_price_made_from_one_tier_identifies_that_tier(tier):
    r = read(synthetic(tier))
    assert r["kv_method"] == "architecture" and r["premium_fit_status"] == "exact"
    assert (r["identified_tier"], r["tier_status"]) == (tier, "identified")
    assert r["nearest_tier"] == tier and r["boundary_distance_ratio"] > 1.0


@pytest.mark.parametrize("tier", ["hbm", "disk"])
def test_scaling_a_cache_price_100x_changes_the_answer_or_the_status(tier):
    before, after = read(synthetic(tier)), read(synthetic(tier, scale=100.0))
    assert (before["identified_tier"], before["tier_status"]) != (after["identified_tier"], after["tier_status"])
    assert after["hold_cost_usd_per_gb_hour"] == pytest.approx(100 * before["hold_cost_usd_per_gb_hour"])


def test_real_anthropic_prices_get_what_the_data_supports():
    """Closed models hold bytes nobody publishes: b_held spans the open models' range (not the bytes a decode step
    reads per context token), so several tiers stay consistent (or none): no tier is named without being the only
    consistent one, and every tier is priced on the rental basis."""
    f = frames()
    main, detail = tables(f["price_current"], f["models"], f["memory_tiers"], f["assumptions"], f["serving"])
    sonnet = main.filter(  # Haiku 5.5: Sonnet 4.5 has had no long-context tier since its 1M beta ended (2026-04-30)
        (pl.col("provider") == "anthropic")
        & (pl.col("model") == "claude-haiku-5-5")
        & (pl.col("variant") == "standard")
    ).row(0, named=True)
    assert sonnet["kv_method"] == "open models' range" and sonnet["premium_fit_status"] == "exact"
    assert sonnet["kv_low_bytes_per_token"] < sonnet["kv_bytes_per_token_used"] < sonnet["kv_high_bytes_per_token"]
    named = main.filter(pl.col("identified_tier").is_not_null())
    assert (named["tier_status"] == "identified").all()
    several = main.filter(pl.col("tier_status").str.starts_with("not identified"))
    assert several.height > 0 and (several["consistent_tiers"].str.contains(",")).all()
    assert np.isfinite(sonnet["hold_cost_low_usd_per_gb_hour"]) and sonnet["hold_cost_low_usd_per_gb_hour"] > 0
    assert set(detail["tier_cost_basis"]) == {"rental"}


def test_boundary_distance_by_hand():
    """Tiers at 1, 100 and 10,000 $/GB-h: boundaries at 10 and 1,000. A cost of 30 is nearest 100, 3x from the
    boundary at 10; 5 is nearest 1, 2x below 10; 1e6 is nearest 10,000 with no boundary above (100x from 1,000)."""
    near, flip = cache.boundary_distance([30.0, 5.0, 1e6, np.nan], [100.0, 1.0, 10_000.0])
    assert near.tolist() == [0, 1, 2, -1]
    assert flip[:3] == pytest.approx([3.0, 2.0, 1000.0]) and np.isnan(flip[3])
