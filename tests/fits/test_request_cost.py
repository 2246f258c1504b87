"""Billing a request at a schedule's rows: the tier is chosen by the whole prompt (strictly above the threshold) and
prices every component; a missing cache price is billed as input and said so. Rates are Anthropic's Claude Sonnet 4.5
($3/$15, above 200K $6/$22.50; reads 0.1x, 5-minute writes 1.25x, 1-hour writes 2x input: platform.claude.com pricing
and prompt-caching pages), hand-computed."""

from __future__ import annotations

import polars as pl
import pytest

from econ.fits import request_cost as rc

SCHEDULE = pl.DataFrame(
    {
        "schedule": ["s", "s"],
        "tier_min_prompt_tokens": [0, 200_000],
        "input_usd_per_mtok": [3.0, 6.0],
        "output_usd_per_mtok": [15.0, 22.5],
        "cache_read_usd_per_mtok": [0.3, 0.6],
        "cache_write_5m_usd_per_mtok": [3.75, 7.5],
        "cache_write_1h_usd_per_mtok": [6.0, None],
        "cache_storage_usd_per_mtok_hour": [None, None],
    }
)


def bill(input_tokens, output_tokens, cached=0, written=0, ttl="5m", hours=0.0, schedule=SCHEDULE) -> dict:
    request = pl.DataFrame(
        {
            "request": [0],
            "input_tokens": [input_tokens],
            "cached_input_tokens": [cached],
            "cache_write_tokens": [written],
            "output_tokens": [output_tokens],
            "cache_ttl": [ttl],
            "cache_storage_hours": [hours],
        }
    )
    return rc.request_costs(rc.billed_tier(request, schedule)).row(0, named=True)


@pytest.mark.parametrize(
    ("tokens", "tier", "usd"),
    [
        ((200_000, 1_000), 0, 0.6 + 0.015),  # exactly 200,000 does not exceed 200,000
        ((200_001, 1_000), 200_000, 1.200006 + 0.0225),  # one more bills every token at the tier
        ((50_000, 2_000, 160_000), 200_000, 0.3 + 0.096 + 0.045),  # cache reads count toward the threshold
    ],
)
def test_the_tier_is_chosen_by_the_whole_prompt(tokens, tier, usd):
    row = bill(*tokens)
    assert row["tier_min_prompt_tokens"] == tier and row["cost_usd"] == pytest.approx(usd)


def test_cache_writes_at_their_retention_and_a_missing_price_billed_as_input():
    assert bill(500, 300, written=10_000)["cost_usd"] == pytest.approx(0.0375 + 0.0015 + 0.0045)
    assert bill(500, 300, written=10_000, ttl="1h")["cost_usd"] == pytest.approx(0.06 + 0.0015 + 0.0045)
    row = bill(1_000, 0, written=250_000, ttl="1h")  # above the tier, where no 1-hour price is listed
    assert row["cache_write_usd"] == pytest.approx(250_000 * 6.0 / 1e6) and "no 1h cache-write price" in row["note"]


def test_storage_is_billed_per_cached_token_hour_and_an_unpriced_output_leaves_the_cost_blank():
    google = SCHEDULE.head(1).with_columns(pl.lit(4.5).alias("cache_storage_usd_per_mtok_hour"))
    assert bill(0, 0, cached=100_000, hours=2.0, schedule=google)["cache_storage_usd"] == pytest.approx(0.9)
    no_output = SCHEDULE.head(1).with_columns(pl.lit(None, pl.Float64).alias("output_usd_per_mtok"))
    assert bill(10, 10, schedule=no_output)["cost_usd"] is None
    assert bill(10, 0, schedule=no_output)["cost_usd"] == pytest.approx(3e-5)
