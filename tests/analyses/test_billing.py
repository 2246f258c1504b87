"""The bill in pieces: a workload billed a few requests at a time is the same bill as in one piece."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from econ.analyses import billing
from econ.analyses.cost_command import read_billing


def _workload(n: int) -> pl.DataFrame:
    """Prompts on both sides of the 128k and 272k tiers, cache reads and writes, and times in and out of DeepSeek's
    off-peak hours (data/billing_windows.csv)."""
    start = datetime(2026, 12, 1, tzinfo=UTC)
    return pl.DataFrame(
        {
            "request": range(n),
            "input_tokens": [1_000 + 13_001 * i for i in range(n)],
            "cached_input_tokens": [(i * 5_003) % 40_000 for i in range(n)],
            "cache_write_tokens": [(i * 701) % 3_000 for i in range(n)],
            "output_tokens": [100 + 37 * i for i in range(n)],
            "cache_ttl": ["5m" if i % 3 else "1h" for i in range(n)],
            "cache_storage_hours": [0.0] * n,
            "requests": [1 + i % 4 for i in range(n)],
            "at": [None if i % 5 == 0 else start + timedelta(minutes=97 * i) for i in range(n)],
        },
        schema_overrides={"at": pl.Datetime("us", "UTC")},
    )


@pytest.mark.parametrize("model", ["deepseek-v4-pro", "gpt-5.6-luna", "claude-sonnet-4.5"])
def test_a_workload_billed_in_pieces_is_the_bill_in_one_piece(real_db, monkeypatch, model):
    tables = read_billing(real_db).on(date(2026, 11, 30))
    requests = _workload(40)
    whole = billing.bill(tables, model=model, requests=requests)
    whole_each = billing.bill(tables, model=model, requests=requests, by_request=True)
    monkeypatch.setattr(billing, "CHUNK_REQUESTS", 7)
    pieces = billing.bill(tables, model=model, requests=requests)
    pieces_each = billing.bill(tables, model=model, requests=requests, by_request=True)
    assert whole.schedules.height > 1 and whole.schedules["requests"].max() == requests["requests"].sum()
    for a, b in ((whole, pieces), (whole_each, pieces_each)):
        key = ["schedule", *(["request"] if "request" in a.schedules.columns else [])]
        # sums added in another order: equal to rounding; everything else exactly
        assert_frame_equal(a.schedules.sort(key), b.schedules.sort(key), rel_tol=1e-12, abs_tol=0.0)
        assert a.notes == b.notes
