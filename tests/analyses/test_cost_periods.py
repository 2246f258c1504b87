"""The price periods of econ cost's dated workloads, and the bills of several periods added up per offer."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from econ.analyses.cost_periods import combine, period_starts

D = date


def test_days_between_two_price_or_rule_dates_share_a_period():
    history = pl.DataFrame({"from_date": [D(2026, 1, 1), D(2026, 3, 1)], "to_date": [D(2026, 3, 1), None]})
    rules = pl.DataFrame({"from_date": [D(2026, 2, 10)], "to_date": [None]}, schema_overrides={"to_date": pl.Date})
    days = pl.Series([D(2026, 2, 9), D(2026, 1, 5), D(2026, 2, 10), D(2026, 3, 1), D(2025, 12, 1), D(2026, 2, 28)])
    got = period_starts(days, history, rules).to_list()
    assert got == [D(2026, 1, 1), D(2026, 1, 1), D(2026, 2, 10), D(2026, 3, 1), D(2025, 12, 1), D(2026, 2, 10)]


def _schedule(source, cost, *, rank=1, status="billed", requests=1, refusal=None, row="r"):
    return pl.DataFrame(
        {
            "schedule": [f"{source}|p|m|standard"],
            "offer": ["p|m|standard"],
            "offer_rank": [rank],
            "source": [source],
            "provider": ["p"],
            "model": ["m"],
            "variant": ["standard"],
            "is_first_party": [True],
            "requests": [requests],
            "tier_min_prompt_tokens": [0],
            "max_input_tokens": [1000],
            "cost_usd": [cost],
            **{c: [cost] for c in ("input_usd", "cached_input_usd", "cache_write_usd", "output_usd")},
            "cache_storage_usd": [0.0],
            "price_row": [row],
            "refusal": [refusal],
            "status": [status],
            "conflict": [None],
            "note": [""],
        },
        schema_overrides={"refusal": pl.String, "conflict": pl.String, "cost_usd": pl.Float64},
    )


def test_the_offer_bills_what_each_period_held_and_a_refusal_in_one_period_refuses_it():
    a, b = D(2026, 7, 20), D(2026, 8, 5)
    parts = [(a, a, _schedule("hand", 2.0, requests=2, row="h")), (b, b, _schedule("genai", 3.0, requests=3, row="g"))]
    (row,) = combine(parts, 5).iter_rows(named=True)
    assert row["cost_usd"] == pytest.approx(5.0) and row["status"] == "billed" and row["source"] == "hand, genai"
    assert row["note"] == "priced 2026-07-20 by h, 2026-08-05 by g"
    parts[1] = (b, b, _schedule("genai", None, requests=3, status="refused", refusal="prompt above the limit"))
    (row,) = combine(parts, 5).iter_rows(named=True)
    assert row["status"] == "refused" and row["cost_usd"] is None and row["refusal"] == "prompt above the limit"
    (row,) = (
        combine(parts[:1] + [(b, b, _schedule("x", 1.0, rank=2, status="superseded"))], 5)
        .filter(pl.col("status") != "superseded")
        .iter_rows(named=True)
    )
    assert row["status"] == "refused" and row["refusal"] == "no price for 3 of the 5 requests (priced only 2026-07-20)"
